import { createRequire } from 'node:module';
import type { Logger } from 'pino';

/**
 * Structured events go to stderr (stdout carries only results). Pretty on a TTY, JSON
 * lines otherwise; DEPLOY_LOG_LEVEL of the run's environment (`env`, never process.env) sets
 * the level (default info). pino is loaded on first use: it costs more start-up time than
 * `deploy --help` may take.
 */
export function createLogger(opts: { env: NodeJS.ProcessEnv; level?: string; pretty?: boolean }): Logger {
  const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
  const level = opts.level ?? opts.env.DEPLOY_LOG_LEVEL ?? 'info';
  const pretty = opts.pretty ?? Boolean(process.stderr.isTTY);
  if (pretty) {
    return pino({
      level,
      transport: {
        target: 'pino-pretty',
        options: { destination: 2, colorize: true, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' },
      },
    });
  }
  return pino({ level, base: undefined }, pino.destination({ dest: 2, sync: true }));
}

export type { Logger };
