/**
 * The state lock of one deploy run, taken by deploy itself and held for the whole run of a
 * target: plan, apply and the graph's rollout steps.
 *
 * Decision: deploy takes the lock over the http protocol (LOCK/UNLOCK with its own LockInfo)
 * and runs tofu with `-lock=false`, handing it the lock's ID in the state address
 * (`<address>?ID=<lock id>`) so that tofu's writes carry it. Reason: OpenTofu fills
 * LockInfo.Who itself with `user@hostname` (internal/states/statemgr/locker.go,
 * NewLockInfo) and nothing configures it, so on a CD runner every run's lock looked alike and
 * a lock left by a cancelled job could not be told from a live one. Now `Who` names the run
 * (DEPLOY_RUN_ID; the CD workflow sets it to its run), and the workflow's last step releases
 * exactly that run's lock (`deploy state unlock --held-by <who>`). It also closes two gaps of
 * tofu's own locking: between `tofu plan` and `tofu apply` the lock was free (another run
 * could slip in), and an operator backend configured with TF_HTTP_ADDRESS alone was never
 * locked (tofu locks only when a lock address is set).
 * tofu's http client appends `?ID=` itself only when it took the lock
 * (internal/backend/remote-state/http/client.go, Put), so the address carries it instead.
 */
import { hostname, userInfo } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { HttpBackendCoordinates } from '../config/backend-coordinates.js';
import { ConfigError, InterruptedError, ToolError } from '../errors.js';
import type { Logger } from '../log.js';
import { sleep } from '../deadline.js';
import { requestLock, requestUnlock, type BackendAuth } from './source/http-client.js';
import { shq } from '../contract/shell.js';
import type { HeldLocks } from './held-locks.js';
import { describeJudgement, judgeHolder, type HostFacts } from './lock-holder.js';
import { describeLock, type LockInfo } from './lock-info.js';

export const RUN_ID_ENV = 'DEPLOY_RUN_ID';
const MAX_RUN_ID_LENGTH = 200;

/** Who a run is: DEPLOY_RUN_ID, else `user@host:pid`. A bad DEPLOY_RUN_ID is a ConfigError. */
export function runIdentity(env: NodeJS.ProcessEnv): string {
  const given = env[RUN_ID_ENV];
  if (given === undefined || given === '') {
    let user = env.USER || env.LOGNAME || '';
    try {
      user = userInfo().username;
    } catch {
      // no passwd entry for this uid (a container): the environment's name, if any
    }
    return `${user || 'unknown'}@${hostname()}:${process.pid}`;
  }
  // eslint-disable-next-line no-control-regex
  const problem = given.trim() !== given ? 'has leading or trailing blanks' : given.length > MAX_RUN_ID_LENGTH ? `is longer than ${MAX_RUN_ID_LENGTH} characters` : /[\x00-\x1f\x7f]/.test(given) ? 'contains a control character' : undefined;
  if (problem) {
    throw new ConfigError(`${RUN_ID_ENV} is not a usable run name`, [
      { where: RUN_ID_ENV, message: `${problem}: name the run in one line (e.g. the CD workflow's run id), or unset it for user@host:pid` },
    ]);
  }
  return given;
}

export interface RunLockOptions {
  /** The target's backend, as tofu gets it (addresses already keyed). */
  readonly backend: HttpBackendCoordinates;
  /** The state key, for messages. */
  readonly key: string;
  /** What the run does, e.g. `deploy apply`. */
  readonly operation: string;
  readonly who: string;
  /** Aborts the wait for the lock (not the release). */
  readonly signal: AbortSignal;
  readonly logger?: Logger | undefined;
  /** Told once when the lock is held by someone else and the run waits. */
  readonly onWait?: ((holder: string) => void) | undefined;
  /** How long to wait for a lock another run holds. @default 60 s (tofu's -lock-timeout was 60s) */
  readonly timeoutMs?: number | undefined;
  /** Where the lock is recorded while held, so that a run leaving at once names it (src/cli/shutdown.ts). */
  readonly held?: HeldLocks | undefined;
  /** This machine, to tell a holder that is gone. @default lock-holder.ts thisHost() */
  readonly host?: HostFacts | undefined;
}

export interface RunLock {
  readonly info: LockInfo;
  /**
   * The state address tofu is given while the run holds the lock: with `?ID=<lock id>`, so that
   * tofu's writes carry the lock's ID (rendered as TF_HTTP_ADDRESS by the target's environment,
   * src/workflow/target/target-environment.ts).
   */
  readonly tofuAddress: string;
  /** Releases the lock (idempotent; never throws: a failure is logged and left to `deploy state unlock`). */
  release(): Promise<void>;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5_000;

/** Takes the lock at TF_HTTP_LOCK_ADDRESS (default: the state address), waiting up to the timeout. */
export async function takeRunLock(opts: RunLockOptions): Promise<RunLock> {
  const { backend } = opts;
  const address = backend.address;
  const lockUrl = new URL(backend.lockAddress || address);
  const unlockUrl = new URL(backend.unlockAddress || address);
  const lockMethod = backend.lockMethod || 'LOCK';
  const unlockMethod = backend.unlockMethod || 'UNLOCK';
  const auth: BackendAuth = { username: backend.username, password: backend.password };
  const info: LockInfo = {
    ID: randomUUID(),
    Operation: opts.operation,
    Info: `state ${opts.key}, pid ${process.pid} on ${hostname()}`,
    Who: opts.who,
    Version: 'deploy',
    Created: new Date().toISOString(),
    Path: '',
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let wait = RETRY_MIN_MS;
  let told = false;
  // a stop before the lock is ours: said as such (the signal's own reason is a bare Error,
  // which the CLI printed as an "unexpected error" with a stack)
  const stopped = (when: string) =>
    new InterruptedError(`interrupted ${when} the state lock of ${opts.key} was taken: nothing of this target was changed`, {
      hint: 'run the command again',
    });
  for (;;) {
    if (opts.signal.aborted) throw stopped('before');
    let answer;
    try {
      // not aborted by the signal (http-client.ts): a LOCK cut mid-flight may be granted unseen
      answer = await requestLock(lockUrl, lockMethod, info, auth);
    } catch (err) {
      if (opts.signal.aborted) throw err;
      throw new ToolError(`could not take the state lock of ${opts.key}: ${(err as Error).message}`, {
        hint: 'the backend must answer LOCK (TF_HTTP_LOCK_METHOD) at TF_HTTP_LOCK_ADDRESS, which defaults to the state address; a `deploy state serve` backend does',
        cause: err,
      });
    }
    if (answer.kind === 'acquired') break;
    const holder = answer.holder ? describeLock(answer.holder) : 'another run (the backend did not say which)';
    const judged = answer.holder ? judgeHolder(answer.holder, opts.host) : undefined;
    if (judged?.kind === 'gone') {
      // waiting for a process that is gone would only end in the same refusal a minute later
      throw new ToolError(`the state ${opts.key} is locked by a run that is gone: ${holder}; ${describeJudgement(judged)}`, {
        hint: `free it (this checks again that its process is gone): deploy state unlock --force-stale --key ${shq(opts.key)}`,
      });
    }
    if (Date.now() >= deadline) {
      const who = answer.holder?.Who;
      const why = judged ? `${describeJudgement(judged)}; ` : '';
      throw new ToolError(`the state ${opts.key} is locked: ${holder}`, {
        hint: who
          ? `${why}if it is gone (a cancelled job, a killed process), release its lock: deploy state unlock --held-by ${shq(who)}`
          : 'wait for that run to end; if it is gone, release its lock: deploy state unlock <ID>',
      });
    }
    if (!told) {
      opts.onWait?.(holder);
      told = true;
    }
    await sleep(Math.min(wait, Math.max(0, deadline - Date.now())), opts.signal);
    wait = Math.min(wait * 2, RETRY_MAX_MS);
  }
  opts.logger?.debug({ kind: 'state-locked', key: opts.key, id: info.ID, who: info.Who }, 'state lock taken');
  const tofuAddress = new URL(address);
  tofuAddress.searchParams.set('ID', info.ID);
  let released: Promise<void> | undefined;
  const forget = opts.held?.hold({ key: opts.key, id: info.ID, where: address, free: `deploy state unlock ${info.ID} --key ${shq(opts.key)}` });
  const lock: RunLock = {
    info,
    tofuAddress: tofuAddress.toString(),
    release: () =>
      (released ??= (async () => {
        try {
          // its own deadline only: the run's signal may be aborted (Ctrl-C), the lock must still go
          const answer = await requestUnlock(unlockUrl, unlockMethod, info, auth);
          forget?.();
          if (answer.kind === 'held') {
            opts.logger?.warn({ kind: 'state-unlock-refused', key: opts.key, id: info.ID, holder: answer.holder?.ID }, `the lock of ${opts.key} was not ours any more`);
          } else {
            opts.logger?.debug({ kind: 'state-unlocked', key: opts.key, id: info.ID }, 'state lock released');
          }
        } catch (err) {
          opts.logger?.error(
            { kind: 'state-unlock-failed', key: opts.key, id: info.ID, who: info.Who, err: (err as Error).message },
            `could not release the state lock of ${opts.key}: run deploy state unlock --held-by ${shq(info.Who!)}`,
          );
        }
      })()),
  };
  // a stop that came while the LOCK was answered: the lock is ours, so it goes at once
  if (opts.signal.aborted) {
    await lock.release();
    throw stopped('as');
  }
  return lock;
}
