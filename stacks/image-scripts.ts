/**
 * The shell that pushes a node's image and reads its digest, run by tofu (the push as a
 * null_resource's local-exec, the digest as an `external` data source). skopeo reads
 * REGISTRY_AUTH_FILE itself, so credentials never enter the graph; DEPLOY_SKOPEO is the skopeo
 * the run found (src/tools/discover.ts). The text is part of the graph: a change to it changes
 * every graph (test/unit/stacks/graph-scripts.test.ts pins it). These return the shell as it
 * runs; the constructs escape it for tofu's templates (tfEscape).
 */
import { shq } from '../src/contract/shell.js';

export interface PushedImage {
  /** The node's name, as the messages say it. */
  readonly name: string;
  /** The docker archive (absolute). */
  readonly archive: string;
  /** `<registry>/<namespace>/<node>:<tag>`. */
  readonly tagRef: string;
}

/** Copies the node's archive to its tag; a missing archive fails naming the node and what to do. */
export function pushScript(image: PushedImage, tlsVerify: boolean): string {
  const tls = tlsVerify ? '' : ' --dest-tls-verify=false';
  return [
    `archive=${shq(image.archive)}`,
    `if [ ! -r "$archive" ]; then echo "deploy: node ${image.name}: image archive $archive is missing or unreadable; build the node image, or fix image.archive in the group plan" >&2; exit 1; fi`,
    `exec "\${DEPLOY_SKOPEO:-skopeo}" copy --quiet --retry-times 3${tls} "docker-archive:$archive" ${shq(`docker://${image.tagRef}`)}`,
  ].join('\n');
}

/**
 * Prints `{"digest":"sha256:..."}` of the tag given as its first argument ($1): the protocol of
 * tofu's `external` data source (a JSON object of strings on stdout).
 */
export function digestScript(tlsVerify: boolean): string {
  const tls = tlsVerify ? '' : ' --tls-verify=false';
  return `exec "\${DEPLOY_SKOPEO:-skopeo}" inspect${tls} --format '{"digest":"{{.Digest}}"}' "docker://$1"`;
}

/** $0 of the digest read, as ps and error messages show it. */
export const DIGEST_PROGRAM_NAME = 'deploy-digest';
