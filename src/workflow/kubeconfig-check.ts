/**
 * The kubeconfig every plan/apply/destroy needs, checked before anything else of the run and
 * resolved once (src/kube/kubeconfig.ts resolveRunKubeconfig): every target of the run, and every
 * reader of a target (the objects' read, the fingerprint, the group's rollback), takes the value.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import type { RunKubeconfig } from '../kube/kubeconfig.js';
import type { PathPlace } from '../paths.js';

/**
 * The kubeconfig (`kubeconfig`: the coordinates' path, absolute already): set and a readable file,
 * or exit 2 naming it; then resolved once (a kubeconfig that cannot be used is said by its first
 * reader, as before: the check's full plan, tofu's provider).
 */
export async function requireKubeconfig(kubeconfig: string | undefined, place: PathPlace): Promise<RunKubeconfig> {
  if (!kubeconfig) {
    throw new ConfigError('no kubeconfig for the cluster', [{ where: 'KUBE_CONFIG_PATH (or --kubeconfig)', message: 'is not set: name the kubeconfig file of the cluster' }]);
  }
  const readable = await access(kubeconfig, constants.R_OK).then(() => stat(kubeconfig).then((s) => s.isFile()), () => false);
  if (!readable) {
    throw new ConfigError('the kubeconfig of the cluster cannot be read', [{ where: 'KUBE_CONFIG_PATH (or --kubeconfig)', message: `${kubeconfig} is not a readable file` }], {
      hint: 'point KUBE_CONFIG_PATH at the kubeconfig of the cluster (for the local cluster: npm run cluster:up prints it)',
    });
  }
  const { resolveRunKubeconfig } = await import('../kube/kubeconfig.js');
  return resolveRunKubeconfig(kubeconfig, place);
}
