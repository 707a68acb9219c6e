/**
 * The tofu runner against the REAL OpenTofu and providers built by `npm run tools` (the
 * global setup builds them), offline from the mirror, with a local (or a loopback http)
 * backend. Graphs are written by hand in the shape CDKTF synthesizes (cdk.tf.json).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { requireTool } from '../../src/tools/discover.js';
import { providerEnv } from '../../src/tools/providers.js';
import {
  applyPlan,
  initGraph,
  planGraph,
  readOutputs,
  TofuError,
  validateGraph,
  type TofuEvent,
  type TofuOptions,
} from '../../src/tools/tofu/tofu.js';

/**
 * Any attempt to reach a registry goes to a dead loopback port, so a passing init proves it
 * used the mirror only.
 */
const OFFLINE_ENV = {
  ...process.env,
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '',
};

function graphDir(resources: Record<string, unknown>, backend: Record<string, unknown> = { local: { path: 'terraform.tfstate' } }, output: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'tofu-graph-'));
  const graph = {
    '//': { metadata: { version: '0.21.0', stackName: 'test', backend: Object.keys(backend)[0] } },
    terraform: {
      // the bare and the namespaced sources CDKTF writes
      required_providers: {
        null: { source: 'null', version: '3.2.4' },
        random: { source: 'hashicorp/random', version: '3.7.2' },
      },
      backend,
    },
    provider: { null: [{}], random: [{}] },
    resource: resources,
    ...(Object.keys(output).length ? { output } : {}),
  };
  writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(graph, null, 2));
  return dir;
}

function options(dir: string, events: TofuEvent[] = [], extra: Partial<TofuOptions> = {}): TofuOptions {
  return { dir, env: OFFLINE_ENV, onEvent: (e) => events.push(e), timeoutMs: 240_000, ...extra };
}

function stateList(dir: string): string[] {
  const tofu = requireTool('tofu', process.env).path;
  const out = execFileSync(tofu, ['state', 'list'], { cwd: dir, env: { ...OFFLINE_ENV, ...providerEnv(process.env) }, encoding: 'utf8' });
  return out.split('\n').filter(Boolean).sort();
}

/** PIDs of processes whose command line is exactly `cmd`. */
function processesRunning(cmd: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') === cmd) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

describe('tofu runner (real OpenTofu, offline mirror)', () => {
  it('inits offline, validates, applies a saved plan, then plans no changes', async () => {
    // GIVEN a graph of random and null resources with a local backend
    const dir = graphDir(
      {
        random_uuid: { machine_id: {} },
        null_resource: {
          step: {
            triggers: { id: '${random_uuid.machine_id.result}' },
            provisioner: [{ 'local-exec': { command: 'echo step-ran' } }],
          },
        },
      },
      undefined,
      { uuid: { value: '${random_uuid.machine_id.result}' } },
    );
    const events: TofuEvent[] = [];

    // WHEN it is initialised with no network
    await initGraph(options(dir, events));
    // THEN the lock file is kept in the graph directory, naming the pinned versions
    const lock = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toMatch(/provider "[^"]+\/hashicorp\/null" \{\s*version\s+= "3\.2\.4"/);
    expect(lock).toMatch(/provider "[^"]+\/hashicorp\/random" \{\s*version\s+= "3\.7\.2"/);

    expect(await validateGraph(options(dir))).toEqual({ valid: true, diagnostics: [] });

    // WHEN it is planned to a file
    const plan = await planGraph(options(dir, events));
    // THEN the plan has changes: both resources are created
    expect(plan.hasChanges).toBe(true);
    expect(plan.changes.map((c) => [c.address, c.actions.join('+')])).toEqual([
      ['null_resource.step', 'create'],
      ['random_uuid.machine_id', 'create'],
    ]);
    expect(plan.summary).toMatchObject({ operation: 'plan', add: 2, change: 0, remove: 0 });
    expect(existsSync(plan.planFile)).toBe(true);

    // WHEN the saved plan is applied
    const applyEvents: TofuEvent[] = [];
    const applied = await applyPlan({ ...options(dir, applyEvents), planFile: plan.planFile });
    // THEN both are created, in dependency order, and the provisioner ran
    expect(applied.summary).toMatchObject({ operation: 'apply', add: 2, change: 0, remove: 0 });
    expect(applied.outputNames).toEqual(['uuid']);
    const done = applyEvents.filter((e) => e.kind === 'apply-complete').map((e) => (e as { address: string }).address);
    expect(done).toEqual(['random_uuid.machine_id', 'null_resource.step']);
    expect(applyEvents).toContainEqual(expect.objectContaining({ kind: 'provision', phase: 'output', address: 'null_resource.step', output: 'step-ran' }));
    const outputs = await readOutputs(options(dir));
    expect(outputs.uuid?.value).toMatch(/^[0-9a-f-]{36}$/);

    // WHEN it is planned again
    const again = await planGraph({ ...options(dir), planFile: 'second.tfplan' });
    // THEN there is nothing to do (-detailed-exitcode 0)
    expect(again.hasChanges).toBe(false);
    expect(again.changes).toEqual([]);

    // AND destroy removes everything: a destroy plan, then its apply (as `deploy destroy` runs it)
    const destroyPlan = await planGraph({ ...options(dir), destroy: true, planFile: 'destroy.tfplan' });
    const destroyed = await applyPlan({ ...options(dir), planFile: destroyPlan.planFile });
    // a saved destroy plan is applied as an "apply" that removes everything
    expect(destroyed.summary).toMatchObject({ add: 0, change: 0, remove: 2 });
    expect(destroyPlan.changes.map((c) => c.actions.join('+'))).toEqual(['delete', 'delete']);
    expect(stateList(dir)).toEqual([]);
  });

  it('gives the planned outputs (FR-009 node names): a static value at plan time; an output-only change is a change; with no change the state holds them', async () => {
    // GIVEN a graph with a static list output (as node_names is) and one known only after the apply
    const outputs = (names: string[]) => ({ node_names: { value: names }, uuid: { value: '${random_uuid.id.result}' } });
    const dir = graphDir({ random_uuid: { id: {} } }, undefined, outputs(['alpha', 'beta']));
    await initGraph(options(dir));
    // WHEN planned THEN the static list is there with its value, the other without one
    const plan = await planGraph(options(dir));
    expect(plan.outputs).toEqual({ node_names: { value: ['alpha', 'beta'], sensitive: false }, uuid: { sensitive: false } });
    await applyPlan({ ...options(dir), planFile: plan.planFile });
    expect((await readOutputs(options(dir))).node_names?.value).toEqual(['alpha', 'beta']);

    // WHEN only the output changes THEN the plan has changes (no resource) and the new names
    const graphFile = join(dir, 'cdk.tf.json');
    const graph = JSON.parse(readFileSync(graphFile, 'utf8'));
    writeFileSync(graphFile, JSON.stringify({ ...graph, output: outputs(['alpha', 'gamma']) }));
    const renamed = await planGraph({ ...options(dir), planFile: 'renamed.tfplan' });
    expect(renamed.hasChanges).toBe(true);
    expect(renamed.changes).toEqual([]);
    expect(renamed.outputs?.node_names?.value).toEqual(['alpha', 'gamma']);

    // WHEN nothing changes THEN no show runs (outputs undefined) and the state has the names
    writeFileSync(graphFile, JSON.stringify(graph));
    const same = await planGraph({ ...options(dir), planFile: 'same.tfplan' });
    expect(same.hasChanges).toBe(false);
    expect(same.outputs).toBeUndefined();
    expect((await readOutputs(options(dir))).node_names?.value).toEqual(['alpha', 'beta']);
  });

  it('skips an init of the same graph, tofu and providers; runs it when the lock or the graph\'s terraform block changed', async () => {
    // GIVEN a graph initialised once
    const dir = graphDir({ random_uuid: { id: {} } });
    const first: TofuEvent[] = [];
    expect(await initGraph(options(dir, first))).toBe(true);
    expect(first.some((e) => e.kind === 'version')).toBe(true);
    // WHEN it is initialised again THEN tofu does not run (no event at all, onRun not called), and a plan works
    const again: TofuEvent[] = [];
    let ran = false;
    expect(await initGraph({ ...options(dir, again), onRun: () => (ran = true) })).toBe(false);
    expect(again).toEqual([]);
    expect(ran).toBe(false);
    expect((await planGraph(options(dir))).hasChanges).toBe(true);
    // WHEN the lock file is gone THEN the init runs and writes it again
    rmSync(join(dir, '.terraform.lock.hcl'));
    const noLock: TofuEvent[] = [];
    await initGraph(options(dir, noLock));
    expect(noLock.some((e) => e.kind === 'version')).toBe(true);
    expect(existsSync(join(dir, '.terraform.lock.hcl'))).toBe(true);
    // WHEN the graph needs another provider THEN the init runs and installs it
    const graphFile = join(dir, 'cdk.tf.json');
    const graph = JSON.parse(readFileSync(graphFile, 'utf8'));
    graph.terraform.required_providers.external = { source: 'hashicorp/external', version: '2.3.5' };
    writeFileSync(graphFile, JSON.stringify(graph));
    const added: TofuEvent[] = [];
    await initGraph(options(dir, added));
    expect(added.some((e) => e.kind === 'version')).toBe(true);
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toMatch(/hashicorp\/external/);
  });

  it('turns a failing resource into a TofuError naming its address, and keeps what succeeded', async () => {
    const dir = graphDir({
      random_uuid: { ok: {} },
      null_resource: {
        bad: {
          depends_on: ['random_uuid.ok'],
          provisioner: [{ 'local-exec': { command: 'echo about-to-fail >&2; exit 3' } }],
        },
      },
    });
    await initGraph(options(dir));
    const plan = await planGraph(options(dir));
    const err = await applyPlan({ ...options(dir), planFile: plan.planFile }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TofuError);
    const e = err as TofuError;
    expect(e.failedAddresses).toEqual(['null_resource.bad']);
    expect(e.message).toContain('tofu apply failed');
    expect(e.message).toContain('at null_resource.bad');
    expect(e.message).toMatch(/local-exec provisioner error/);
    expect(e.exitCode).toBe(3);
    // the successful part is in the state; the failed resource is tainted, so the next plan replaces it
    expect(stateList(dir)).toEqual(['null_resource.bad', 'random_uuid.ok']);
    const next = await planGraph({ ...options(dir), planFile: 'next.tfplan' });
    expect(next.changes).toEqual([
      expect.objectContaining({ address: 'null_resource.bad', actions: ['delete', 'create'], actionReason: 'replace_because_tainted' }),
    ]);
  });

  it('reports a configuration error with where it is', async () => {
    const dir = graphDir({ null_resource: { broken: { triggers: { x: '${random_uuid.nope.result}' } } } });
    await initGraph(options(dir));
    const v = await validateGraph(options(dir));
    expect(v.valid).toBe(false);
    expect(v.diagnostics[0]).toMatchObject({ severity: 'error', summary: 'Reference to undeclared resource' });
    const err = await planGraph(options(dir)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TofuError);
    expect((err as Error).message).toContain('Reference to undeclared resource');
    expect((err as Error).message).toContain('cdk.tf.json');
  });

  it('forwards one interrupt to a running apply: tofu stops cleanly, state is saved, the next run converges', async () => {
    // GIVEN a graph whose slow step sleeps the first time only (a marker file remembers it)
    const marker = join(mkdtempSync(join(tmpdir(), 'tofu-marker-')), 'ran-once');
    const sleep = `sleep 119.${process.pid}`; // unique, to find a leftover process
    const dir = graphDir({
      random_uuid: { first: {} },
      null_resource: {
        slow: {
          depends_on: ['random_uuid.first'],
          provisioner: [{ 'local-exec': { command: `if [ -e ${marker} ]; then echo quick; else touch ${marker}; echo sleeping; ${sleep}; fi` } }],
        },
      },
    });
    await initGraph(options(dir));
    const plan = await planGraph(options(dir));

    // WHEN the apply is aborted twice (two Ctrl-C) while the slow step runs
    const ac = new AbortController();
    const events: TofuEvent[] = [];
    const started = Date.now();
    const err = await applyPlan({
      ...options(dir, [], { signal: ac.signal }),
      planFile: plan.planFile,
      onEvent: (e) => {
        events.push(e);
        if (e.kind === 'provision' && e.phase === 'output' && e.output === 'sleeping') {
          // abort once the step's sleep runs: a SIGINT that reaches the step's shell (dash,
          // which catches SIGINT under -c) between its echo and its fork is held until the
          // command it then starts ends, and that command never got the signal; a Ctrl-C
          // in the step's first milliseconds is not what this test is about
          void (async () => {
            for (let i = 0; i < 100 && processesRunning(sleep).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
            ac.abort();
            ac.abort();
          })();
        }
      },
    }).catch((e: unknown) => e);

    // THEN tofu said once that it received an interrupt, and never that it got two
    const logs = events.filter((e): e is Extract<TofuEvent, { kind: 'log' }> => e.kind === 'log').map((e) => e.message);
    expect(logs.filter((m) => m.includes('Interrupt received'))).toHaveLength(1);
    expect(logs.some((m) => m.includes('Two interrupts'))).toBe(false);
    // AND the run ended promptly with a clear message (not after the 120 s sleep)
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toContain('tofu apply was interrupted');
    expect((err as Error).message).toContain('state it reached is saved');
    expect(existsSync(join(dir, 'errored.tfstate'))).toBe(false);
    // AND the step's command got the interrupt too: nothing it started is left running (a
    // process that got the signal may take a moment to be reaped on a loaded machine)
    for (let i = 0; i < 50 && processesRunning(sleep).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const left = processesRunning(sleep);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
    // AND the state holds what was finished before the interrupt
    expect(stateList(dir)).toContain('random_uuid.first');

    // WHEN the run is repeated
    const again = await planGraph({ ...options(dir), planFile: 'again.tfplan' });
    expect(again.hasChanges).toBe(true);
    expect(again.changes.map((c) => c.address)).toEqual(['null_resource.slow']);
    await applyPlan({ ...options(dir), planFile: again.planFile });
    // THEN it converges: nothing left to do
    const last = await planGraph({ ...options(dir), planFile: 'last.tfplan' });
    expect(last.hasChanges).toBe(false);
  });

  describe('when the backend refuses to save the state', () => {
    let server: Server;
    let address: string;
    beforeAll(async () => {
      // a loopback http backend that has no state yet and fails every write
      server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.statusCode = req.method === 'GET' ? 404 : 500;
          res.end(req.method === 'GET' ? '' : 'disk full');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      address = `http://127.0.0.1:${(server.address() as AddressInfo).port}/state/test`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('keeps errored.tfstate private (0600), says where it is and how to push it, never prints it', async () => {
      const dir = graphDir({ random_password: { secret: { length: 24 } } }, { http: { address } });
      await initGraph({ ...options(dir), env: { ...OFFLINE_ENV, NO_PROXY: '127.0.0.1' } });
      const plan = await planGraph({ ...options(dir), env: { ...OFFLINE_ENV, NO_PROXY: '127.0.0.1' } });
      const err = await applyPlan({ ...options(dir), env: { ...OFFLINE_ENV, NO_PROXY: '127.0.0.1' }, planFile: plan.planFile }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TofuError);
      const errored = join(dir, 'errored.tfstate');
      expect(statSync(errored).mode & 0o777).toBe(0o600);
      const state = JSON.parse(readFileSync(errored, 'utf8')) as { lineage: string; resources: { instances: { attributes: { result: string } }[] }[] };
      const secret = state.resources[0]!.instances[0]!.attributes.result;
      const e = err as TofuError;
      expect(e.message).toContain(errored);
      expect(e.message).toContain(`state push ${errored}`);
      expect(e.hint).toContain('push the saved state');
      // the state never reaches the message
      expect(e.message).not.toContain(secret);
      expect(e.message).not.toContain(state.lineage);
    });
  });
});
