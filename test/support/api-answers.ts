/**
 * The real answers of the API server in test/fixtures/api-answers/ (captured by
 * capture-api-answers.ts), for the tests of what deploy makes of them: an answer as deploy's
 * clients throw it, and the provider's relay as tofu's -json stream carries it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTofuLine, type TofuDiagnostic } from '../../src/tools/tofu/tofu-events.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'api-answers');

export interface CapturedAnswer {
  readonly what: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** As the server sent it. */
  readonly body: string;
}

/** One captured answer (`invalid`, `quota`, ...: the file's name without .json). */
export function capturedAnswer(name: string): CapturedAnswer {
  return JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as CapturedAnswer;
}

/** The answer as deploy's clients throw it (kube-read.ts: `{code, body}`; the client's ApiException adds `headers`). */
export function thrownAnswer(name: string): Error & { code: number; body: string; headers: Record<string, string> } {
  const a = capturedAnswer(name);
  return Object.assign(new Error(`HTTP ${a.status}`), { code: a.status, body: a.body, headers: { ...a.headers } });
}

/** What deploy's client saw when no answer came in time: `{name, message}`. */
export function capturedNoAnswer(): { readonly name: string; readonly message: string } {
  return (JSON.parse(readFileSync(join(DIR, 'timeout-client.json'), 'utf8')) as { error: { name: string; message: string } }).error;
}

/** tofu's diagnostics of the captured apply, parsed as deploy parses tofu's stream. */
export function capturedRelay(): TofuDiagnostic[] {
  const lines = readFileSync(join(DIR, 'provider-relay.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '');
  return lines.map((l) => {
    const { event } = parseTofuLine(l);
    if (event.kind !== 'diagnostic') throw new Error(`provider-relay.jsonl: not a diagnostic: ${l.slice(0, 200)}`);
    return event.diagnostic;
  });
}
