/**
 * The words of a failed Kubernetes API request: shared by the full client (kube-api.ts) and the
 * fast reads of `deploy status` and the check (kube-read.ts), without loading
 * @kubernetes/client-node.
 */
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { statusCode } from '../deadline.js';
import { FORBIDDEN_HINT, forbiddenIn, forbiddenWords } from '../contract/forbidden.js';

/** A Status body's message (meta/v1 Status), when the body is one. */
const statusMessageSchema = z.looseObject({ message: z.string().optional() });

/** What the API server answered, briefly (ApiException carries the Status body). */
export function describeApiError(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  let body = '';
  if (typeof e?.body === 'string') {
    let status: unknown;
    try {
      status = JSON.parse(e.body);
    } catch {
      status = undefined;
    }
    const parsed = statusMessageSchema.safeParse(status);
    body = (parsed.success ? parsed.data.message : undefined) ?? e.body;
  } else if (e?.body && typeof e.body === 'object') body = (e.body as { message?: string }).message ?? '';
  const code = statusCode(err);
  return `${code ? `HTTP ${code}: ` : ''}${body || e?.message || String(err)}`.split('\n')[0]!.slice(0, 500);
}

/** Turns a failed request into the tool error of the rollout (exit code 3). */
export function apiToolError(what: string, server: string, err: unknown): ToolError {
  const refused = statusCode(err) === 403 ? forbiddenIn(describeApiError(err)) : [];
  if (refused.length > 0) {
    // a 403: the permission the identity lacks, as tofu's are said (src/contract/forbidden.ts)
    return new ToolError(`${what} failed against the API server ${server}: ${refused.map(forbiddenWords).join('; ')}`, { hint: FORBIDDEN_HINT, cause: err });
  }
  return new ToolError(`${what} failed against the API server ${server}: ${describeApiError(err)}`, {
    hint: 'Check that the cluster is up and KUBE_CONFIG_PATH points at it (`kubectl --kubeconfig "$KUBE_CONFIG_PATH" get nodes`).',
    cause: err,
  });
}
