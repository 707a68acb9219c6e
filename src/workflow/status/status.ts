/**
 * `deploy status`: per target, what its state holds (read from the backend directly: no tofu,
 * no lock taken) against what the cluster runs (two list requests per namespace), per node.
 * Read-only. The exit code says whether every node is ready on the image its state holds.
 */
import { requireAbsoluteFile } from '../../config/file-coordinate.js';
import type { BackendCoordinates } from '../../config/backend-coordinates.js';
import { readGroupPlan, targetsOf } from '../../config/load.js';
import { names } from '../../config/names.js';
import { chooseTargets, EVERY_TARGET } from '../../config/target-choice.js';
import { ConfigError, DeployError, ExitCode, ToolError } from '../../errors.js';
import type { StateSource } from '../../state/source/state-source.js';
import type { StateSummary } from '../../state/store/store.js';
import type { RunContext } from '../run-context.js';
import { openReadOnlySource } from './status-state-source.js';
import { readStateFacts } from './nodes-in-state.js';
import { judgeNodes, type NodeStatus } from './status-judge.js';
import { requireStateNamespace, type NamespaceCheck } from './namespace-check.js';

export interface StatusInputs {
  plan: string;
  target?: string[];
  kubeconfig?: string | undefined;
  /** The namespace the targets were applied in (--namespace, K8S_NAMESPACE): checked against each state. */
  namespace?: NamespaceCheck | undefined;
  /** Where the states are (TF_HTTP_ADDRESS, else the embedded backend's data directory). */
  backend: BackendCoordinates;
}

/** The state's lock: `free`, `held` (by whom), or `unknown` (a backend that does not list its states). */
export type LockView =
  | { readonly state: 'free' }
  | { readonly state: 'unknown' }
  | { readonly state: 'held'; readonly id: string; readonly who: string | null; readonly operation: string | null; readonly created: string | null };

export interface TargetStatus {
  readonly target: string;
  readonly stateKey: string;
  readonly namespace: string | null;
  readonly serial: number | null;
  /** When the backend stored the newest version (null: the backend does not list its states). */
  readonly updated: string | null;
  readonly lock: LockView;
  readonly nodes: readonly NodeStatus[];
  /** Nodes of the plan file in this target that the state does not hold: not applied yet. */
  readonly notApplied: readonly string[];
}

export interface StatusResult {
  /** 0: every node ready and as its state holds it; ExitCode.unhealthy otherwise. */
  readonly exitCode: number;
  readonly group: string;
  /** Where the states were read (a data directory or the backend's address). */
  readonly where: string;
  readonly cluster: string;
  readonly targets: readonly TargetStatus[];
  /** `--target '*'`: the targets with no state (never applied, or destroyed). */
  readonly notDeployed: readonly string[];
}

/** How long `deploy status` waits for the API server: a health check must answer fast. */
const STATUS_REQUEST_MS = 5_000;

export async function readStatus(inputs: StatusInputs, ctx: RunContext): Promise<StatusResult> {
  const planFile = requireAbsoluteFile(inputs.plan, ctx, '--plan');
  const plan = await readGroupPlan(planFile);
  const known = targetsOf(plan);
  const { chosen, issues } = chooseTargets(known, inputs.target, plan.group);
  if (issues.length > 0) throw new ConfigError(`unknown target for group "${plan.group}"`, issues, { hint: 'name a target of the plan (or leave --target out for "all")' });
  // the one rule for a named file (src/paths.ts absoluteFile), for the flag and the variable alike
  const kubeconfigText = inputs.kubeconfig || ctx.env.KUBE_CONFIG_PATH || undefined;
  const env = kubeconfigText === undefined ? ctx.env : { ...ctx.env, KUBE_CONFIG_PATH: requireAbsoluteFile(kubeconfigText, ctx, inputs.kubeconfig ? '--kubeconfig' : 'KUBE_CONFIG_PATH') };
  // started now, so it overlaps the state reads; the full client only for a kubeconfig the
  // fast reads do not cover (an auth-provider, a socks5 proxy: src/kube/kube-read.ts)
  const apiReady = Promise.all([import('../../kube/kube-read.js'), import('../../kube/kubeconfig.js')]).then(async ([r, { openKubeAccess }]) => {
    // the kubeconfig resolved once, for the fast client or the full one
    const access = openKubeAccess({ cwd: ctx.cwd, env });
    const lister = await r.openKubeLister(access, { requestMs: STATUS_REQUEST_MS, attempts: 2 });
    if (lister) return lister;
    const k = await import('../../kube/kube-api.js');
    return k.createKubeApi(k.loadKubeConfig(access.kubeconfig), { requestMs: STATUS_REQUEST_MS, readAttempts: 2 });
  });
  apiReady.catch(() => {});

  const source = openReadOnlySource(inputs.backend, ctx.signal);
  try {
    // one request for every lock and newest version; a backend that cannot list says nothing of its locks
    const [listed, bodies] = await Promise.all([
      source.list().catch(() => undefined),
      Promise.all(chosen.map((t) => readState(source, names.stateKey(plan.group, t)))),
    ]);
    const deployed = chosen.flatMap((target, i) => {
      const body = bodies[i];
      const stateKey = names.stateKey(plan.group, target);
      const facts = body && readStateFacts(body);
      if (body && !facts) {
        throw new ToolError(`the state ${stateKey} in ${source.where} is not a state of deploy's graphs`, { hint: '`deploy state show ' + stateKey + '` prints it; check TF_HTTP_ADDRESS names the backend of this group' });
      }
      if (facts) requireStateNamespace(inputs.namespace, target, stateKey, facts.namespace, source.where);
      return facts && facts.nodes.length > 0 ? [{ target, stateKey, facts }] : [];
    });
    const notDeployed = chosen.filter((t) => !deployed.some((d) => d.target === t));
    const everyTarget = inputs.target?.includes(EVERY_TARGET) ?? false;
    if (deployed.length === 0 || (!everyTarget && notDeployed.length > 0)) {
      const keys = notDeployed.map((t) => names.stateKey(plan.group, t));
      throw new DeployError(`nothing deployed: no state ${keys.join(', ')} with a node in ${source.where}`, ExitCode.usage, {
        hint: `apply the target first (deploy apply --target ${notDeployed[0]}), or read the backend where it was applied: TF_HTTP_ADDRESS (the shared backend; a CD job must set it) or DEPLOY_STATE_DIR (the embedded one); \`deploy state list\` shows what is kept there`,
      });
    }
    const api = await apiReady;
    const now = Date.now();
    const { readClusterNodes } = await import('./status-cluster.js');
    const targets = await Promise.all(
      deployed.map(async ({ target, stateKey, facts }): Promise<TargetStatus> => {
        const namespace = facts.namespace ?? null;
        const cluster = namespace ? await readClusterNodes(api, namespace) : new Map();
        const summary = listed?.find((s) => s.key === stateKey);
        const inPlan = Object.entries(plan.nodes)
          .filter(([n, node]) => !(plan.submission?.turnsOff ?? []).includes(n) && (target === 'all' || node.apps.includes(target)))
          .map(([n]) => n);
        return {
          target,
          stateKey,
          namespace,
          serial: facts.serial ?? null,
          updated: summary?.latest?.created ?? null,
          lock: lockView(listed, summary),
          nodes: judgeNodes(plan.group, facts.nodes, cluster, now),
          notApplied: inPlan.filter((n) => !facts.nodes.some((s) => s.node === n)).sort(),
        };
      }),
    );
    const healthy = targets.every((t) => t.nodes.every((n) => n.mark === 'ok'));
    return { exitCode: healthy ? ExitCode.ok : ExitCode.unhealthy, group: plan.group, where: source.where, cluster: api.server, targets, notDeployed: everyTarget ? notDeployed : [] };
  } finally {
    source.close();
  }
}

async function readState(source: StateSource, key: string): Promise<Buffer | undefined> {
  try {
    return await source.read(key);
  } catch (err) {
    if (err instanceof DeployError && err.exitCode === ExitCode.tool) {
      throw new ToolError(`cannot read the state ${key} from ${source.where}: ${err.message}`, { hint: 'check that the state backend runs and TF_HTTP_ADDRESS (and TF_HTTP_USERNAME/TF_HTTP_PASSWORD) name it', cause: err });
    }
    throw err;
  }
}

function lockView(listed: readonly StateSummary[] | undefined, summary: StateSummary | undefined): LockView {
  if (!listed) return { state: 'unknown' };
  const lock = summary?.lock;
  if (!lock) return { state: 'free' };
  return { state: 'held', id: lock.ID, who: lock.Who ?? null, operation: lock.Operation ?? null, created: lock.Created ?? null };
}
