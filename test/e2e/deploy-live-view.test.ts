/**
 * The operator's view (issue 21 items 1-2): `bin/deploy apply` in a real terminal (tmux, a
 * fixed size; the screen read with capture-pane) shows one line per node, updated in place,
 * ending `ready`, or `rolled back` with the failed unit; without a terminal, plain lines with
 * the nodes' names. No construct ID (`node-web_deployment_0A1B2C3D`) anywhere.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shq } from '../../src/contract/shell.js';
import { DeployHarness, images } from './harness.js';
import { repoRoot } from '../integration/images-scripts.js';

const NODES = ['alpha', 'bravo', 'charlie'];
const COLUMNS = 150;
const ROWS = 50;
/** A CDKTF construct ID: `<construct>_<part>_<8 hex>`. */
const CONSTRUCT_ID = /[a-z0-9-]+_[a-z-]+_[0-9A-F]{8}\b/;

/** A tmux server of the test's own (its own socket), so nothing else's sessions are touched. */
class Terminal {
  private constructor(
    private readonly socket: string,
    private readonly dir: string,
  ) {}

  static async open(): Promise<Terminal> {
    return new Terminal(`deploy-live-${process.pid}`, await mkdtemp(join(tmpdir(), 'deploy-live-')));
  }

  private tmux(args: string[], env?: NodeJS.ProcessEnv) {
    return execa('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { env, reject: false, timeout: 30_000 });
  }

  /**
   * Runs `argv` in a new tmux server (started with `env`, which its windows inherit) of COLUMNS x ROWS and waits for it to end; returns
   * its exit code and the screen (and scrollback) as text, with or without the escape codes.
   */
  async run(argv: string[], env: NodeJS.ProcessEnv, timeoutMs = 600_000): Promise<{ exitCode: number; screen: string; styled: string }> {
    const done = join(this.dir, `exit-${Date.now()}`);
    // the pane stays after the command (sleep) so its screen can be read; the exit code in a file
    const script = `${argv.map(shq).join(' ')}; echo $? > ${shq(done)}; sleep 3600`;
    const session = `s${Date.now()}`;
    const started = await this.tmux(['new-session', '-d', '-s', session, '-x', String(COLUMNS), '-y', String(ROWS), script], env);
    if (started.exitCode !== 0) throw new Error(`tmux new-session failed: ${started.stderr}`);
    const until = Date.now() + timeoutMs;
    let code: string | undefined;
    while (code === undefined && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 1000));
      code = await readFile(done, 'utf8').then((t) => t.trim(), () => undefined);
    }
    const screen = (await this.tmux(['capture-pane', '-p', '-S', '-500', '-t', session])).stdout;
    const styled = (await this.tmux(['capture-pane', '-p', '-e', '-S', '-500', '-t', session])).stdout;
    // the server ends with its one session: the next run starts one with its own environment
    await this.tmux(['kill-server']);
    if (code === undefined) throw new Error(`the command did not end within ${timeoutMs} ms; the screen:\n${screen}`);
    return { exitCode: Number(code), screen, styled };
  }

  async close(): Promise<void> {
    await this.tmux(['kill-server']);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The view's line of a node: two spaces, the name, then the elapsed time (not `name:`). */
function nodeLines(screen: string, node: string): string[] {
  return screen.split('\n').filter((l) => new RegExp(`^  ${node} +(\\d+m)?\\d+s  `).test(l));
}

describe('the live view of deploy apply', () => {
  let h: DeployHarness;
  let term: Terminal;
  let goodPlan: string;

  beforeAll(async () => {
    h = await DeployHarness.create('live');
    term = await Terminal.open();
    const good = await images.good();
    goodPlan = await h.writePlan('good', Object.fromEntries(NODES.map((n) => [n, { image: good }])));
  });
  afterAll(async () => {
    await term?.close();
    await h?.cleanup();
  });

  const deployArgv = (plan: string) => [join(repoRoot, 'bin', 'deploy'), 'apply', '--plan', plan, '--target', 'all'];
  /**
   * The terminal's environment: not under CI, where deploy prints plain lines even on a
   * terminal. CI is set to undefined rather than left out: execa adds the test's own
   * environment (CI=true under .ci/run), and an undefined value is what keeps it out.
   */
  const terminalEnv = (extra: NodeJS.ProcessEnv) => ({ ...h.env, CI: undefined, ...extra });

  it('GIVEN a terminal WHEN a 3-node group is applied THEN the screen has one line per node, each ending `ready`, in colour, and no construct ID', async () => {
    const r = await term.run(deployArgv(goodPlan), terminalEnv({ NO_COLOR: '' }));
    expect(r.exitCode, r.screen).toBe(0);
    for (const n of NODES) {
      const lines = nodeLines(r.screen, n);
      expect(lines, r.screen).toHaveLength(1);
      expect(lines[0], r.screen).toMatch(/ ready$/);
    }
    // the target's line: its namespace and what happened to it last
    expect(r.screen).toMatch(new RegExp(`^\\[all\\] namespace ${h.namespace} +\\d+s  NetworkPolicy created$`, 'm'));
    expect(r.screen).not.toMatch(CONSTRUCT_ID);
    // green `ready` (SGR 32) on a terminal without NO_COLOR
    expect(r.styled).toMatch(/\x1b\[32mready/);
    console.log(`the screen of a good apply (${COLUMNS}x${ROWS}):\n${r.screen.trimEnd()}`);
  });

  it('GIVEN no terminal WHEN a node changes THEN plain lines name the node and what happened to it, once per change, and no construct ID', async () => {
    const changed = await images.goodWith('live=changed');
    const plan = await h.writePlan('changed', { alpha: { image: changed }, bravo: { image: await images.good() }, charlie: { image: await images.good() } });
    const r = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const said = r.stderr.split('\n').map((l) => l.replace(/^\[ *\d+s\] /, ''));
    expect(said).toContain('[all] alpha: pushing the image');
    expect(said.some((l) => /^\[all\] alpha: image pushed in \d+s$/.test(l)), r.stderr).toBe(true);
    expect(said).toContain('[all] alpha: Deployment updated');
    expect(said).toContain('[all] alpha: waiting for the pod');
    expect(said.filter((l) => /^\[all\] alpha: ready in \d+s$/.test(l)), r.stderr).toHaveLength(1);
    // the nodes that do not change say nothing
    expect(r.stderr).not.toMatch(/\] bravo: |\] charlie: /);
    expect(r.stderr).not.toMatch(CONSTRUCT_ID);
    expect(r.stderr).not.toContain('\x1b[');
  });

  it('GIVEN a terminal and NO_COLOR WHEN a node does not boot THEN its line says `rolled back` and names broken.service, without colour', async () => {
    const broken = await images.broken();
    const good = await images.good();
    const plan = await h.writePlan('broken', { alpha: { image: good }, bravo: { image: good }, charlie: { image: broken } });
    const r = await term.run(deployArgv(plan), terminalEnv({ NO_COLOR: '1' }));
    expect(r.exitCode, r.screen).toBe(4);
    const lines = nodeLines(r.screen, 'charlie');
    expect(lines, r.screen).toHaveLength(1);
    expect(lines[0], r.screen).toMatch(/ rolled back: systemd degraded \(broken\.service\)/);
    expect(r.screen).not.toMatch(CONSTRUCT_ID);
    // NO_COLOR: no colour (SGR) code at all
    expect(r.styled).not.toMatch(/\x1b\[[0-9;]*m/);
    console.log(`the screen of an apply with a broken node (${COLUMNS}x${ROWS}):\n${r.screen.trimEnd()}`);
  });
});
