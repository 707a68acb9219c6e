import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode, InterruptedError, ToolError } from '../../../src/errors.js';
import { MAX_ERROR_LINES, runTool } from '../../../src/tools/run.js';
import { until } from '../../support/until.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const node = process.execPath;
const fixture = (name: string) => join(fixtures, name);

function ownPgid(): string {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]!;
}

/** Resolves when `pred` holds for a line seen so far; rejects after `ms`. */
function waitForLine(lines: string[], pred: (l: string) => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (lines.some(pred)) return resolve();
      if (Date.now() > deadline) return reject(new Error(`no matching line within ${ms} ms: ${lines.join(' / ')}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}

describe('runTool', () => {
  it('passes arguments verbatim (no shell), with env, cwd and stdin', async () => {
    // GIVEN arguments a shell would split or expand
    const args = ['a b', '$HOME', '; echo pwned', "it's"];
    // WHEN the fixture runs with extra env, a cwd and input
    const r = await runTool(node, [fixture('echo-args.mjs'), ...args], {
      env: { FIXTURE_VAR: 'from-env' },
      cwd: tmpdir(),
      input: 'secret-token',
      timeoutMs: 10_000,
    });
    // THEN it sees exactly those values
    const seen = JSON.parse(r.stdout) as { args: string[]; cwd: string; env: string; input: string };
    expect(seen.args).toEqual(args);
    expect(seen.cwd).toBe(tmpdir());
    expect(seen.env).toBe('from-env');
    expect(seen.input).toBe('secret-token');
    expect(r.exitCode).toBe(0);
    expect(r.command).toContain('"a b"');
  });

  it('calls the line callbacks once per whole line, in order, per stream', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const r = await runTool(node, [fixture('lines.mjs'), '5', '0'], {
      timeoutMs: 10_000,
      onStdoutLine: (l) => out.push(l),
      onStderrLine: (l) => err.push(l),
    });
    expect(out).toEqual(['out 1', 'out 2', 'out 3', 'out 4', 'out 5']);
    expect(err).toEqual(['err 1', 'err 2', 'err 3', 'err 4', 'err 5']);
    expect(r.stdout.split('\n')).toEqual(out);
  });

  it('names a missing program and how to get it', async () => {
    const err = await runTool('no-such-program-xyz', ['--version'], {
      timeoutMs: 5_000,
      installHint: 'run `npm run tools`',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    const e = err as ToolError;
    expect(e.message).toContain('no-such-program-xyz was not found');
    expect(e.hint).toBe('run `npm run tools`');
    expect(e.exitCode).toBe(ExitCode.tool);
  });

  it('turns a failure into a ToolError with the command and at most the last 20 output lines', async () => {
    // GIVEN a program that prints 30 lines on each stream and exits 3
    const err = await runTool(node, [fixture('lines.mjs'), '30', '3'], { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    const msg = (err as Error).message;
    // THEN the message names the command and the exit code
    expect(msg).toContain('lines.mjs 30 3 failed (exit code 3)');
    // AND carries exactly the last 20 lines
    const quoted = msg.split('\n').filter((l) => l.startsWith('  | '));
    expect(quoted).toHaveLength(MAX_ERROR_LINES);
    expect(quoted.at(-1)).toMatch(/30$/);
    expect(msg).not.toContain('out 1\n');
  });

  it('accepts the exit codes the caller names, and returns failures when reject is false', async () => {
    const two = await runTool(node, [fixture('lines.mjs'), '1', '2'], { timeoutMs: 10_000, okExitCodes: [0, 2] });
    expect(two.exitCode).toBe(2);
    const seven = await runTool(node, [fixture('lines.mjs'), '1', '7'], { timeoutMs: 10_000, reject: false });
    expect(seven.exitCode).toBe(7);
    expect(seven.tail).toEqual(['out 1', 'err 1']);
  });

  it('stops a program at its deadline', async () => {
    const started = Date.now();
    const err = await runTool(node, ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toContain('did not finish within 300ms');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('says the working directory is missing, not the program (exit 3)', async () => {
    const gone = join(mkdtempSync(join(tmpdir(), 'run-cwd-')), 'removed');
    const err = await runTool(node, ['-e', ''], { cwd: gone, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).exitCode).toBe(ExitCode.tool);
    expect((err as Error).message).toContain(`its working directory ${gone} does not exist`);
    expect((err as Error).message).not.toContain('was not found');
  });

  it('stops a program whose output passes the buffer limit, and says so (exit 3), also when it exits 0', async () => {
    const err = await runTool(node, ['-e', 'process.stdout.write("x".repeat(100))'], { timeoutMs: 5_000, maxBufferChars: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toContain('printed more than 10 characters on one stream and was stopped');
  });

  it('lets the program run to its end when a line callback throws, then throws that error (a bug of the caller, not a lost failure)', async () => {
    const bug = new Error('bug in the callback');
    const seen: string[] = [];
    const err = await runTool(node, [fixture('lines.mjs'), '5', '0'], {
      timeoutMs: 10_000,
      onStdoutLine: (l) => {
        seen.push(l);
        if (l === 'out 2') throw bug;
      },
    }).catch((e: unknown) => e);
    expect(err).toBe(bug);
    expect(seen).toEqual(['out 1', 'out 2', 'out 3', 'out 4', 'out 5']);
  });

  it('does not start anything when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await runTool(node, ['-e', ''], { timeoutMs: 5_000, signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
  });

  describe("interrupt: 'sigint-once'", () => {
    it('forwards exactly one SIGINT however often the run is aborted, and waits for the clean stop', async () => {
      // GIVEN a tofu-like child that abandons its state on a second SIGINT
      const lines: string[] = [];
      const ac = new AbortController();
      const running = runTool(node, [fixture('interruptible.mjs'), 'stop', '1500'], {
        // the deadline passes while the child is saving: it must not add a second SIGINT
        timeoutMs: 1_000,
        signal: ac.signal,
        interrupt: 'sigint-once',
        interruptGraceMs: 10_000,
        onStdoutLine: (l) => lines.push(l),
      }).catch((e: unknown) => e);
      await waitForLine(lines, (l) => l === 'running');
      // WHEN the run is aborted, aborted again (a second Ctrl-C), and its deadline passes too
      const abortedAt = Date.now();
      ac.abort();
      ac.abort();
      const err = await running;
      expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(1_400);
      // THEN the child saw one interrupt, stopped cleanly, and the run reports an interruption
      expect(lines.filter((l) => l.startsWith('received interrupt'))).toEqual(['received interrupt 1']);
      expect(lines).toContain('state saved');
      expect(lines).not.toContain('abandoning state');
      expect(err).toBeInstanceOf(InterruptedError);
      expect((err as Error).message).toContain('was interrupted (exit code 1)');
      // AND the child ran in its own process group (a terminal Ctrl-C would not reach it twice)
      const pgid = lines.find((l) => l.startsWith('pgid '))!.slice(5);
      expect(pgid).not.toBe(ownPgid());
    });

    it.each([
      ['process', 0],
      ['group', 1],
    ] as const)('with interruptTarget %s, the processes the child started get %i SIGINT', async (target, expected) => {
      const { lines, ac, log, running } = interruptibleParent('300', target);
      await waitForLine(lines, (l) => l === 'running');
      ac.abort();
      const err = await running;
      expect(err).toBeInstanceOf(InterruptedError);
      expect(lines.filter((l) => l.startsWith('received interrupt'))).toEqual(['received interrupt 1']);
      // the grandchild has written all it got once it has ended (with 'process', it outlives the child)
      await until('the grandchild\'s end ("grandchild exit" in its log)', () => readFileSync(log, 'utf8').includes('grandchild exit'), { timeoutMs: 10_000, seen: () => readFileSync(log, 'utf8') });
      const seen = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('grandchild interrupt'));
      expect(seen).toEqual(expected === 1 ? ['grandchild interrupt 1'] : []);
    });

    it('with interruptTarget group, returns only once every process of the group has ended (a step still winding down after its parent exited)', async () => {
      // GIVEN a child that exits 100 ms after its SIGINT, and a grandchild that keeps running ~2 s
      const { lines, ac, log, running } = interruptibleParent('100', 'group');
      await waitForLine(lines, (l) => l === 'running');
      // WHEN the run is interrupted
      ac.abort();
      const err = await running;
      // THEN it is an interrupt, and the grandchild had ended by then
      expect(err).toBeInstanceOf(InterruptedError);
      expect(readFileSync(log, 'utf8')).toContain('grandchild exit');
    });

    it('kills the child when it does not stop within the grace period', async () => {
      const lines: string[] = [];
      const ac = new AbortController();
      const started = Date.now();
      const running = runTool(node, [fixture('interruptible.mjs'), 'ignore'], {
        timeoutMs: 20_000,
        signal: ac.signal,
        interrupt: 'sigint-once',
        interruptGraceMs: 500,
        onStdoutLine: (l) => lines.push(l),
      }).catch((e: unknown) => e);
      await waitForLine(lines, (l) => l === 'running');
      ac.abort();
      const err = await running;
      expect(lines.filter((l) => l.startsWith('received interrupt'))).toHaveLength(1);
      expect(err).toBeInstanceOf(InterruptedError);
      expect((err as Error).message).toContain('killed by SIGKILL');
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  });

  it("sends SIGTERM on abort in the default 'terminate' mode", async () => {
    const ac = new AbortController();
    const running = runTool(node, ['-e', 'console.log("up"); setTimeout(() => {}, 60_000)'], {
      timeoutMs: 20_000,
      signal: ac.signal,
      onStdoutLine: () => ac.abort(),
    }).catch((e: unknown) => e);
    const err = await running;
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toContain('killed by SIGTERM');
  });
});

/** interruptible.mjs as a parent that exits `exitAfterMs` after its SIGINT and starts a grandchild logging to a new file. */
function interruptibleParent(exitAfterMs: string, interruptTarget: 'process' | 'group') {
  const lines: string[] = [];
  const ac = new AbortController();
  const log = join(mkdtempSync(join(tmpdir(), 'run-test-')), 'grandchild.log');
  writeFileSync(log, '');
  const running = runTool(node, [fixture('interruptible.mjs'), 'parent', exitAfterMs, log], {
    timeoutMs: 20_000,
    signal: ac.signal,
    interrupt: 'sigint-once',
    interruptTarget,
    onStdoutLine: (l) => lines.push(l),
  }).catch((e: unknown) => e);
  return { lines, ac, log, running };
}
