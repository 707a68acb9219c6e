/**
 * The one environment of a target's tofu commands and of the steps inside them
 * (target-environment.ts): rendered from typed values, the backend's TF_HTTP_* from its
 * coordinates, the lock's address over the state's, the run's values for the rollout step.
 */
import { describe, expect, it } from 'vitest';
import { httpBackend } from '../../../../src/config/backend-coordinates.js';
import { parseDuration } from '../../../../src/config/duration.js';
import { targetEnvironment } from '../../../../src/workflow/target/target-environment.js';

describe('targetEnvironment', () => {
  const inputs = {
    env: { PATH: '/bin', TF_HTTP_ADDRESS: 'http://operator.test', KUBE_CONFIG_PATH: 'relative.kubeconfig' },
    toolsEnv: { DEPLOY_SKOPEO: '/opt/skopeo' },
    backend: { http: httpBackend('TF_HTTP_ADDRESS', 'http://state.test/g1-all', { lockAddress: 'http://state.test/lock/g1-all', username: 'ops', password: 'pw', tofuSettings: { TF_HTTP_RETRY_MAX: '3' } }), embedded: false },
    lockedAddress: 'http://state.test/g1-all?ID=abc',
    spireEnv: { SSH_PRIVATE_KEY_FILE: '/run/key' },
    registryCaEnv: { DEPLOY_REGISTRY_CERT_DIR: '/run/certs' },
    kubeconfigFile: '/abs/admin.kubeconfig',
    deployBin: '/run/deploy',
    runDir: '/run',
    model: { rolloutTimeout: parseDuration('5m')!, soak: undefined },
  };

  it('GIVEN the typed values THEN tofu and the rollout step get them, the lock\'s address and the absolute kubeconfig over the operator\'s', () => {
    expect(targetEnvironment(inputs)).toEqual({
      PATH: '/bin',
      DEPLOY_SKOPEO: '/opt/skopeo',
      TF_HTTP_ADDRESS: 'http://state.test/g1-all?ID=abc',
      TF_HTTP_LOCK_ADDRESS: 'http://state.test/lock/g1-all',
      TF_HTTP_USERNAME: 'ops',
      TF_HTTP_PASSWORD: 'pw',
      TF_HTTP_RETRY_MAX: '3',
      SSH_PRIVATE_KEY_FILE: '/run/key',
      DEPLOY_REGISTRY_CERT_DIR: '/run/certs',
      KUBE_CONFIG_PATH: '/abs/admin.kubeconfig',
      DEPLOY_BIN: '/run/deploy',
      DEPLOY_RUN_DIR: '/run',
      DEPLOY_ROLLOUT_TIMEOUT: '300s',
      DEPLOY_SOAK: '0s',
      TF_IN_AUTOMATION: '1',
      DEPLOY_PROGRESS: 'json',
    });
  });
});
