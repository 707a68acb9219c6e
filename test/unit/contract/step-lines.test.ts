/**
 * The typed lines of the graph's shell steps (src/contract/step-lines.ts): the shell side run
 * with sh and bash, read back with parseStepLine, whatever the message holds.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { formatStepLine, parseStepLine, sayStepLine, STEP_LINE_SHELL, stepLinesInWords, stepLinesOf, stepLineWords, type StepLine } from '../../../src/contract/step-lines.js';
import { shq } from '../../../src/contract/shell.js';
import { formatDiagnostic } from '../../../src/tools/tofu/tofu-events.js';

const HOSTILE = [`it's "quoted"`, 'back\\slash \\n not a newline', 'two\nlines', 'a\ttab', '$HOME `date` $(id)', '{"deployStep":"push"}', 'ünïcödé', ''];

const runShell = (shell: string, body: string) => execa(shell, ['-c', [...STEP_LINE_SHELL, body].join('\n')], { reject: false, env: { PATH: process.env.PATH } });

describe('a typed line of a step', () => {
  it('GIVEN a line deploy formats THEN parseStepLine gives it back, and its words are the ones people read', () => {
    const l: StepLine = { deployStep: 'push', event: 'failed', node: 'web', message: 'image archive /x is missing' };
    expect(parseStepLine(formatStepLine(l))).toEqual(l);
    expect(stepLineWords(l)).toBe('deploy: node web: image archive /x is missing');
    expect(stepLineWords({ ...l, event: 'build', message: 'compiling' })).toBe('web: build: compiling');
    expect(stepLineWords({ deployStep: 'spire', event: 'failed', node: 's.example', message: 'the spire node s.example is down' })).toBe('deploy: the spire node s.example is down');
  });

  it.each(['bash', '/bin/sh'])('GIVEN hostile messages and node names WHEN %s prints them THEN each comes back exactly, one line each', async (shell) => {
    const body = HOSTILE.map((m) => sayStepLine('push', 'failed', shq(`n${m}`), shq(m))).join('\n');
    const r = await runShell(shell, body);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toHaveLength(HOSTILE.length);
    expect(lines.map(parseStepLine)).toEqual(HOSTILE.map((m) => ({ deployStep: 'push', event: 'failed', node: `n${m}`, message: m })));
  });

  it.each(['bash', '/bin/sh'])('GIVEN a stream of lines (a build) WHEN %s turns them into typed lines THEN each line is one, its last without a newline too; control characters are dropped', async (shell) => {
    const r = await runShell(shell, `printf 'one "q" \\\\b\\ntwo\\tt\\rx\\nlast' | ${stepLinesOf('push', 'build', shq('we"b'))}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr.split('\n').map(parseStepLine)).toEqual(['one "q" \\b', 'two\ttx', 'last'].map((message) => ({ deployStep: 'push', event: 'build', node: 'we"b', message })));
  });

  it('GIVEN lines that are not ours THEN parseStepLine says so', () => {
    for (const text of [
      'deploy: node web: image archive /x is missing',
      '{"deployStep":"push","event":"failed","node":"web"}',
      '{"deployStep":"other","event":"failed","node":"web","message":"m"}',
      '{"deployStep":"push","event":"failed","node":"web","message":"m"',
      '{"deployRolloutStep":1,"event":"outcome"}',
      `printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2"`,
      '',
    ]) {
      expect(parseStepLine(text), text).toBeUndefined();
    }
  });

  it("GIVEN a tofu diagnostic with a step's output after tofu's words THEN its typed lines are said in their words, other lines as they are", () => {
    const line = formatStepLine({ deployStep: 'spire', event: 'failed', node: 's', message: 'the spire node s is not reachable' });
    expect(stepLinesInWords(`Program: /bin/sh\nError Message: ${line}\nssh: refused\nState: exit status 1`)).toBe('Program: /bin/sh\nError Message: deploy: the spire node s is not reachable\nssh: refused\nState: exit status 1');
    const push = formatStepLine({ deployStep: 'push', event: 'failed', node: 'web', message: 'image archive /x "y" is missing' });
    const d = { severity: 'error' as const, summary: 'local-exec provisioner error', detail: `Error running command 'deploy_line push failed': exit status 1. Output: ${push}\n`, address: undefined, where: undefined };
    expect(formatDiagnostic(d)).toBe(`Error: local-exec provisioner error: the step's command failed (exit status 1); its output:\ndeploy: node web: image archive /x "y" is missing`);
  });
});
