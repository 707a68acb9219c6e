/**
 * The plan of a destroy, which must need neither the registry nor the tags (issue 17).
 *
 * `tofu plan -destroy` first refreshes the state with a normal plan, and that reads every data
 * source of the graph (OpenTofu internal/tofu/context_plan.go, destroyPlan): the digest of each
 * node, through `skopeo inspect` of its tag. With the registry stopped or a tag deleted, that
 * read fails and so would the destroy, though a destroy deletes only what the state holds and
 * the digests matter only to what an apply makes. (A failed postcondition, like the one on the
 * RuntimeClass read, is only a warning in that refresh: same file, `PreDestroyRefresh`.)
 *
 * So: plan the destroy as usual, and when the refresh fails at the digest reads and nowhere
 * else, plan it again with `-refresh=false`, from the state as it is. Every other failure
 * (the API server, the spire node's reads, which must stop a destroy before it changes
 * anything) still fails the destroy. The price of the second plan: an object deleted by hand
 * since the last apply is not noticed, and its delete is attempted; the provider treats an
 * object already gone as deleted.
 */
import type { PlanResult, TofuError } from '../../tools/tofu/tofu.js';
import { nodeResourceOf, resourceNameOf } from '../../contract/graph/graph-ids.js';

/** The addresses of the digest reads that failed, when every error of `err` is one; else undefined. */
export function failedOnlyAtDigests(err: unknown): string[] | undefined {
  const diagnostics = (err as Partial<TofuError> | undefined)?.diagnostics;
  if (!Array.isArray(diagnostics)) return undefined;
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length === 0) return undefined;
  const isDigest = (address: string | undefined) => {
    if (address === undefined || !address.startsWith('data.external.')) return false;
    const r = nodeResourceOf(resourceNameOf(address));
    return r?.construct === 'image' && r.part === 'digest';
  };
  return errors.every((d) => isDigest(d.address)) ? [...new Set(errors.map((d) => d.address!))] : undefined;
}

/**
 * `plan(true)`, and when it fails only at the digest reads, `plan(false)` (no refresh); says
 * which through `progress`.
 */
export async function planDestroy(plan: (refresh: boolean) => Promise<PlanResult>, progress: (line: string) => void): Promise<PlanResult> {
  try {
    return await plan(true);
  } catch (err) {
    const digests = failedOnlyAtDigests(err);
    if (digests === undefined) throw err;
    const nodes = digests.map((a) => nodeResourceOf(resourceNameOf(a))!.node).sort();
    progress(
      `the registry did not give the digest of ${nodes.join(', ')} (registry stopped or tag deleted): a destroy does not need it, so it is planned from the state without refreshing it (tofu plan -destroy -refresh=false)`,
    );
    return plan(false);
  }
}
