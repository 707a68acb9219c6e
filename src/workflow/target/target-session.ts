/**
 * One target's session: its graph written, a run directory for the rollout steps' reports,
 * the SPIRE key and the registry's CA staged, the state backend opened and the run's lock
 * taken; then the environment every tofu command of the target runs in (target-environment.ts,
 * the one place it is rendered). All of it is closed
 * as one, whatever the run did: the lock released, the backend closed, the key's copy and the
 * run directory removed.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stateDir } from '../../paths.js';
import type { TargetGraph } from '../../graph/synth.js';
import type { TargetBackend } from '../../state/embedded.js';
import type { TofuOptions } from '../../tools/tofu/tofu.js';
import { writeDeployWrapper } from './deploy-wrapper.js';
import { stageRegistryCa } from './registry-ca-dir.js';
import { targetEnvironment } from './target-environment.js';
import type { TargetParts } from './target-wiring.js';
import type { TargetRunOptions } from './target-types.js';

export interface TargetSession {
  /** The target's graph directory (cdk.tf.json), written for this run. */
  readonly graphDir: string;
  /** The graph as written, kept in memory (its text and its document): never read back from the file. */
  readonly graph: TargetGraph;
  /** Where the rollout steps write their reports (DEPLOY_RUN_DIR); removed when the session ends. */
  readonly runDir: string;
  /** The state's backend, typed: its addresses, methods and credentials, and whether this process serves it. */
  readonly backend: TargetBackend;
  /** What every tofu command of the target runs with but its events' handler: the graph, the environment, the lock held. */
  readonly tofu: Omit<TofuOptions, 'onEvent'>;
}

/** Opens the target's session, runs `use` in it, and closes it, also when `use` throws. */
export async function withTargetSession<T>(parts: Pick<TargetParts, 'writeGraph' | 'stageSpireAccess' | 'openBackend' | 'takeRunLock'>, opts: TargetRunOptions, use: (session: TargetSession) => Promise<T>): Promise<T> {
  const { model, mode, logger, signal } = opts;
  const graph = await parts.writeGraph(model, opts.graphsDir);
  const graphDir = graph.dir;
  const runsDir = join(stateDir(opts.env), 'runs');
  await mkdir(runsDir, { recursive: true });
  const runDir = await mkdtemp(join(runsDir, `${model.stateKey}-`));
  let spire: Awaited<ReturnType<TargetParts['stageSpireAccess']>> | undefined;
  let backend: Awaited<ReturnType<TargetParts['openBackend']>> | undefined;
  let lock: Awaited<ReturnType<TargetParts['takeRunLock']>> | undefined;
  try {
    spire = await parts.stageSpireAccess({ spire: model.spire, keyFile: opts.sshPrivateKeyFile, env: opts.env });
    // the registry's CA for the graph's skopeo steps (K8S_REGISTRY_CA_FILE), a copy in the run's directory
    const registryCa = await stageRegistryCa(model.registryCaFile, runDir);
    backend = await parts.openBackend(opts.backend, model.stateKey, logger, signal);
    // the run's own lock, for plan, apply and the rollout steps alike (see state/run-lock.ts)
    lock = await parts.takeRunLock({
      backend: backend.http,
      key: model.stateKey,
      operation: `deploy ${mode}`,
      who: opts.who,
      held: opts.held,
      signal,
      logger,
      onWait: (holder) => opts.progress(`[${model.target}] waiting up to 60s for the state lock of ${model.stateKey}: ${holder}`),
    });
    // the one environment of the target's tofu commands and of the steps inside them
    const env = targetEnvironment({
      env: opts.env,
      toolsEnv: opts.tools.env,
      backend,
      lockedAddress: lock.tofuAddress,
      spireEnv: spire.env,
      registryCaEnv: registryCa,
      kubeconfigFile: opts.kube.file,
      deployBin: await writeDeployWrapper(runDir),
      runDir,
      model,
    });
    return await use({ graphDir, graph, runDir, backend: { http: backend.http, embedded: backend.embedded }, tofu: { dir: graphDir, env, signal, tofuPath: opts.tools.tofu, lockHeld: true } });
  } finally {
    await lock?.release();
    await backend?.close();
    await spire?.close();
    await rm(runDir, { recursive: true, force: true }).catch(() => {});
  }
}
