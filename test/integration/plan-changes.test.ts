/**
 * The in-process reader of saved plans (src/tools/planfile/plan-changes.ts) against `tofu show -json`
 * of the same plan files, made by the REAL OpenTofu and providers (offline mirror): every
 * action and reason the runtime reads, replace paths, the keys of `triggers` that change,
 * tainted instances, data reads, and outputs known, unknown and removed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../src/tools/discover.js';
import { decodePlan, readPlanChanges } from '../../src/tools/planfile/plan-changes.js';
import { zipEntry } from '../../src/tools/planfile/plan-file.js';
import { providerEnv } from '../../src/tools/providers.js';
import { applyPlan, initGraph, planGraph, showPlan, type TofuOptions } from '../../src/tools/tofu/tofu.js';

const env = { ...process.env, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '' };

/** A graph in the shape CDKTF writes: null, random and the built-in terraform_data, a local state. */
function writeGraph(dir: string, body: { resource?: Record<string, unknown>; data?: Record<string, unknown>; output?: Record<string, unknown> }): void {
  const graph = {
    terraform: { required_providers: { null: { source: 'hashicorp/null', version: '3.2.4' }, random: { source: 'hashicorp/random', version: '3.7.2' } }, backend: { local: { path: 'terraform.tfstate' } } },
    provider: { null: [{}], random: [{}] },
    ...body,
  };
  writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(graph, null, 2));
}

/** Both readers of one saved plan: in-process and `tofu show -json`. */
async function bothReaders(opts: TofuOptions, planFile: string) {
  return { inProcess: await readPlanChanges(planFile), shown: await showPlan(opts, planFile) };
}

describe('the saved plan read in-process (plan-changes.ts) equals tofu show -json', () => {
  let dir: string;
  let opts: TofuOptions;
  const first = {
    resource: {
      random_uuid: { keep: { keepers: { generation: '1' } }, forced: {} },
      null_resource: {
        push: { triggers: { ref: 'web:1', size: '10' } },
        gone: { triggers: { ref: 'old' } },
        failed: { triggers: { ref: 'x' } },
      },
      terraform_data: {
        digest: { input: { digest: 'sha256:aaa', list: ['a', 1, true] } },
        rollout: { input: 'step', lifecycle: { replace_triggered_by: ['terraform_data.digest'] } },
      },
    },
    output: {
      names: { value: ['alpha', 'beta'] },
      uuid: { value: '${random_uuid.keep.result}' },
      secret: { value: 'hidden', sensitive: true },
      dropped: { value: { a: 1, b: 'two' } },
    },
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plan-changes-'));
    opts = { dir, env, timeoutMs: 240_000 };
    writeGraph(dir, first);
    await initGraph(opts);
  });

  it('a first plan: creates, unknown outputs and a sensitive one', async () => {
    const plan = await planGraph({ ...opts, planFile: 'create.tfplan' });
    const { inProcess, shown } = await bothReaders(opts, plan.planFile);
    expect(inProcess).toEqual(shown);
    expect(inProcess.changes.map((c) => `${c.address} ${c.actions.join('+')}`)).toContain('null_resource.push create');
    expect(inProcess.outputs).toMatchObject({ names: { value: ['alpha', 'beta'], sensitive: false }, uuid: { sensitive: false }, secret: { value: 'hidden', sensitive: true } });
    expect(inProcess.outputs.uuid).not.toHaveProperty('value');
    await applyPlan({ ...opts, planFile: plan.planFile });
  });

  it('every kind of change: triggers, replace paths, tainted, requested, by triggers, deleted, data reads, outputs', async () => {
    // GIVEN the applied graph, one instance tainted (a failed rollout step)
    const tofu = requireTool('tofu', process.env).path;
    execFileSync(tofu, ['taint', 'null_resource.failed'], { cwd: dir, env: { ...env, ...providerEnv(process.env) } });
    // WHEN the graph changes every way the runtime reads
    writeGraph(dir, {
      resource: {
        random_uuid: { keep: { keepers: { generation: '2' } }, forced: {} },
        null_resource: {
          push: { triggers: { ref: 'web:2', size: '10' } },
          failed: { triggers: { ref: 'x' } },
          added: { triggers: { after: '${random_uuid.keep.result}' } },
        },
        terraform_data: {
          digest: { input: { digest: 'sha256:bbb', list: ['a', 1, true] } },
          rollout: { input: 'step', lifecycle: { replace_triggered_by: ['terraform_data.digest'] } },
        },
      },
      data: { null_data_source: { unknown: { inputs: { id: '${null_resource.push.id}' } }, pending: { inputs: { a: 'b' }, depends_on: ['null_resource.push'] } } },
      output: {
        names: { value: ['alpha', 'gamma'] },
        uuid: { value: '${random_uuid.keep.result}' },
        secret: { value: 'hidden', sensitive: true },
      },
    });
    const plan = await planGraph({ ...opts, planFile: 'change.tfplan', replace: ['random_uuid.forced'] });
    const { inProcess, shown } = await bothReaders(opts, plan.planFile);
    // THEN both readers agree on every field
    expect(inProcess).toEqual(shown);
    // AND the plan holds each case (so the comparison covered it)
    const byAddress = new Map(inProcess.changes.map((c) => [c.address, c]));
    expect(byAddress.get('null_resource.push')).toMatchObject({ actions: ['delete', 'create'], changedKeys: ['ref'] });
    expect(byAddress.get('random_uuid.keep')).toMatchObject({ actionReason: 'replace_because_cannot_update', replacePaths: ['keepers'] });
    expect(byAddress.get('null_resource.failed')).toMatchObject({ actionReason: 'replace_because_tainted', wasTainted: true });
    expect(byAddress.get('random_uuid.forced')).toMatchObject({ actionReason: 'replace_by_request' });
    expect(byAddress.get('terraform_data.rollout')).toMatchObject({ actionReason: 'replace_by_triggers' });
    expect(byAddress.get('null_resource.gone')).toMatchObject({ actions: ['delete'], actionReason: 'delete_because_no_resource_config' });
    expect(byAddress.get('null_resource.added')).toMatchObject({ actions: ['create'] });
    expect(byAddress.get('data.null_data_source.unknown')).toMatchObject({ mode: 'data', actions: ['read'], actionReason: 'read_because_config_unknown' });
    expect(byAddress.get('data.null_data_source.pending')).toMatchObject({ mode: 'data', actions: ['read'], actionReason: 'read_because_dependency_pending' });
    expect(inProcess.outputs).not.toHaveProperty('dropped');
    expect(inProcess.outputs.names).toEqual({ value: ['alpha', 'gamma'], sensitive: false });
  });

  it('a destroy plan', async () => {
    const plan = await planGraph({ ...opts, destroy: true, planFile: 'destroy.tfplan' });
    const { inProcess, shown } = await bothReaders(opts, plan.planFile);
    expect(inProcess).toEqual(shown);
    expect(inProcess.changes.length).toBeGreaterThan(0);
    expect(inProcess.changes.every((c) => c.actions.join('+') === 'delete')).toBe(true);
  });

  it('refuses a plan file of another format version (the caller then runs tofu show -json)', async () => {
    const plan = await planGraph({ ...opts, planFile: 'version.tfplan' });
    const tfplan = zipEntry(readFileSync(plan.planFile), 'tfplan')!;
    // field 1 (version), varint: the first bytes of the buffer are 0x08 <version>
    expect(tfplan[0]).toBe(0x08);
    expect(() => decodePlan(Buffer.concat([Buffer.from([0x08, 0x02]), tfplan.subarray(2)]), new Set())).toThrow(/format 2/);
  });
});
