/**
 * Which kubeconfig files deploy reads, in their order. Apart from kubeconfig.ts so that
 * api-error.ts (which the apply's run imports) names the files without loading a YAML parser.
 *
 * - KUBE_CONFIG_PATH: the OpenTofu kubernetes provider's `config_path`, the one file deploy
 *   hands to tofu, so the check, `deploy status` and the apply read the same file. The provider
 *   expands a leading `~` (go-homedir `Expand`) and makes it clientcmd's ExplicitPath: a missing
 *   file is an error (terraform-provider-kubernetes 2.38.0 kubernetes/provider.go
 *   initializeConfiguration; client-go tools/clientcmd/loader.go `Load`).
 * - else KUBECONFIG as kubectl reads it: every path (filepath.SplitList), duplicates dropped,
 *   empty entries skipped, missing files skipped (loader.go NewDefaultClientConfigLoadingRules).
 * - neither: an error. kubectl would read ~/.kube/config; deploy never picks up an operator's
 *   personal kubeconfig by default, since the apply (tofu's provider) would not read it either.
 */
import { delimiter, join } from 'node:path';
import { homedir } from 'node:os';
import { ConfigError } from '../errors.js';

export interface KubeconfigPaths {
  readonly files: readonly string[];
  /** KUBE_CONFIG_PATH: the one file must exist. KUBECONFIG's missing files are skipped, as kubectl skips them. */
  readonly explicit: boolean;
  /** Where the paths came from, for messages: `env KUBE_CONFIG_PATH`. */
  readonly where: 'env KUBE_CONFIG_PATH' | 'env KUBECONFIG';
}

export function kubeconfigPaths(env: NodeJS.ProcessEnv): KubeconfigPaths {
  if (env.KUBE_CONFIG_PATH) return { files: [expandHome(env.KUBE_CONFIG_PATH, env)], explicit: true, where: 'env KUBE_CONFIG_PATH' };
  const files = [...new Set((env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== ''))];
  if (files.length > 0) return { files, explicit: false, where: 'env KUBECONFIG' };
  throw new ConfigError('No kubeconfig for the cluster.', [{ where: 'env KUBE_CONFIG_PATH', message: 'is not set (nor KUBECONFIG)' }], {
    hint: 'Set KUBE_CONFIG_PATH to the kubeconfig of the cluster (the same file the apply uses).',
  });
}

/** go-homedir's Expand: `~` and `~/x` are the home directory ($HOME); `~user` is refused. */
function expandHome(path: string, env: NodeJS.ProcessEnv): string {
  if (!path.startsWith('~')) return path;
  if (path.length > 1 && path[1] !== '/') {
    throw new ConfigError('The kubeconfig path cannot be expanded.', [{ where: 'env KUBE_CONFIG_PATH', message: `${path}: only ~ and ~/... name a home directory` }]);
  }
  return join(env.HOME || homedir(), path.slice(1));
}
