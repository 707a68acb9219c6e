/**
 * A failed Kubernetes API request of deploy's own, in deploy's words: shared by the full client
 * (kube-api.ts) and the fast reads of `deploy status` and the check (kube-read.ts), without
 * loading @kubernetes/client-node. Both throw the answer as `{code|statusCode, body}` (the
 * client's ApiException adds `headers`); the class and the advice come from that answer's
 * Status (src/contract/api/api-status.ts), never from the words of its message.
 */
import { ToolError } from '../errors.js';
import { DeadlineError, statusCode } from '../deadline.js';
import { adviseApiFailure, apiFailureOf, apiNoAnswer, type ApiAdvice, type ApiFailure, type EditedField } from '../contract/api/api-status.js';

/**
 * The API failure a client error carries: an answer (a status code, the Status body), or no
 * answer within the client's deadline (DeadlineError; the watch's and AbortSignal.timeout's
 * TimeoutError). Undefined for anything else: a refused connection, an unknown host, a TLS
 * failure, an abort by the operator.
 */
export function apiFailureOfError(err: unknown): ApiFailure | undefined {
  const e = err as { body?: unknown; headers?: unknown; name?: unknown; message?: unknown } | undefined;
  const code = statusCode(err);
  if (code !== undefined) return apiFailureOf(code, e?.body, retryAfterOf(e?.headers));
  if (err instanceof DeadlineError || e?.name === 'TimeoutError') return apiNoAnswer(String(e?.message ?? err));
  return undefined;
}

function retryAfterOf(headers: unknown): string | undefined {
  const h = headers as Record<string, unknown> | undefined;
  const v = h?.['retry-after'] ?? h?.['Retry-After'];
  return typeof v === 'string' ? v : undefined;
}

/** What happened and what to do, for a failed request; `edits`: the hand edits deploy found, to name an invalid field's writer. */
export function adviseApiError(err: unknown, edits: readonly EditedField[] = []): ApiAdvice | undefined {
  const failure = apiFailureOfError(err);
  return failure && adviseApiFailure(failure, edits);
}

/** What the API server answered, briefly: `HTTP 422: <the Status's message>` (for logs and one-line reports). */
export function describeApiError(err: unknown): string {
  const failure = apiFailureOfError(err);
  const code = failure?.code;
  const message = (failure?.noAnswer ? '' : failure?.message) || (err as { message?: string } | undefined)?.message || String(err);
  return `${code ? `HTTP ${code}: ` : ''}${message}`.split('\n')[0]!.slice(0, 500);
}

/** Turns a failed request into the tool error of the rollout (exit code 3), with its class's advice. */
export function apiToolError(what: string, server: string, err: unknown): ToolError {
  const advice = adviseApiError(err);
  if (advice) return new ToolError(`${what} failed against the API server ${server}: ${advice.what}`, { hint: advice.hint, cause: err });
  return new ToolError(`${what} failed against the API server ${server}: ${describeApiError(err)}`, {
    hint: 'Check that the cluster is up and KUBE_CONFIG_PATH points at it (`kubectl --kubeconfig "$KUBE_CONFIG_PATH" get nodes`).',
    cause: err,
  });
}
