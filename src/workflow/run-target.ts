/**
 * One target through OpenTofu: graph -> backend -> init -> plan -> (apply | destroy) ->
 * rollout reports. Each verb module calls this with its own mode; nothing here exits.
 */
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, DeployError, ExitCode } from '../errors.js';
import { SUBMISSION_OUTPUT } from '../contract/graph-outputs.js';
import type { Logger } from '../log.js';
import type { TargetModel } from '../config/target-model.js';
import { stateDir } from '../paths.js';
import { GRAPH_FILE } from '../contract/graph-ids.js';
import { writeGraph } from '../graph/synth.js';
import { takeRunLock, type RunLock } from '../state/run-lock.js';
import { openBackend } from './backend.js';
import { refuseClaimLosses } from './claim-guard.js';
import { planDestroy } from './destroy-plan.js';
import { planPushingGoneTags } from './missing-tags.js';
import { movedTags, type MovedTag } from './moved-tags.js';
import { nodeNamesFrom } from './node-names.js';
import { summarizePlan, type NodeSummary, type TargetSummary } from './plan-summary.js';
import { writeSelfWrapper } from './self.js';
import { graphPartOf } from '../contract/graph-ids.js';
import type { RunView } from './view/run-view.js';
import { PROGRESS_ENV, PROGRESS_JSON } from '../rollout/progress.js';
import type { RolloutReport } from '../rollout/report.js';
import { describeApiError } from '../kube/api-error.js';
import { names } from '../config/names.js';
import type { HandEdit } from './hand-edits.js';
import type { HeldLocks } from '../state/held-locks.js';
import { readTargetObjects, type TargetObjects } from './target-objects.js';
import { graphManifests, handEditsOf, readGraphText, undoHandEdits, type GraphDocument } from './undo-hand-edits.js';
import { requirePushArchives } from './push-archives.js';
import { markHeldBack, waitWords } from './held-back.js';
import { stageRegistryCa } from './registry-ca-dir.js';
import type { RunTools } from '../tools/preflight.js';

export type Mode = 'plan' | 'apply' | 'destroy';

/** tofu's warnings on a plan and apply with -target (the run says itself which nodes it planned alone). */
const TARGETING_WARNINGS = /^(Resource targeting is in effect|Applied changes may be incomplete)$/;

/** How long a failed or interrupted apply waits for its rollout steps' reports (they take < 1 s). */
const STEP_REPORT_GRACE_MS = 20_000;

export interface TargetRunOptions {
  readonly mode: Mode;
  readonly model: TargetModel;
  readonly graphsDir: string;
  /** The programs the run's preflight found (src/tools/preflight.ts). */
  readonly tools: RunTools;
  /** Checked by requireKubeconfig. */
  readonly kubeconfig: string;
  /**
   * SSH_PRIVATE_KEY_FILE as given (absolute), for the graph's SPIRE steps: staged to a new path
   * for this run only and handed to tofu in its environment, never to the graph (FR-017).
   */
  readonly sshPrivateKeyFile?: string | undefined;
  /** Nodes whose /var/lib claim this run may delete or replace (--allow-volume-replacement). */
  readonly allowVolumeReplacement?: ReadonlySet<string>;
  readonly env: NodeJS.ProcessEnv;
  /** Who the run is (DEPLOY_RUN_ID, else user@host:pid): the state lock's `Who`. */
  readonly who: string;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** Progress lines for people (stderr). */
  readonly progress: (line: string) => void;
  /** The run's view: the rows of each node and target, fed with tofu's events. */
  readonly view: RunView;
  /** Where the run's state lock is recorded while held (a second Ctrl-C names it). */
  readonly held?: HeldLocks | undefined;
}

export interface TargetRunResult {
  readonly summary: TargetSummary;
  /** apply: what each rollout step reported (empty when no pod changed). */
  readonly rollouts: readonly RolloutReport[];
  /** apply/destroy: whether tofu applied anything. */
  readonly applied: boolean;
  /** FR-009: plan and apply: the graph's output `node_names`, as planned or as applied. */
  readonly nodeNames?: readonly string[] | undefined;
  /** The exit code this target asks for (0, or a rollout's code). */
  readonly exitCode: number;
  readonly graphDir: string;
}

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

export async function runTarget(opts: TargetRunOptions): Promise<TargetRunResult> {
  const { model, mode, logger, signal } = opts;
  const tofu = await import('../tools/tofu.js');
  const tofuPath = opts.tools.tofu;
  const graphDir = await writeGraph(model, opts.graphsDir);
  const runsDir = join(stateDir(opts.env), 'runs');
  await mkdir(runsDir, { recursive: true });
  const runDir = await mkdtemp(join(runsDir, `${model.stateKey}-`));
  const { stageSpireAccess } = await import('../spire/stage-key.js');
  let spire: Awaited<ReturnType<typeof stageSpireAccess>> | undefined;
  let backend: Awaited<ReturnType<typeof openBackend>> | undefined;
  let lock: RunLock | undefined;
  try {
    spire = await stageSpireAccess({ spire: model.spire, keyFile: opts.sshPrivateKeyFile, env: opts.env });
    // the registry's CA for the graph's skopeo steps (K8S_REGISTRY_CA_FILE), a copy in the run's directory
    const registryCa = await stageRegistryCa(model.registryCaFile, runDir);
    backend = await openBackend(opts.env, model.stateKey, logger, signal);
    // the run's own lock, for plan, apply and the rollout steps alike (see state/run-lock.ts)
    lock = await takeRunLock({
      backendEnv: backend.env,
      key: model.stateKey,
      operation: `deploy ${mode}`,
      who: opts.who,
      held: opts.held,
      signal,
      logger,
      onWait: (holder) => opts.progress(`[${model.target}] waiting up to 60s for the state lock of ${model.stateKey}: ${holder}`),
    });
    const env = {
      // the operator's environment, whole (tofu-process.ts); the provider mirror is tofu's own
      ...opts.env,
      // the programs the preflight found (DEPLOY_SKOPEO, ...), for the graph's shell steps
      ...opts.tools.env,
      ...backend.env,
      ...lock.tofuEnv,
      // the SPIRE steps' key (a staged copy), ssh and kubectl
      ...spire.env,
      ...registryCa,
      KUBE_CONFIG_PATH: opts.kubeconfig,
      DEPLOY_BIN: await writeSelfWrapper(runDir),
      DEPLOY_RUN_DIR: runDir,
      TF_IN_AUTOMATION: '1',
      // the rollout steps write their progress as JSON lines for the view (src/rollout/progress.ts)
      [PROGRESS_ENV]: PROGRESS_JSON,
    };
    const verbose = ['debug', 'trace'].includes(opts.env.DEPLOY_LOG_LEVEL ?? '');
    // Every event feeds the view's rows (a line per node: src/workflow/view/). tofu's own
    // lines (one per resource and phase, with the graph's addresses) only at
    // DEPLOY_LOG_LEVEL=debug; otherwise its errors, its warnings (not init's: provider lookups,
    // the lock file's checksum) and whatever is not tofu JSON (a crash).
    const show = (quietWarnings: boolean) => (e: import('../tools/tofu.js').TofuEvent) => {
      opts.view.tofu(model.target, e);
      if (verbose) {
        const line = tofu.describeTofuEvent(e);
        if (line) opts.progress(`[${model.target}] ${line}`);
        return;
      }
      if (e.kind === 'unparsed') opts.progress(`[${model.target}] ${e.line}`);
      if (e.kind !== 'diagnostic' || (e.diagnostic.severity !== 'error' && quietWarnings)) return;
      const d = e.diagnostic;
      // a rollout step's failure: its row and the rollout summary say it (tofu's words are the
      // step's whole output); any other diagnostic names the node and part (formatDiagnostic)
      if (d.address !== undefined && isRolloutStep(d.address)) return;
      // tofu's warnings about -target: the run said why it planned some nodes alone
      if (scoped !== undefined && d.severity === 'warning' && TARGETING_WARNINGS.test(d.summary)) return;
      opts.progress(`[${model.target}] ${tofu.formatDiagnostic(d)}`);
    };
    const base = {
      dir: graphDir,
      env,
      signal,
      tofuPath,
      lockHeld: true,
      onEvent: show(false),
    };
    const say = (line: string) => opts.progress(`[${model.target}] ${line}`);
    // The verified no-op check (noop-check.ts): "no changes" without tofu when that is certain
    const noop = { ...(await import('./noop/verdict.js')), ...(await import('./noop/record.js')), ...(await import('./noop/fingerprint.js')), ...(await import('./noop/compare.js')) };
    const noopCtx = { model, graphDir, tools: opts.tools, kubeconfig: opts.kubeconfig, env: opts.env, backend, signal };
    const fastOff = mode === 'destroy' ? 'destroy' : noop.whyNoFastPlan(noopCtx);
    // The target's objects and state, read once for the check and the hand edits (issue 34)
    const graphText = await readGraphText(graphDir);
    const graphDoc = JSON.parse(graphText) as GraphDocument;
    const manifests = graphManifests(graphDoc);
    let seen: TargetObjects | string = 'a destroy reads nothing of the cluster before its plan';
    let edits: readonly HandEdit[] = [];
    if (mode !== 'destroy') {
      seen = await readTargetObjects(noopCtx).catch((err: Error) => err.message);
      if (typeof seen === 'string') say(`hand edits not looked for: the cluster's objects could not be read (${seen})`);
      else edits = handEditsOf(model, seen.objects, manifests, seen.state?.resources);
    }
    let printBefore: import('./noop/fingerprint.js').TargetFingerprint | undefined;
    // only some nodes changed, the rest verified: those nodes' addresses (-target)
    let scoped: { readonly nodes: readonly string[]; readonly targets: readonly string[]; readonly movedTags: ReadonlyMap<string, MovedTag>; readonly outputs: Record<string, { value: unknown }> } | undefined;
    if (fastOff === undefined) {
      const verdict = await noop.checkNoop(noopCtx, seen, edits, graphText);
      if (verdict.kind === 'scoped') {
        say(verdict.sentence);
        scoped = verdict;
        printBefore = verdict.fingerprint;
      } else if (verdict.kind === 'verified') {
        say(verdict.sentence);
        if (mode === 'apply') checkSubmission(model, verdict.outputs);
        const summary = summarizePlan(model, [], false, { destroy: false, allowed: opts.allowVolumeReplacement ?? new Set() }, { movedTags: verdict.movedTags, handEdits: edits });
        return { summary: { ...summary, verifiedNoop: true }, rollouts: [], applied: false, nodeNames: nodeNamesFrom(verdict.outputs), exitCode: ExitCode.ok, graphDir };
      }
      else {
        say(`full plan: ${verdict.reason}`);
        printBefore = verdict.fingerprint;
      }
    }
    // Hand edits the graph does not set go before tofu plans (undo-hand-edits.ts): its plan then
    // starts from the graph's fields, and its apply ends as planned. A pod template changed so
    // is a new pod: the node's rollout step is replaced, and waits for it (law 11). A plan says
    // what the apply will do, with the same -replace.
    const removable = edits.filter((e) => e.action === 'remove');
    let replaceRollouts = rolloutAddresses(graphDoc, [...new Set(removable.filter((e) => e.inTemplate && e.node !== undefined).map((e) => e.node!))]);
    if (mode === 'apply' && removable.length > 0 && typeof seen !== 'string') {
      const io = seen;
      const outcome = await undoHandEdits(
        edits,
        {
          patch: (name, ops, manager) => io.deployments.patch(name, ops, manager),
          read: (name) => io.deployments.read(name),
          editsOf: (object) => handEditsOf(model, [{ kind: 'Deployment', object }], manifests, io.state?.resources),
          resourceVersionOf: (name) => io.objects.find((o) => o.kind === 'Deployment' && o.object.metadata?.name === name)?.object.metadata?.resourceVersion,
        },
        say,
      ).catch((err: unknown) => {
        throw new DeployError(`the hand edits of target ${model.target} could not be removed: ${describeApiError(err)}`, ExitCode.tool, {
          hint: 'nothing else was changed; run deploy plan to see the hand edits, and remove the one named above with kubectl if the API server refuses the object without it',
          cause: err,
        });
      });
      replaceRollouts = rolloutAddresses(graphDoc, outcome.templateChanged);
      // the print before tofu's refresh, taken again: the step changed the objects
      if (printBefore !== undefined) {
        const again = await noop.fingerprintTarget(noopCtx, graphText);
        printBefore = typeof again === 'string' ? undefined : again.fingerprint;
      }
    }
    // init's chatter (provider lookups, the lock file's checksum warning) is noise here
    const initialised = await tofu.initGraph({ ...base, onEvent: show(true), onRun: () => opts.progress(`[${model.target}] tofu init (graph ${graphDir})`) });
    if (!initialised) opts.progress(`[${model.target}] graph ${graphDir}: initialised as before (no tofu init)`);
    // (a plan of some nodes: the check read the state's outputs already, and found the state as recorded)
    if (mode === 'apply') await checkSubmission(model, scoped?.outputs ?? (await tofu.readOutputs(base)));

    opts.progress(`[${model.target}] tofu plan${mode === 'destroy' ? ' -destroy' : ''}`);
    const { spireFailure } = await import('../spire/spire-failure.js');
    // a failure of the SPIRE steps (spire node unreachable, no bundle) in words that name the node
    const explained = (verb: string) => (err: unknown): never => {
      throw spireFailure(err, verb, model.spire?.node) ?? err;
    };
    const { plan, pushedAgain } = await (mode === 'destroy'
      ? planDestroy((refresh) => tofu.planGraph({ ...base, destroy: true, refresh, logger }), say).then((p) => ({ plan: p, pushedAgain: new Set<string>() }))
      : planPushingGoneTags(
          (replace) => tofu.planGraph({ ...base, replace: [...replace, ...replaceRollouts], targets: scoped?.targets, logger }),
          async () => JSON.parse(await readFile(join(graphDir, GRAPH_FILE), 'utf8')),
          (node) => model.nodes.find((n) => n.name === node)?.tagRef,
          say,
        )
    ).catch(explained(mode === 'destroy' ? 'plan -destroy' : 'plan'));
    // FR-003: the digest each tag points at now against the one recorded at its push, from the
    // state the plan was made from (no process; the plan file is read in-process)
    // (a plan of some nodes reads only their tags, and the plan's state holds the others' as last
    // read: for those, the check's fresh reads)
    const planned = mode === 'destroy' ? undefined : movedTags(plan.priorState ?? []);
    const moved = scoped === undefined || planned === undefined ? planned : new Map([...scoped.movedTags, ...[...planned].filter(([node]) => scoped!.nodes.includes(node))]);
    const summary = summarizePlan(model, plan.changes, plan.hasChanges, { destroy: mode === 'destroy', allowed: opts.allowVolumeReplacement ?? new Set() }, { pushedAgain, movedTags: moved, handEdits: edits });
    // law 10: the claim of a node that stays goes only when the operator named the node
    if (mode === 'apply') refuseClaimLosses(model, summary.claimLosses);
    // every archive the apply pushes is there, before tofu changes anything (push-archives.ts)
    if (mode === 'apply' && plan.hasChanges) await requirePushArchives(model, summary, opts.env.PATH ?? '');
    // FR-009: the node names from the graph's output: as planned, or (no change, or after the
    // apply) as the state holds them; a destroy leaves none
    // (a plan of some nodes: the outputs are the state's, which the check found the graph keeps)
    const nodeNames = async (planned: typeof plan.outputs) => (mode === 'destroy' ? undefined : nodeNamesFrom(planned ?? scoped?.outputs ?? (await tofu.readOutputs(base))));
    // (not while a hand edit that tofu should have set back is there: the next plan looks again)
    const unresolved = edits.some((e) => e.action === 'set-back' || (e.action === 'remove' && mode === 'plan'));
    if (!plan.hasChanges && pushedAgain.size === 0 && printBefore !== undefined && !unresolved) {
      // verified by tofu's refresh: the print taken before it is the target's no-op state
      await noop.recordNoop(noopCtx, printBefore, 'plan').catch((err: Error) => logger.warn({ kind: 'noop-record', err: err.message }, 'the no-op record was not written'));
    }
    if (mode === 'plan' || !plan.hasChanges) {
      return { summary, rollouts: [], applied: false, nodeNames: await nodeNames(plan.outputs), exitCode: ExitCode.ok, graphDir };
    }

    opts.progress(`[${model.target}] tofu apply`);
    const pushes = await describePushes(model);
    opts.view.planned({
      target: model.target,
      namespace: model.namespace,
      changes: summary.other.length > 0 || summary.spire.length > 0,
      nodes: summary.nodes.map((n) => ({ node: n.node, words: n.words, changes: nodeChanges(n), push: pushes.get(n.node), waits: waitWords(n) })),
    });
    // the target changes now: its record no longer says anything (a new one follows success)
    await noop.forgetNoop(noopCtx);
    let failure: unknown;
    try {
      await tofu.applyPlan({ ...base, planFile: plan.planFile });
    } catch (err) {
      failure = spireFailure(err, 'apply', model.spire?.node) ?? err;
    }
    opts.view.ended(model.target, failure === undefined);
    const { readRolloutReports, rolloutsExitCode, waitForRunningSteps } = await import('../rollout/report.js');
    if (failure !== undefined) {
      // on an interrupt tofu stops reading the rollout steps at once, while they are still
      // writing what they left: wait (bounded) for their reports, so the summary has them
      const left = await waitForRunningSteps(runDir, STEP_REPORT_GRACE_MS);
      if (left.length > 0) logger.warn({ kind: 'rollout-steps-unreported', steps: left }, 'rollout steps still running; their reports are missing');
    }
    const rollouts = await readRolloutReports(runDir);
    const rolloutCode = rolloutsExitCode(rollouts);
    if (failure !== undefined) {
      // A failed rollout step fails the apply; its report says more than tofu's error does.
      // (the names are a courtesy here: reading them must not hide the rollout's exit code)
      if (rolloutCode !== ExitCode.ok) return { summary: markHeldBack(model, summary, rollouts), rollouts, applied: true, nodeNames: await nodeNames(undefined).catch(() => undefined), exitCode: rolloutCode, graphDir };
      throw failure;
    }
    logger.debug({ kind: 'target-applied', target: model.target, rollouts: rollouts.length }, 'applied');
    if (fastOff === undefined && rolloutCode === ExitCode.ok) {
      // taken after the rollout, kept only when every writer of the objects is deploy's own, no
      // hand edit is in them, and the objects the apply did not change are as before its plan
      const after = await noop.fingerprintTarget(noopCtx, graphText);
      const during = (a: Exclude<typeof after, string>): string[] => [
        ...handEditsOf(model, a.seen.objects, manifests, a.seen.state?.resources)
          .filter((e) => e.kind === 'Deployment' && e.action !== 'keep')
          .map((e) => `${e.kind}/${e.name} ${e.field} (${e.writer})`),
        ...(printBefore === undefined ? ['no print of the target before the plan'] : noop.changedBehindTheApply(printBefore, a.fingerprint, changedObjects(model, summary), graphObject(model))),
      ];
      const stopped =
        typeof after === 'string'
          ? (logger.warn({ kind: 'noop-record', err: after }, 'the no-op record was not written'), [])
          : await noop.recordNoop(noopCtx, after.fingerprint, 'apply', printBefore, during(after)).catch((err: Error) => (logger.warn({ kind: 'noop-record', err: err.message }, 'the no-op record was not written'), []));
      if (stopped.length > 0) {
        say(`not recorded as verified (the next plan is a full one): written during this run by another than deploy: ${stopped.slice(0, 3).join(', ')}${stopped.length > 3 ? `, and ${stopped.length - 3} more` : ''}`);
      }
    }
    // the work is done: a stop now leaves the names out of the summary, not the apply's verdict
    // (it ended the run as "tofu output was interrupted" with exit 130, after a whole apply)
    const names = await nodeNames(undefined).catch((err: unknown) => {
      if (signal.aborted) return undefined;
      throw err;
    });
    return { summary, rollouts, applied: true, nodeNames: names, exitCode: rolloutCode, graphDir };
  } finally {
    await lock?.release();
    await backend?.close();
    await spire?.close();
    await rm(runDir, { recursive: true, force: true }).catch(() => {});
  }
}

/** The `null_resource` addresses of these nodes' rollout steps in the graph (for -replace). */
function rolloutAddresses(doc: GraphDocument, nodes: readonly string[]): string[] {
  if (nodes.length === 0) return [];
  return Object.keys(doc.resource?.null_resource ?? {})
    .filter((name) => {
      const p = graphPartOf(name);
      return p?.scope === 'node' && p.part === 'rollout' && nodes.includes(p.node);
    })
    .map((name) => `null_resource.${name}`)
    .sort();
}

/** Whether the plan changes the object `Kind/name`: a changed node's, or the namespace and NetworkPolicy when the target's own part changes. */
function changedObjects(model: TargetModel, summary: TargetSummary): (key: string) => boolean {
  const keys = new Set<string>();
  for (const n of summary.nodes) {
    if (!nodeChanges(n) && !(n.handEdits ?? []).some((e) => e.action !== 'keep')) continue;
    keys.add(`Deployment/${names.deployment(n.node)}`).add(`PersistentVolumeClaim/${names.stateClaim(n.node)}`).add(`ServiceAccount/${names.serviceAccount(n.node)}`);
  }
  const targetPart = summary.other.length > 0;
  return (key) => keys.has(key) || (targetPart && (key === `Namespace/${model.namespace}` || key.startsWith('NetworkPolicy/')));
}

/** Whether `Kind/name` is an object the graph makes (not the namespace's own default service account, nor one made by hand). */
function graphObject(model: TargetModel): (key: string) => boolean {
  const keys = new Set([`Namespace/${model.namespace}`]);
  for (const n of model.nodes) keys.add(`Deployment/${names.deployment(n.name)}`).add(`PersistentVolumeClaim/${names.stateClaim(n.name)}`).add(`ServiceAccount/${names.serviceAccount(n.name)}`);
  return (key) => keys.has(key) || key.startsWith('NetworkPolicy/');
}

function isRolloutStep(address: string): boolean {
  const g = graphPartOf(address);
  return g?.scope === 'node' && g.part === 'rollout';
}

/**
 * What each node's push moves, for its row: the archive's size, or, for a node whose archive
 * and tag an earlier node of the target pushes, the repository its layers are mounted from
 * (the graph orders such pushes: stacks/target-stack.ts).
 */
async function describePushes(model: TargetModel): Promise<Map<string, string>> {
  const first = new Map<string, string>();
  const words = new Map<string, string>();
  for (const n of model.nodes) {
    const shared = `${n.archive}\n${n.tag}`;
    const from = first.get(shared);
    if (from !== undefined) {
      words.set(n.name, `layers mounted from ${from}`);
      continue;
    }
    first.set(shared, n.repository);
    const size = await stat(n.archive).then((s) => s.size, () => undefined);
    if (size !== undefined) words.set(n.name, `${(size / 1e6).toFixed(1)} MB archive`);
  }
  return words;
}

/** Whether the plan changes anything of the node (its row then waits for the apply's events). */
function nodeChanges(n: NodeSummary): boolean {
  return n.removed || [n.push, n.deployment, n.claim, n.rollout, n.account ?? 'none'].some((c) => c !== 'none');
}

/**
 * A submission is bound to its state: an apply with a different submission on the same
 * state key fails, naming both (the specification's submission rule).
 */
function checkSubmission(model: TargetModel, outputs: Record<string, { value: unknown }>): void {
  const recorded = outputs[SUBMISSION_OUTPUT]?.value;
  if (typeof recorded !== 'string' || recorded === '') return;
  const wanted = model.submissionId ?? '';
  if (recorded !== wanted) {
    throw new DeployError(
      `the state ${model.stateKey} belongs to submission "${recorded}", and this apply is ${wanted ? `for submission "${wanted}"` : 'without a submission'}`,
      ExitCode.usage,
      { hint: `apply the plan of submission "${recorded}", or destroy that deployment first` },
    );
  }
}

