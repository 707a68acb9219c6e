import { describe, expect, it } from 'vitest';
import { COORDINATES } from '../../../src/config/coordinate-table.js';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { ConfigError, type InputIssue } from '../../../src/errors.js';
import { renderGraph } from '../../../src/graph/render.js';
import { samplePlan } from '../../support/cli.js';

const FILE = '/p/group.json';

function planWith(more: (p: any) => void = () => {}) {
  const p = samplePlan();
  more(p);
  return parseGroupPlan(JSON.stringify(p), FILE);
}

/** The model of target `all` from these flags, environment and plan. */
function model(flags: Record<string, string>, env: NodeJS.ProcessEnv, more?: (p: any) => void) {
  return buildTargets(planWith(more), loadCoordinates(flags, { K8S_REGISTRY: 'r', ...env }, process.cwd()), FILE, ['all'])[0]!;
}

function issuesOf(flags: Record<string, string>, env: NodeJS.ProcessEnv): readonly InputIssue[] {
  try {
    loadCoordinates(flags, { K8S_REGISTRY: 'r', ...env }, process.cwd());
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    return (err as ConfigError).issues;
  }
}

describe('--soak / DEPLOY_SOAK / the plan\'s soak', () => {
  it('GIVEN nothing THEN no soak: the model has none (a run as before)', () => {
    expect('soak' in model({}, {})).toBe(false);
    expect('soak' in model({}, { DEPLOY_SOAK: '0' })).toBe(false);
  });

  it('GIVEN the flag, the environment and the plan THEN the flag wins, then the environment, then the plan', () => {
    expect(model({ soak: '40s' }, { DEPLOY_SOAK: '2m' }, (p) => (p.soak = '1m')).soak?.seconds).toBe(40);
    expect(model({}, { DEPLOY_SOAK: '2m' }, (p) => (p.soak = '1m')).soak?.seconds).toBe(120);
    expect(model({}, {}, (p) => (p.soak = '1m')).soak?.seconds).toBe(60);
    expect(model({}, {}, (p) => (p.soak = 30)).soak?.text).toBe('30s');
    // an explicit 0 turns off the plan's default
    expect('soak' in model({}, { DEPLOY_SOAK: '0s' }, (p) => (p.soak = '1m'))).toBe(false);
  });

  it.each([
    ['soon', 'must be a duration such as 40s or 5m (0 for no soak)'],
    ['-5s', 'must be a duration such as 40s or 5m (0 for no soak)'],
    ['1h1s', 'must be at most 1h: every wave waits for the soak of the one before, with the state locked'],
  ])('GIVEN DEPLOY_SOAK=%j THEN it is refused naming the variable and the flag: %s', (text, message) => {
    expect(issuesOf({}, { DEPLOY_SOAK: text })).toEqual([{ where: 'DEPLOY_SOAK (or --soak)', message }]);
    expect(issuesOf({ soak: text }, {})).toEqual([{ where: 'DEPLOY_SOAK (or --soak)', message }]);
  });

  it('GIVEN a plan soak that is no duration THEN the plan is refused at its field', () => {
    expect(() => planWith((p) => (p.soak = 'a while'))).toThrow(/\$\.soak: must be a duration such as 40s or 5m/);
    expect(() => planWith((p) => (p.soak = '2h'))).toThrow(/\$\.soak: must be at most 1h/);
  });
});

describe('--on-failure / DEPLOY_ON_FAILURE / the plan\'s onFailure', () => {
  it('GIVEN nothing THEN node: the model says nothing (a run as before)', () => {
    expect('onFailure' in model({}, {})).toBe(false);
    expect('onFailure' in model({ onFailure: 'node' }, {}, (p) => (p.onFailure = 'group'))).toBe(false);
  });

  it('GIVEN group from the flag, the environment or the plan THEN the model has it', () => {
    expect(model({ onFailure: 'group' }, {}).onFailure).toBe('group');
    expect(model({}, { DEPLOY_ON_FAILURE: 'group' }).onFailure).toBe('group');
    expect(model({}, {}, (p) => (p.onFailure = 'group')).onFailure).toBe('group');
  });

  it('GIVEN another word THEN it is refused naming the variable and the flag, and what each value does', () => {
    const [issue, ...rest] = issuesOf({}, { DEPLOY_ON_FAILURE: 'all' });
    expect(rest).toEqual([]);
    expect(issue!.where).toBe('DEPLOY_ON_FAILURE (or --on-failure)');
    expect(issue!.message).toMatch(/must be node .* or group /);
    expect(() => planWith((p) => (p.onFailure = 'everyone'))).toThrow(/\$\.onFailure: must be "node"/);
  });

  it('both are in the coordinate table, so that --help and the flags of plan/apply have them', () => {
    expect(COORDINATES.filter((c) => c.key === 'soak' || c.key === 'onFailure').map((c) => [c.flag, c.env])).toEqual([
      ['--soak <duration>', 'DEPLOY_SOAK'],
      ['--on-failure <node|group>', 'DEPLOY_ON_FAILURE'],
    ]);
  });
});

describe('the soak and --on-failure are values of the run, never of the graph', () => {
  it('GIVEN waves of 2 WHEN the graph is rendered with and without a soak and group THEN it is the same bytes', () => {
    const without = renderGraph(model({}, { DEPLOY_MAX_UNAVAILABLE: '2' }));
    const withBoth = renderGraph(model({ soak: '40s', onFailure: 'group' }, { DEPLOY_MAX_UNAVAILABLE: '2' }));
    const fromPlan = renderGraph(model({}, { DEPLOY_MAX_UNAVAILABLE: '2' }, (p) => ((p.soak = '5m'), (p.onFailure = 'group'))));
    expect(withBoth).toBe(without);
    expect(fromPlan).toBe(without);
    // the graph is not empty words: it has the rollout steps the soak runs in
    expect(without).toContain('rollout --namespace');
  });
});
