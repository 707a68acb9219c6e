/**
 * .forgejo/scripts/deploy-summary.mjs: `deploy plan|apply --json` -> the job summary, and
 * .forgejo/scripts/deploy-step.sh: the step's exit code is deploy's.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module without types (it runs on the runner's own node)
import { cell, renderSummary } from '../../../../.forgejo/scripts/deploy-summary.mjs';

const summaryScript = fileURLToPath(new URL('../../../../.forgejo/scripts/deploy-summary.mjs', import.meta.url));

const applied = {
  verb: 'apply',
  exitCode: 4,
  targets: [
    {
      target: 'all',
      namespace: 'prod',
      stateKey: 'demo-all',
      changes: true,
      applied: true,
      nodeNames: ['mail', 'web'],
      nodes: [
        { node: 'mail', words: 'push r/prod/mail:broken-1; update its Deployment; replace its pod and wait for it to be ready' },
        { node: 'web', words: 'no change' },
      ],
      other: [],
      degrade: [{ node: 'mail', message: '/etc/mail-keys is not under /var/lib | lost on replacement' }],
      rollouts: [
        {
          node: 'mail',
          namespace: 'prod',
          outcome: 'rolled-back',
          reason: 'systemd-degraded',
          message: 'the pod did not become ready:\nsystemd is degraded',
          failedUnits: ['broken.service'],
        },
      ],
    },
  ],
};

describe('renderSummary', () => {
  it('gives one row per node with its change and rollout outcome, the exit code and its meaning', () => {
    const md: string = renderSummary('apply', applied, 4);
    expect(md).toContain('### deploy apply: exit 4 (a rollout failed and the Deployment was set back to the previous image)');
    expect(md).toContain('| all | prod | mail | push r/prod/mail:broken-1; update its Deployment; replace its pod and wait for it to be ready | rolled-back: the pod did not become ready: systemd is degraded (failed units: broken.service) |');
    expect(md).toContain('| all | prod | web | no change | no pod change |');
    expect(md).toContain('- all / mail: /etc/mail-keys is not under /var/lib \\| lost on replacement');
  });

  it('FR-009: lists the node names each target\'s graph outputs, and nothing for a target without them', () => {
    const md: string = renderSummary('apply', applied, 4);
    expect(md).toContain("Node names (the graph's output):\n\n- all (namespace prod): mail, web\n");
    const planned = {
      verb: 'plan',
      targets: [
        { ...applied.targets[0], target: 'web', namespace: 'prod-web', nodeNames: [], rollouts: [] },
        { ...applied.targets[0], target: 'mail', namespace: 'prod-mail', nodeNames: undefined, rollouts: [] },
      ],
    };
    const plan: string = renderSummary('plan', planned, 0);
    expect(plan).toContain("Node names (the graph's output, as planned):\n\n- web (namespace prod-web): none\n");
    expect(plan).not.toContain('- mail (namespace prod-mail)');
    expect(renderSummary('plan', { targets: [{ ...planned.targets[1] }] }, 0)).not.toContain('Node names');
  });

  it('says so when deploy printed no result', () => {
    expect(renderSummary('plan', undefined, 2)).toContain('### deploy plan: exit 2 (bad input');
    expect(renderSummary('plan', undefined, 2)).toContain('printed no result');
  });

  it('keeps cells on one line without breaking the table', () => {
    expect(cell('a|b\nc')).toBe('a\\|b c');
  });
});

describe('deploy-summary.mjs and deploy-step.sh as programs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cd-summary-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the JSON file, runs on the PATH node, and never fails on a bad file', async () => {
    await writeFile(join(dir, 'apply.json'), JSON.stringify(applied));
    const ok = await execa('node', [summaryScript, 'apply', join(dir, 'apply.json'), '4']);
    expect(ok.stdout).toContain('| all | prod | web |');
    await writeFile(join(dir, 'empty.json'), '');
    const empty = await execa('node', [summaryScript, 'apply', join(dir, 'empty.json'), '3']);
    expect(empty.exitCode).toBe(0);
    expect(empty.stdout).toContain('exit 3 (a tool or the cluster failed');
  });

  it('deploy-step.sh exits with the code of deploy and appends the summary to GITHUB_STEP_SUMMARY', async () => {
    // A repository copy whose bin/deploy is a fixture printing a result and exiting 4.
    const repo = join(dir, 'repo');
    await execa('mkdir', ['-p', join(repo, 'bin'), join(repo, '.forgejo/scripts'), join(dir, 'tmp')]);
    const stepScript = fileURLToPath(new URL('../../../../.forgejo/scripts/deploy-step.sh', import.meta.url));
    await execa('cp', [stepScript, summaryScript, join(repo, '.forgejo/scripts/')]);
    await writeFile(
      join(repo, 'bin/deploy'),
      `#!/usr/bin/env node\nprocess.stdout.write(JSON.stringify(${JSON.stringify(applied)}));\nprocess.stderr.write('args:' + process.argv.slice(2).join(' ') + ' pw:' + (process.env.TF_HTTP_PASSWORD ?? 'unset') + '\\n');\nprocess.exitCode = 4;\n`,
    );
    await chmod(join(repo, 'bin/deploy'), 0o755);
    const summary = join(dir, 'summary.md');
    const r = await execa('bash', [join(repo, '.forgejo/scripts/deploy-step.sh'), 'apply'], {
      reject: false,
      env: { RUNNER_TEMP: join(dir, 'tmp'), GITHUB_STEP_SUMMARY: summary, DEPLOY_PLAN: 'g.json', DEPLOY_TARGET: '', TF_HTTP_PASSWORD: '' },
    });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('args:apply --plan g.json --json pw:unset');
    expect(r.stdout).toContain('::error::deploy apply exited with code 4');
    expect(await readFile(summary, 'utf8')).toContain('| all | prod | mail |');
  });
});
