/**
 * A target's run without a cluster, a backend or tofu: the sample group's target `all`, a
 * session in a temporary directory with a graph file, and fake collaborators (TargetParts)
 * that record each call and answer as the test says: a fixture tofu runner, a fake read of the
 * cluster's objects, a fake no-op check, fake rollout reports.
 */
import type { HttpBackendCoordinates } from '../../../src/config/backend-coordinates.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import type { TargetModel } from '../../../src/config/target-model.js';
import type { PlannedResourceChange } from '../../../src/contract/graph/planned-change.js';
import type { Logger } from '../../../src/log.js';
import type { RolloutOutcome, RolloutReport } from '../../../src/rollout/report.js';
import type { PlanResult, TofuEvent } from '../../../src/tools/tofu/tofu.js';
import type { TargetFingerprint } from '../../../src/workflow/noop/fingerprint.js';
import type { NoopVerdict } from '../../../src/workflow/noop/verdict.js';
import type { TargetObjects } from '../../../src/workflow/drift/target-objects.js';
import type { TargetParts } from '../../../src/workflow/target/target-wiring.js';
import type { TargetRunOptions } from '../../../src/workflow/target/target-types.js';
import type { TargetSession } from '../../../src/workflow/target/target-session.js';
import type { RunView } from '../../../src/workflow/view/run-view.js';
import { samplePlan } from '../../support/cli.js';
import { PLANNER_RECORD_ENV } from '../../../src/workflow/target/planner-record.js';
import { expect } from 'vitest';
import type { GraphDocument } from '../../../src/contract/graph/graph-document.js';

export const [model] = buildTargets(parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json'), loadCoordinates({}, { K8S_REGISTRY: 'reg' }, process.cwd()), '/p/g.json', ['all']) as [TargetModel];

/** Graph addresses of a node's parts, as CDKTF names them (src/contract/graph/graph-ids.ts). */
export const address = {
  push: (node: string) => `null_resource.image-${node}_push_0A1B2C3D`,
  deployment: (node: string) => `kubernetes_manifest.node-${node}_deployment_0A1B2C3E`,
  rollout: (node: string) => `null_resource.node-${node}_rollout_0A1B2C3F`,
};

export function change(addr: string, actions: string[]): PlannedResourceChange {
  const [type, name] = addr.split('.') as [string, string];
  return { address: addr, mode: 'managed', type, name, actions, actionReason: undefined };
}

export function planResult(changes: readonly PlannedResourceChange[], outputs?: PlanResult['outputs']): PlanResult {
  return { hasChanges: changes.length > 0, planFile: '/graph/tfplan', changes, outputs, summary: undefined, warnings: [], priorState: [] };
}

export const fingerprint: TargetFingerprint = { inputs: 'i', graph: { rest: 'r', resources: {} }, lineage: 'l', serial: 3, objects: { 'Namespace/ns': 'n' }, foreignWriters: [] };

/** The graph's output node_names, as tofu or the state gives it. */
export const namesOutput = (names: string[]) => ({ node_names: { value: names, sensitive: false } });

export function report(node: string, outcome: RolloutOutcome): RolloutReport {
  return {
    version: 1, node, namespace: model.namespace, outcome, reason: outcome, message: `${node}: ${outcome}`, failedUnits: [], events: [], lastState: null, logTail: [], systemdJobs: [],
    image: null, previousImage: null, timeoutSeconds: 60, startedAt: '2026-12-03T00:00:00Z',
    durations: {} as RolloutReport['durations'],
  };
}

export interface FakeAnswers {
  verdict?: NoopVerdict;
  /** What each `tofu plan` gives, in turn (or throws, for an Error). */
  plans?: (PlanResult | Error)[];
  /** What `tofu apply` does: nothing, or throw this. */
  applyFails?: Error;
  /** What the pushes before tofu's apply do: nothing, or throw this. */
  pushFails?: Error;
  /** Events each tofu command sends to its handler before it answers. */
  events?: TofuEvent[];
  outputs?: Record<string, { value: unknown; sensitive: boolean }>;
  reports?: RolloutReport[];
  /** The target's objects as the cluster's listers give them (default: none, the state empty). */
  objects?: TargetObjects | Error;
  /** Why the fingerprint cannot be taken (a read that failed), instead of `fingerprint`. */
  fingerprintFails?: string;
}

export interface Call {
  readonly name: string;
  readonly args: readonly unknown[];
}

/** Fake parts recording their calls in `calls`, by name (`tofu.plan`, `noop.record`, ...). */
export function fakeParts(answers: FakeAnswers): { parts: TargetParts; calls: Call[]; named: (name: string) => Call[] } {
  const calls: Call[] = [];
  const plans = [...(answers.plans ?? [])];
  const call = (name: string, ...args: unknown[]) => calls.push({ name, args });
  const events = (opts: { onEvent?: (e: TofuEvent) => void }) => {
    for (const e of answers.events ?? []) opts.onEvent?.(e);
  };
  const objects: TargetObjects = { server: 'https://cluster.test', objects: [], state: undefined, complete: true, claims: [], volumes: [], deployments: { patch: async () => undefined, read: async () => undefined } };
  const parts: TargetParts = {
    writeGraph: async (m, dir) => {
      call('writeGraph', m.target, dir);
      const graphDir = join(dir, m.stateKey);
      await mkdir(graphDir, { recursive: true });
      await writeFile(join(graphDir, 'cdk.tf.json'), '{}');
      return { dir: graphDir, text: '{}', document: {} };
    },
    stageSpireAccess: async () => {
      call('spire.stage');
      return { env: {}, stagedKeyFile: undefined, close: async () => void call('spire.close') };
    },
    openBackend: async () => {
      call('backend.open');
      return { http: HTTP_BACKEND, address: 'http://backend.test/g1-all', embedded: false, close: async () => void call('backend.close') };
    },
    takeRunLock: async (o) => {
      call('lock.take', o.operation);
      return { info: {} as never, tofuAddress: 'http://backend.test/g1-all?ID=test', release: async () => void call('lock.release') };
    },
    readTargetObjects: async () => {
      call('objects.read');
      if (answers.objects instanceof Error) throw answers.objects;
      return answers.objects ?? objects;
    },
    noop: {
      check: async (_ctx, seen, edits) => {
        call('noop.check', seen, edits);
        if (answers.verdict === undefined) throw new Error('the test gave no verdict');
        return answers.verdict;
      },
      fingerprint: async () => {
        call('noop.fingerprint');
        return answers.fingerprintFails ?? { fingerprint, seen: objects };
      },
      record: async (_ctx, fp, by, before, stopped) => {
        call('noop.record', fp, by, before, stopped);
        return [];
      },
      forget: async () => void call('noop.forget'),
    },
    tofu: {
      initGraph: async (opts) => {
        call('tofu.init', opts);
        opts.onRun?.();
        return true;
      },
      planGraph: async (opts) => {
        call('tofu.plan', opts);
        events(opts);
        const next = plans.shift();
        if (next === undefined) throw new Error('the test gave no more plans');
        if (next instanceof Error) throw next;
        return next;
      },
      applyPlan: async (opts) => {
        call('tofu.apply', opts);
        events(opts);
        if (answers.applyFails) throw answers.applyFails;
        return { summary: undefined, outputNames: ['node_names'], warnings: [] };
      },
      readOutputs: async (opts) => {
        call('tofu.output', opts);
        return answers.outputs ?? namesOutput(model.nodes.map((n) => n.name));
      },
    },
    rolloutReports: {
      waitForRunningSteps: async (dir, grace) => {
        call('reports.wait', dir, grace);
        return [];
      },
      readRolloutReports: async (dir) => {
        call('reports.read', dir);
        return answers.reports ?? [];
      },
    },
    pushFirst: async (opts) => {
      call('pushFirst', [...opts.nodes].sort());
      if (answers.pushFails) throw answers.pushFails;
    },
  };
  return { parts, calls, named: (name) => calls.filter((c) => c.name === name) };
}

/** A view that keeps what it was told. */
export function fakeView(): RunView & { readonly told: string[] } {
  const told: string[] = [];
  return {
    told,
    note: (line) => void told.push(`note ${line}`),
    planned: (plan) => void told.push(`planned ${plan.target}: ${plan.nodes.filter((n) => n.changes).map((n) => n.node).join(' ')}`),
    tofu: (target, e) => void told.push(`tofu ${target} ${e.kind}`),
    ended: (target, ok) => void told.push(`ended ${target} ${ok ? 'ok' : 'failed'}`),
    setBack: (target, node, step) => void told.push(`set back ${target} ${node}: ${step.kind}`),
    close: () => {},
  };
}

/** The state backend of the fake runs: an http one (nothing listens there; the fakes never call it). */
const HTTP_BACKEND: HttpBackendCoordinates = { kind: 'http', addressName: 'TF_HTTP_ADDRESS', address: 'http://backend.test', url: new URL('http://backend.test') };

const logger = { warn: () => {}, debug: () => {}, info: () => {}, error: () => {} } as unknown as Logger;

/** A session in a temporary directory (its graph file: `graph`), and the run's options around it. */
export async function fakeRun(mode: TargetRunOptions['mode'], over: Partial<TargetRunOptions> = {}, graph: unknown = { resource: {} }) {
  const dir = await mkdtemp(join(tmpdir(), 'deploy-target-'));
  await writeFile(join(dir, 'cdk.tf.json'), JSON.stringify(graph));
  const signal = new AbortController().signal;
  const session: TargetSession = {
    graphDir: dir,
    graph: { dir, text: JSON.stringify(graph), document: graph as GraphDocument },
    runDir: join(dir, 'run'),
    backend: { http: HTTP_BACKEND, embedded: false },
    tofu: { dir, env: {}, signal, tofuPath: '/nonexistent/tofu', lockHeld: true },
  };
  const progress: string[] = [];
  const view = fakeView();
  const opts: TargetRunOptions = {
    mode,
    model,
    graphsDir: dir,
    tools: { tofu: '/nonexistent/tofu', env: {} },
    kube: { file: '/nonexistent/kubeconfig', ok: false, error: new Error('no kubeconfig in this test') },
    env: { DEPLOY_STATE_DIR: dir, PATH: '', ...plannerRecordEnv() },
    backend: HTTP_BACKEND,
    who: 'test',
    logger,
    signal,
    progress: (line) => void progress.push(line),
    view,
    ...over,
  };
  return { session, opts, progress, view, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * DEPLOY_PLANNER_RECORD of the test process, when set, passed to the run as a directory of its
 * own per test (named after the test): the planner's calls of these fake runs are recorded
 * there (test/fixtures/planner/unit-fake/ was made so; docs/tests.md). Unset: nothing.
 */
function plannerRecordEnv(): NodeJS.ProcessEnv {
  const dir = process.env[PLANNER_RECORD_ENV];
  if (dir === undefined || dir === '') return {};
  const name = (expect.getState().currentTestName ?? 'no test').split(' > ').pop()!;
  const test = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 60).replace(/^-|-$/g, '');
  return { [PLANNER_RECORD_ENV]: join(dir, test) };
}
