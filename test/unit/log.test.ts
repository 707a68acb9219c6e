import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../../src/log.js';

describe('log events: one union tagged by kind (src/log.ts)', () => {
  it('GIVEN the typed logger WHEN an event is logged THEN its JSON line carries the kind and its fields', () => {
    const lines: string[] = [];
    const logger: Logger = pino({ base: undefined, timestamp: false }, { write: (line: string) => void lines.push(line) });
    logger.info({ kind: 'state-redacted', hidden: 2 }, '2 secret value(s) hidden');
    logger.debug({ kind: 'rollout-object-skipped', objectKind: 'Pod', err: 'bad' }, 'not shown at info');
    logger.warn({ kind: 'rollout-object-skipped', objectKind: 'Pod', err: 'bad' }, 'skipping an object that does not parse');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { level: 30, kind: 'state-redacted', hidden: 2, msg: '2 secret value(s) hidden' },
      { level: 40, kind: 'rollout-object-skipped', objectKind: 'Pod', err: 'bad', msg: 'skipping an object that does not parse' },
    ]);
  });

});

/**
 * Not run: `npm run typecheck` compiles it, and fails ("unused @ts-expect-error") the day the
 * logger takes an event outside the union.
 */
export function eventsOutsideTheUnionDoNotCompile(logger: Logger): void {
  // @ts-expect-error an event without a kind
  logger.info({ pod: 'web-1' }, 'no kind');
  // @ts-expect-error a kind that is not in the union
  logger.info({ kind: 'made-up' }, 'unknown kind');
  // @ts-expect-error a Kubernetes kind is objectKind, never kind
  logger.debug({ kind: 'Deployment', err: 'x' }, 'a Kubernetes kind');
  // @ts-expect-error a field its kind does not have
  logger.info({ kind: 'state-stopped', extra: 1 }, 'extra field');
}

describe('createLogger', () => {
  const saved = process.env.DEPLOY_LOG_LEVEL;
  afterEach(() => {
    if (saved === undefined) delete process.env.DEPLOY_LOG_LEVEL;
    else process.env.DEPLOY_LOG_LEVEL = saved;
  });

  it('GIVEN DEPLOY_LOG_LEVEL in the env passed in (and another in process.env) THEN the level is the one passed in', () => {
    process.env.DEPLOY_LOG_LEVEL = 'error';
    const level = (env: NodeJS.ProcessEnv) => (createLogger({ env, pretty: false }) as unknown as { level: string }).level;
    expect(level({ DEPLOY_LOG_LEVEL: 'warn' })).toBe('warn');
    expect(level({})).toBe('info');
  });
});
