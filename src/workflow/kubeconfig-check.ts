/** The kubeconfig every plan/apply/destroy needs, checked before anything else of the run. */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { ConfigError } from '../errors.js';

/** The kubeconfig every plan/apply/destroy needs: set and a readable file, or exit 2 naming it. */
export async function requireKubeconfig(kubeconfig: string | undefined): Promise<string> {
  if (!kubeconfig) {
    throw new ConfigError('no kubeconfig for the cluster', [{ where: 'KUBE_CONFIG_PATH (or --kubeconfig)', message: 'is not set: name the kubeconfig file of the cluster' }]);
  }
  const readable = await access(kubeconfig, constants.R_OK).then(() => stat(kubeconfig).then((s) => s.isFile()), () => false);
  if (!readable) {
    throw new ConfigError('the kubeconfig of the cluster cannot be read', [{ where: 'KUBE_CONFIG_PATH (or --kubeconfig)', message: `${kubeconfig} is not a readable file` }], {
      hint: 'point KUBE_CONFIG_PATH at the kubeconfig of the cluster (for the local cluster: npm run cluster:up prints it)',
    });
  }
  return kubeconfig;
}
