/**
 * What a resource name of the synthesized graph says about its node. CDKTF names a resource
 * after its construct path: stacks/ makes `image-<node>_<part>_<hash>` (push, digest) and
 * `node-<node>_<part>_<hash>` (machine-id, state, account, deployment, rollout).
 */

const NODE_RESOURCE = /^(image|node)-([a-z0-9-]+)_([a-z-]+)_[0-9A-F]{8}$/;

export interface NodeResource {
  readonly construct: 'image' | 'node';
  readonly node: string;
  /** The construct id inside the node's construct: `push`, `digest`, `state`, `deployment`, ... */
  readonly part: string;
}

/** The node and part a resource name belongs to, or undefined for a resource of the target. */
export function nodeResourceOf(name: string): NodeResource | undefined {
  const m = NODE_RESOURCE.exec(name);
  return m ? { construct: m[1] as 'image' | 'node', node: m[2]!, part: m[3]! } : undefined;
}

/** The last step of an address (`data.external.image-web_digest_0A1B2C3D` -> its name). */
export function resourceNameOf(address: string): string {
  return address.split('.').pop() ?? address;
}
