/**
 * When the verified no-op check is off: DEPLOY_FAST_PLAN=off, or a target with SPIRE steps. Apart
 * from the check (verdict.ts), so that a run reads it without loading the check.
 */
import type { NoopCheckContext } from './check-context.js';

/** DEPLOY_FAST_PLAN=off: every plan is a full plan, and no record is kept. */
export const FAST_PLAN_ENV = 'DEPLOY_FAST_PLAN';

/**
 * Why this run may not use the check nor keep records (undefined: it may): DEPLOY_FAST_PLAN=off,
 * or a target with SPIRE steps (their reads reach another machine).
 */
export function whyNoFastPlan(ctx: Pick<NoopCheckContext, 'env' | 'model'>): string | undefined {
  if ((ctx.env[FAST_PLAN_ENV] ?? '').toLowerCase() === 'off') return `${FAST_PLAN_ENV}=off`;
  if (ctx.model.spire !== undefined) return 'the target has SPIRE steps, whose reads the fast path does not make';
  return undefined;
}
