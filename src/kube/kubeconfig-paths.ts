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
 *
 * Every path is made absolute by the one rule of src/paths.ts (absoluteFile: `~`, then the run's
 * cwd), as the coordinates' files are; a run's KUBE_CONFIG_PATH arrives absolute already.
 */
import { delimiter } from 'node:path';
import { ConfigError } from '../errors.js';
import { absoluteFile, type PathPlace } from '../paths.js';

export interface KubeconfigPaths {
  /** Absolute (src/paths.ts absoluteFile). */
  readonly files: readonly string[];
  /** KUBE_CONFIG_PATH: the one file must exist. KUBECONFIG's missing files are skipped, as kubectl skips them. */
  readonly explicit: boolean;
  /** Where the paths came from, for messages: `env KUBE_CONFIG_PATH`. */
  readonly where: 'env KUBE_CONFIG_PATH' | 'env KUBECONFIG';
  /** The paths as messages name them: KUBE_CONFIG_PATH's absolute, KUBECONFIG's as given. */
  readonly shown: readonly string[];
}

export function kubeconfigPaths(place: PathPlace): KubeconfigPaths {
  const { env } = place;
  if (env.KUBE_CONFIG_PATH) {
    const file = absolute(env.KUBE_CONFIG_PATH, place, 'env KUBE_CONFIG_PATH');
    return { files: [file], explicit: true, where: 'env KUBE_CONFIG_PATH', shown: [file] };
  }
  const given = [...new Set((env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== ''))];
  if (given.length > 0) return { files: given.map((f) => absolute(f, place, 'env KUBECONFIG')), explicit: false, where: 'env KUBECONFIG', shown: given };
  throw new ConfigError('No kubeconfig for the cluster.', [{ where: 'env KUBE_CONFIG_PATH', message: 'is not set (nor KUBECONFIG)' }], {
    hint: 'Set KUBE_CONFIG_PATH to the kubeconfig of the cluster (the same file the apply uses).',
  });
}

function absolute(text: string, place: PathPlace, where: string): string {
  const r = absoluteFile(text, place);
  if (!r.ok) throw new ConfigError('The kubeconfig path cannot be expanded.', [{ where, message: r.problem }]);
  return r.path;
}
