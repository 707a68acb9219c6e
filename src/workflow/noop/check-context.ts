/** What the verified no-op check (verdict.ts) and its fingerprint (fingerprint.ts) read a target with. */
import type { TargetModel } from '../../config/target-model.js';
import type { RunKubeconfig } from '../../kube/kubeconfig.js';
import type { TargetBackend } from '../../state/embedded.js';
import type { RunTools } from '../../tools/preflight.js';

export interface NoopCheckContext {
  readonly model: TargetModel;
  readonly graphDir: string;
  readonly tools: RunTools;
  /** The run's kubeconfig, resolved once (its identity is part of the fingerprint). */
  readonly kube: RunKubeconfig;
  readonly env: NodeJS.ProcessEnv;
  /** The state's backend, typed (never read back from TF_HTTP_*). */
  readonly backend: TargetBackend;
  readonly signal: AbortSignal;
}
