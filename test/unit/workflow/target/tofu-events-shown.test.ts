import { describe, expect, it } from 'vitest';
import type { TofuDiagnostic, TofuEvent } from '../../../../src/tools/tofu/tofu-events.js';
import { echoTofu } from '../../../../src/workflow/target/tofu-events-shown.js';
import type { RunView } from '../../../../src/workflow/view/run-view.js';

const view: RunView = { note: () => {}, planned: () => {}, tofu: () => {}, ended: () => {}, setBack: () => {}, close: () => {} };
const error = (summary: string, detail = ''): TofuEvent => ({ kind: 'diagnostic', diagnostic: { severity: 'error', summary, detail } as TofuDiagnostic });

function echoed(signal: AbortSignal, events: TofuEvent[]): string[] {
  const lines: string[] = [];
  const echo = echoTofu({ target: 'all', view, progress: (l) => lines.push(l), env: {}, scoped: false, signal });
  for (const e of events) echo(e);
  return lines;
}

describe("tofu's errors as the run shows them", () => {
  const handshake = error('Unrecognized remote plugin message: ', "Failed to read any lines from plugin's stdout\nThis usually means\n  the plugin was not compiled for this architecture,");
  const real = error('Invalid reference', 'A reference to a resource type must be followed by at least one attribute access');

  it('GIVEN a run stopped by Ctrl-C THEN the errors only the interrupt caused are left out, any other is shown', () => {
    const stop = new AbortController();
    stop.abort();
    const lines = echoed(stop.signal, [error('execution halted'), handshake, real]);
    expect(lines).toEqual([expect.stringContaining('[all] Error: Invalid reference')]);
  });

  it('GIVEN a run not stopped THEN the same errors are all shown', () => {
    const lines = echoed(new AbortController().signal, [error('execution halted'), handshake, real]);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('not compiled for this architecture');
  });
});
