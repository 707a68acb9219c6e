/**
 * One laptop -> a shared backend (issue 17, item 6), with the real tofu on the local cluster:
 * a group deployed with the embedded backend moves to a `deploy state serve` on another
 * loopback port with `deploy state migrate --to`; the plan against the new backend has no
 * changes, a second migrate is a no-op, and the moved state serves a destroy.
 * On the way, the run's state lock (item 5): while the apply runs, the lock's Who is the run's
 * DEPLOY_RUN_ID.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_FILE, SqliteStateStore } from '../../src/state/store/sqlite-store.js';
import { repoRoot } from '../integration/images-scripts.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../support/state-server.js';
import { DeployHarness, images } from './harness.js';

const creds = { DEPLOY_STATE_USERNAME: 'team', DEPLOY_STATE_PASSWORD: `migrate-${process.pid}-pw` };
const clientCreds = { TF_HTTP_USERNAME: creds.DEPLOY_STATE_USERNAME, TF_HTTP_PASSWORD: creds.DEPLOY_STATE_PASSWORD };

describe('deploy state migrate: embedded -> deploy state serve', () => {
  let h: DeployHarness;
  let shared: ServerProcess | undefined;
  beforeAll(async () => {
    ensureBuilt();
    h = await DeployHarness.create('migrate');
  });
  afterAll(async () => {
    await shared?.stop();
    await h?.cleanup();
  });

  const deployState = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    execa(join(repoRoot, 'bin', 'deploy'), ['state', ...args], { env: { ...h.env, ...env }, reject: false, timeout: 120_000 });

  it('GIVEN a group applied with the embedded backend WHEN its states move to a shared backend THEN plan there is a no-op, a second migrate changes nothing, and destroy works from there', async () => {
    const plan = await h.writePlan('group', { solo: { image: await images.good() } });
    const embeddedData = join(h.env.DEPLOY_STATE_DIR!, 'state');

    // the run's lock names the run while it applies
    const runId = `e2e migrate apply ${process.pid}`;
    const applying = h.deploy('apply', plan, ['--target', 'all'], { DEPLOY_RUN_ID: runId });
    const seen = new Set<string>();
    let done = false;
    void applying.finally(() => (done = true));
    while (!done) {
      // opened only once the run made it (opening would create it)
      const store = existsSync(join(embeddedData, DATABASE_FILE)) ? SqliteStateStore.open(embeddedData) : undefined;
      const who = (await store?.lockOf('e2e-all'))?.Who;
      await store?.close();
      if (who) seen.add(who);
      await new Promise((r) => setTimeout(r, 200));
    }
    const applied = await applying;
    expect(applied.exitCode, applied.stderr).toBe(0);
    expect([...seen]).toEqual([runId]);
    const before = await h.getJson(['get', 'deployment', 'solo']);
    const machineId = before.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'container_uuid').value;
    const podUid = (await h.podOf('solo')).metadata.uid;

    shared = await startServerProcess(join(h.dir, 'shared-state'), creds);
    const moved = await deployState(['migrate', '--to', shared.url, '--json'], clientCreds);
    expect(moved.exitCode, moved.stderr).toBe(0);
    const outcomes = JSON.parse(moved.stdout);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ key: 'e2e-all', result: 'copied' });
    expect(moved.stderr).toContain(`export TF_HTTP_ADDRESS=${shared.url}`);

    const onShared = { TF_HTTP_ADDRESS: shared.url, ...clientCreds };
    const planned = await h.deploy('plan', plan, ['--target', 'all'], onShared);
    expect(planned.exitCode, planned.stderr).toBe(0);
    expect(planned.json.targets[0].changes, planned.stdout).toBe(false);

    // again: nothing to do, nothing written
    const versionsBefore = JSON.parse((await deployState(['versions', 'e2e-all', '--json'], onShared)).stdout).length;
    const again = await deployState(['migrate', '--to', shared.url, '--json'], clientCreds);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)[0]).toMatchObject({ key: 'e2e-all', result: 'already-there', serial: outcomes[0].serial });
    expect(JSON.parse((await deployState(['versions', 'e2e-all', '--json'], onShared)).stdout)).toHaveLength(versionsBefore);

    // the node was never touched: same pod, same machine ID
    expect((await h.podOf('solo')).metadata.uid).toBe(podUid);
    const after = await h.getJson(['get', 'deployment', 'solo']);
    expect(after.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'container_uuid').value).toBe(machineId);

    // the moved state is the real one: destroy from the shared backend removes the namespace
    const destroyed = await h.deploy('destroy', plan, ['--target', 'all'], onShared);
    expect(destroyed.exitCode, destroyed.stderr).toBe(0);
    const ns = await h.kubectl(['get', 'namespace', h.namespace, '-o', 'jsonpath={.status.phase}'], { namespace: null });
    expect(ns.exitCode !== 0 || ns.stdout === 'Terminating', `namespace ${h.namespace}: ${ns.stdout}`).toBe(true);
  });
});
