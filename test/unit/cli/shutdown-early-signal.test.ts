/**
 * A Ctrl-C while deploy is still starting is never lost (bin/deploy.js): before the program
 * has loaded it leaves at once (130, or Node's own death by SIGINT before any handler), once
 * loaded the verb stops cleanly. It was lost when it came while the program loaded: bin/deploy.js
 * removed its early listeners, which stops Node's watcher of the signal and drops a signal
 * caught but not yet dispatched, and the run went on as if there had been no Ctrl-C (found by
 * the random-SIGINT e2e: an apply signalled 0.8 s in ran to its end and exited 0).
 * Shown on `deploy state serve`, which serves until a signal stops it: a lost signal leaves
 * it serving.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DEPLOY_BIN as deploy } from '../../support/deploy-bin.js';

/** One serve, one SIGINT `delayMs` after its start: how it ended, or 'still serving'. */
async function serveInterrupted(delayMs: number): Promise<string> {
  const data = mkdtempSync(join(tmpdir(), 'early-signal-'));
  const child = execa(deploy, ['state', 'serve', '--listen', '127.0.0.1:0', '--data', data], { reject: false, timeout: 60_000, forceKillAfterDelay: false });
  setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGINT'), delayMs);
  const ended = await Promise.race([child.then((r) => (r.signal ? `killed by ${r.signal}` : `exit ${r.exitCode}`)), new Promise<string>((r) => setTimeout(() => r('still serving'), delayMs + 10_000))]);
  if (ended === 'still serving') {
    child.kill('SIGKILL');
    await child;
  }
  return ended;
}

describe('a signal while deploy starts', () => {
  it('GIVEN deploy starting WHEN one SIGINT comes at any moment of its start THEN it ends (never lost)', async () => {
    // over the start: Node's bootstrap, bin/deploy.js, the program's modules, the verb
    const delays = Array.from({ length: 24 }, (_, i) => 40 + i * 30);
    const outcomes: string[] = [];
    for (let i = 0; i < delays.length; i += 4) {
      outcomes.push(...(await Promise.all(delays.slice(i, i + 4).map(serveInterrupted))));
    }
    const lost = delays.filter((_, i) => outcomes[i] === 'still serving');
    expect(lost, `signals lost at these delays (ms); all outcomes: ${delays.map((d, i) => `${d}: ${outcomes[i]}`).join(', ')}`).toEqual([]);
    for (const o of outcomes) expect(['exit 0', 'exit 130', 'killed by SIGINT']).toContain(o);
  }, 120_000);
});
