import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fitWidth, renderRows } from '../../../../src/workflow/view/tty-view.js';
import { openRunView, wantsColour, wantsLiveView } from '../../../../src/workflow/view/open-run-view.js';
import { createRunRows, type Row } from '../../../../src/workflow/view/run-rows.js';
import { createPlainView } from '../../../../src/workflow/view/plain-view.js';

const row = (over: Partial<Row>): Row => ({ target: 'all', node: 'mail', label: 'mail', status: 'active', words: 'waiting for the pod: booting', detail: '', since: 0, startedAt: 0, endedAt: undefined, output: '', ...over });

describe('the frame of the live view', () => {
  it('GIVEN rows THEN one line each: label, elapsed (in the state, or the total once ended), words, detail', () => {
    const frame = renderRows(
      [
        row({ node: undefined, label: 'namespace shop', status: 'ok', words: 'NetworkPolicy created', since: 0, startedAt: 0, endedAt: 2000 }),
        row({ since: 5000, detail: 'systemd is booting' }),
        row({ label: 'web', node: 'web', status: 'ok', words: 'ready', startedAt: 1000, endedAt: 66_000 }),
      ],
      { now: 17_000, width: 200, colour: false },
    );
    expect(frame.split('\n')).toEqual([
      '[all] namespace shop      2s  NetworkPolicy created',
      '  mail                   12s  waiting for the pod: booting  systemd is booting',
      '  web                  1m05s  ready',
    ]);
  });

  it("GIVEN a narrow terminal THEN each line is cut to its width, and colour codes are never cut", () => {
    const rows = [row({ detail: 'systemd is booting (systemd: starting) and this goes on and on' })];
    for (const colour of [false, true]) {
      const line = renderRows(rows, { now: 1000, width: 40, colour });
      expect(line.replace(/\x1b\[[0-9;]*m/g, '')).toBe('  mail      1s  waiting for the pod: b…');
    }
    expect(renderRows(rows, { now: 1000, width: 40, colour: true })).toMatch(/^ {2}mail {6}1s {2}\x1b\[33mwaiting for the pod: b…\x1b\[39m$/);
    expect(fitWidth('abc', 3)).toBe('abc');
    expect(fitWidth('abcd', 3)).toBe('ab…');
  });

  it('GIVEN NO_COLOR or no terminal THEN no colour', () => {
    expect(wantsColour({ isTTY: true }, {})).toBe(true);
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(wantsColour({ isTTY: false }, {})).toBe(false);
  });

  it('GIVEN a terminal THEN the live view, but plain lines with TERM=dumb or under CI (act gives its steps a terminal)', () => {
    expect(wantsLiveView({ isTTY: true }, {})).toBe(true);
    expect(wantsLiveView({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(wantsLiveView({ isTTY: true }, { CI: 'true' })).toBe(false);
    expect(wantsLiveView({ isTTY: false }, {})).toBe(false);
  });

  it('GIVEN a stream that is no terminal THEN the view writes plain lines with the clock', async () => {
    const s = new PassThrough();
    let text = '';
    s.on('data', (c) => (text += c));
    const view = await openRunView(s, {}, Date.now());
    view.note('[all] tofu init');
    view.planned({ target: 'all', namespace: 'shop', changes: true, nodes: [{ node: 'mail', words: 'push', changes: true }] });
    view.tofu('all', { kind: 'apply-start', address: 'null_resource.image-mail_push_0A1B2C3D', action: 'create' });
    view.close();
    expect(text.split('\n')).toEqual(['[   0s] [all] tofu init', '[   0s] [all] mail: pushing the image', '']);
  });

  it('GIVEN a node of the group\'s rollback THEN the live row shows its way back with its own time, and the plain view says each change with the clock', () => {
    const rows = createRunRows();
    rows.apply({ kind: 'planned', at: 0, plan: { target: 'all', namespace: 'shop', changes: true, nodes: [{ node: 'mail', words: 'push', changes: true }] } });
    rows.apply({ kind: 'set-back', at: 20_000, target: 'all', node: 'mail', step: { kind: 'setting-back', to: 'sha256:0123456789ab', verdict: { kind: 'waiting', phase: 'booting', detail: 'systemd is booting' } } });
    expect(renderRows(rows.rows(), { now: 23_000, width: 200, colour: false }).split('\n')[1]).toBe(`${'  mail'.padEnd(20)}  ${'3s'.padStart(6)}  setting back to sha256:0123456789ab: waiting for Ready: booting  systemd is booting`);
    rows.apply({ kind: 'set-back', at: 27_000, target: 'all', node: 'mail', step: { kind: 'set-back', to: 'sha256:0123456789ab' } });
    expect(renderRows(rows.rows(), { now: 40_000, width: 200, colour: false }).split('\n')[1]).toBe(`${'  mail'.padEnd(20)}  ${'7s'.padStart(6)}  set back to sha256:0123456789ab`);

    const lines: string[] = [];
    let now = 0;
    const plain = createPlainView((l) => lines.push(l), { started: 0, now: () => now });
    plain.planned({ target: 'all', namespace: 'shop', changes: true, nodes: [{ node: 'mail', words: 'push', changes: true }] });
    now = 20_000;
    plain.setBack('all', 'mail', { kind: 'setting-back', to: 'sha256:0123456789ab' });
    now = 31_000;
    plain.setBack('all', 'mail', { kind: 'not-set-back', why: 'not ready within 10s (it runs sha256:0123456789ab)' });
    expect(lines).toEqual(['[  20s] [all] mail: setting back to sha256:0123456789ab: waiting for Ready', '[  31s] [all] mail: could not be set back: not ready within 10s (it runs sha256:0123456789ab)']);
  });
});
