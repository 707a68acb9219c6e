/**
 * The one stop path of every verb (src/cli/shutdown.ts), without a process: the first signal
 * aborts the run's signal and says so; a second leaves at once, naming each lock still held
 * with the command that frees it; the exit code after a signal is 128 + its number.
 */
import { describe, expect, it } from 'vitest';
import { exitCodeOf, Shutdown } from '../../../src/cli/shutdown.js';
import { InterruptedError, ToolError } from '../../../src/errors.js';

function shutdown(who?: string) {
  let text = '';
  const exits: number[] = [];
  const s = new Shutdown({ write: (t) => (text += t), exit: (c) => exits.push(c), ...(who ? { who: async () => who } : {}) });
  return { s, text: () => text, exits };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Shutdown', () => {
  it('GIVEN a run WHEN the first SIGINT comes THEN its signal aborts, it says how it stops, and nothing exits', () => {
    const { s, text, exits } = shutdown();
    expect(s.signal.aborted).toBe(false);
    s.hear('SIGINT');
    expect(s.signal.aborted).toBe(true);
    expect(s.received).toBe('SIGINT');
    expect(text()).toContain('deploy: SIGINT received: stopping cleanly');
    expect(text()).toContain('press Ctrl-C again');
    expect(exits).toEqual([]);
  });

  it('GIVEN an interrupted verb THEN the exit is 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP; a verb that finished keeps its code', () => {
    expect([exitCodeOf('SIGINT'), exitCodeOf('SIGTERM'), exitCodeOf('SIGHUP')]).toEqual([130, 143, 129]);
    const term = shutdown().s;
    expect(term.exitCode(130, true), 'no signal: the verb says').toBe(130);
    term.hear('SIGTERM');
    expect(term.exitCode(130, true)).toBe(143);
    expect(term.exitCode(3, true), 'a request the signal cut').toBe(143);
    expect(term.exitCode(0, false), 'finished its work all the same').toBe(0);
    expect(term.exitCode(4, false), "a rollout's own verdict").toBe(4);
  });

  it('GIVEN two locks held WHEN a second signal comes THEN it exits at once naming each with the command that frees it, and none once released', async () => {
    const { s, text, exits } = shutdown();
    const forget = s.held.hold({ key: 'mig-5', id: 'L-1', where: 'http://127.0.0.1:1', free: "TF_HTTP_ADDRESS='http://127.0.0.1:1' deploy state unlock L-1 --key 'mig-5'" });
    s.held.hold({ key: 'mig-5', id: 'L-1', where: '/data', free: "deploy state unlock L-1 --key 'mig-5' --data '/data'" });
    s.hear('SIGINT');
    s.hear('SIGINT');
    s.hear('SIGINT');
    await tick();
    expect(exits, 'once, for the signal that made it leave').toEqual([130]);
    expect(text()).toContain('SIGINT again: leaving now');
    expect(text()).toContain(`the lock L-1 on "mig-5" (http://127.0.0.1:1) may stay held; free it: TF_HTTP_ADDRESS='http://127.0.0.1:1' deploy state unlock L-1 --key 'mig-5'`);
    expect(text()).toContain(`the lock L-1 on "mig-5" (/data) may stay held; free it: deploy state unlock L-1 --key 'mig-5' --data '/data'`);
    forget();
    expect(s.held.list().map((l) => l.where)).toEqual(['/data']);
  });

  it('GIVEN no lock recorded WHEN a second signal comes THEN it says none was held (a verb that records all) or names the run to look for', async () => {
    const exact = shutdown();
    exact.s.held.exact = true;
    exact.s.hear('SIGTERM');
    exact.s.hear('SIGTERM');
    await tick();
    expect(exact.exits).toEqual([143]);
    expect(exact.text()).toContain('this run held no state lock');

    const loose = shutdown("ops@vm:42'x");
    loose.s.hear('SIGINT');
    loose.s.hear('SIGTERM');
    await tick();
    expect(loose.exits).toEqual([143]);
    expect(loose.text()).toContain(`shows a lock held by ops@vm:42'x, free it once the processes this run started have ended: deploy state unlock --held-by 'ops@vm:42'\\''x'`);
  });

  it('GIVEN a run that heard SIGINT WHEN it ends in an error not of ours (the signal\'s reason, a cut request) THEN it is said as the interrupt, without a stack; ours and signal-less errors stay as they are', () => {
    const quiet = shutdown().s;
    const bare = new Error('SIGINT');
    expect(quiet.explain(bare), 'no signal: an unexpected error is one').toBe(bare);
    const { s } = shutdown();
    s.hear('SIGINT');
    const reason = s.explain(s.signal.reason);
    expect(reason).toBeInstanceOf(InterruptedError);
    expect((reason as InterruptedError).message).toBe('interrupted by SIGINT: the run stopped there, and started nothing after the signal');
    expect((reason as InterruptedError).exitCode).toBe(130);
    expect(((s.explain(new TypeError('fetch failed')) as Error).message)).toBe('interrupted by SIGINT (fetch failed): the run stopped there, and started nothing after the signal');
    const ours = new ToolError('tofu plan failed');
    expect(s.explain(ours)).toBe(ours);
  });
});
