/**
 * The words of a failed Kubernetes API request, and where the kubeconfig is: shared by the
 * full client (kube-api.ts) and the fast list reads of `deploy status` (kube-read.ts), without
 * loading @kubernetes/client-node.
 */
import { ConfigError, ToolError } from '../errors.js';
import { statusCode } from '../deadline.js';

/** KUBE_CONFIG_PATH (the variable the OpenTofu kubernetes provider reads too), else KUBECONFIG's first file. */
export function kubeconfigFile(env: NodeJS.ProcessEnv): string {
  const file = env.KUBE_CONFIG_PATH || env.KUBECONFIG?.split(':')[0];
  if (!file) {
    throw new ConfigError('No kubeconfig for the cluster.', [
      { where: 'env KUBE_CONFIG_PATH', message: 'is not set (nor KUBECONFIG)' },
    ], { hint: 'Set KUBE_CONFIG_PATH to the kubeconfig of the cluster (the same file the apply uses).' });
  }
  return file;
}

/** What the API server answered, briefly (ApiException carries the Status body). */
export function describeApiError(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  let body = '';
  if (typeof e?.body === 'string') {
    try {
      body = (JSON.parse(e.body) as { message?: string }).message ?? e.body;
    } catch {
      body = e.body;
    }
  } else if (e?.body && typeof e.body === 'object') body = (e.body as { message?: string }).message ?? '';
  const code = statusCode(err);
  return `${code ? `HTTP ${code}: ` : ''}${body || e?.message || String(err)}`.split('\n')[0]!.slice(0, 500);
}

/** Turns a failed request into the tool error of the rollout (exit code 3). */
export function apiToolError(what: string, server: string, err: unknown): ToolError {
  return new ToolError(`${what} failed against the API server ${server}: ${describeApiError(err)}`, {
    hint: 'Check that the cluster is up and KUBE_CONFIG_PATH points at it (`kubectl --kubeconfig "$KUBE_CONFIG_PATH" get nodes`).',
    cause: err,
  });
}
