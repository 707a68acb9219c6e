import { describe, expect, it } from 'vitest';
import { describeTofuEvent, formatDiagnostic, parseTofuLine } from '../../../../src/tools/tofu/tofu-events.js';

// Lines in the shape OpenTofu 1.12 prints with -json (internal/command/views/json).
const resource = { addr: 'null_resource.step', module: '', resource: 'null_resource.step', implied_provider: 'null', resource_type: 'null_resource', resource_name: 'step', resource_key: null };
const line = (o: Record<string, unknown>) => JSON.stringify({ '@level': 'info', '@module': 'tofu.ui', '@timestamp': '2026-01-01T00:00:00Z', ...o });

describe('parseTofuLine', () => {
  it('turns hook messages into typed events with the resource address', () => {
    expect(parseTofuLine(line({ type: 'apply_start', '@message': 'x', hook: { resource, action: 'create' } })).event).toEqual({
      kind: 'apply-start',
      address: 'null_resource.step',
      action: 'create',
    });
    expect(parseTofuLine(line({ type: 'apply_errored', hook: { resource, action: 'create', elapsed_seconds: 2 } })).event).toEqual({
      kind: 'apply-errored',
      address: 'null_resource.step',
      action: 'create',
      elapsedSeconds: 2,
    });
    expect(parseTofuLine(line({ type: 'change_summary', changes: { add: 1, change: 2, import: 0, remove: 3, forget: 0, operation: 'plan' } })).event).toEqual({
      kind: 'change-summary',
      summary: { operation: 'plan', add: 1, change: 2, remove: 3, import: 0 },
    });
  });

  it('keeps diagnostics with their address and file:line', () => {
    const e = parseTofuLine(
      line({
        '@level': 'error',
        type: 'diagnostic',
        diagnostic: { severity: 'error', summary: 'boom', detail: 'it broke', address: 'null_resource.step', range: { filename: 'cdk.tf.json', start: { line: 7, column: 1, byte: 0 }, end: { line: 7, column: 2, byte: 1 } } },
      }),
    ).event;
    expect(e).toEqual({ kind: 'diagnostic', diagnostic: { severity: 'error', summary: 'boom', detail: 'it broke', address: 'null_resource.step', where: 'cdk.tf.json:7' } });
    expect(describeTofuEvent(e)).toBe('Error (null_resource.step): boom: it broke');
  });

  it("names a resource of the graph by its node and part, never by the construct ID", () => {
    const d = { severity: 'error', summary: 'local-exec provisioner error', detail: 'exit status 1', address: 'null_resource.image-mail_push_0A1B2C3D', where: undefined } as const;
    expect(formatDiagnostic(d)).toBe('Error (mail: image push): local-exec provisioner error: exit status 1');
  });

  it('never carries output values, only their names', () => {
    const e = parseTofuLine(line({ type: 'outputs', outputs: { token: { sensitive: true, type: 'string', value: 's3cr3t' }, a: { sensitive: false, value: 1 } } }));
    expect(e.event).toEqual({ kind: 'outputs', names: ['a', 'token'] });
    expect(JSON.stringify(e)).not.toContain('s3cr3t');
  });

  it('separates an emergency state dump from the event, so it is never logged', () => {
    const parsed = parseTofuLine(line({ '@level': 'info', '@message': 'Emergency state dump', type: 'log', state: { lineage: 'L', resources: [{ password: 's3cr3t' }] } }));
    expect(parsed.stateDump).toEqual({ lineage: 'L', resources: [{ password: 's3cr3t' }] });
    expect(JSON.stringify(parsed.event)).not.toContain('s3cr3t');
    expect(parsed.event.kind).toBe('log');
  });

  it('keeps unknown message types as log lines and non-JSON lines as unparsed', () => {
    expect(parseTofuLine(line({ type: 'test_summary', '@message': 'Success! 1 passed' })).event).toEqual({ kind: 'log', level: 'info', message: 'Success! 1 passed' });
    expect(parseTofuLine('panic: runtime error').event).toEqual({ kind: 'unparsed', line: 'panic: runtime error' });
    // a known type with an unexpected shape is not fatal either
    expect(parseTofuLine(line({ type: 'apply_start', '@message': 'odd', hook: {} })).event).toEqual({ kind: 'log', level: 'info', message: 'odd' });
  });
});
