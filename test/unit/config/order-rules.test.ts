import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { heldBackBy, rolloutOrder, waves } from '../../../src/config/order-rules.js';
import { parseMaxUnavailable, waveSize } from '../../../src/config/max-unavailable.js';
import { ConfigError } from '../../../src/errors.js';
import { renderGraph } from '../../../src/graph/render.js';
import { samplePlan } from '../../support/cli.js';

const FILE = '/p/group.json';
const coords = loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd());

/** samplePlan (alpha: web; beta: web, mail; gamma: mail; delta) with `after` per node. */
function planWith(after: Record<string, string[]>, more: (p: any) => void = () => {}) {
  const p = samplePlan();
  for (const [n, deps] of Object.entries(after)) p.nodes[n].after = deps;
  more(p);
  return parseGroupPlan(JSON.stringify(p), FILE);
}

/** The problems buildTargets reports, as `where: message` lines. */
function problems(after: Record<string, string[]>, targets: string[] = ['all'], more?: (p: any) => void): string[] {
  try {
    buildTargets(planWith(after, more), coords, FILE, targets);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => `${i.where}: ${i.message}`);
  }
}

describe('after: the orders the graph can keep', () => {
  it('GIVEN an order among nodes of the target THEN the model has it, sorted, and only where set', () => {
    const [all] = buildTargets(planWith({ gamma: ['beta', 'alpha'], beta: ['alpha'] }), coords, FILE, ['all']);
    expect(all!.nodes.map((n) => [n.name, n.after])).toEqual([
      ['alpha', undefined],
      ['beta', ['alpha']],
      ['delta', undefined],
      ['gamma', ['alpha', 'beta']],
    ]);
    expect('after' in all!.nodes[0]!).toBe(false);
  });

  it('GIVEN a name that is not a node, the node itself, or a node turned off THEN each is refused at its place, naming both', () => {
    const lines = problems({ alpha: ['nope', 'alpha'], beta: ['delta'] }, ['all'], (p) => (p.submission = { id: 's1', turnsOff: ['delta'] }));
    expect(lines).toEqual([
      expect.stringMatching(/^\/p\/group\.json:\$\.nodes\.alpha\.after\[0\]: "nope" is not a node of group "g1"/),
      expect.stringMatching(/^\/p\/group\.json:\$\.nodes\.alpha\.after\[1\]: node "alpha" cannot come after itself/),
      expect.stringMatching(/^\/p\/group\.json:\$\.nodes\.beta\.after\[0\]: node "beta" comes after "delta", which submission "s1" turns off/),
    ]);
  });

  it('GIVEN a cycle THEN it is refused once, named whole from its smallest node, whatever node it is found from', () => {
    const lines = problems({ gamma: ['alpha'], alpha: ['beta'], beta: ['gamma'], delta: ['gamma'] });
    expect(lines).toEqual([expect.stringContaining('the nodes\' order has a cycle: alpha -> beta -> gamma -> alpha')]);
  });

  it('GIVEN a node after a node of another target THEN that target is refused (naming node, dependency and target), and target all keeps the order', () => {
    // alpha serves web; gamma serves mail only
    const order = { alpha: ['gamma'] };
    expect(problems(order, ['web'])).toEqual([expect.stringMatching(/nodes\.alpha\.after\[0\]: node "alpha" comes after "gamma", which is not in target "web".*deploy target "all"/)]);
    expect(problems(order, ['all', 'mail'])).toEqual([]);
  });
});

describe('rolloutOrder and heldBackBy', () => {
  const nodes = [
    { name: 'app', after: ['db'] },
    { name: 'cache' },
    { name: 'db' },
    { name: 'web', after: ['app', 'cache'] },
  ];
  it('puts each node after those it names, else keeps the given order', () => {
    expect(rolloutOrder(nodes).map((n) => n.name)).toEqual(['db', 'app', 'cache', 'web']);
  });
  it('holds back every node after a failed one, directly or through another, naming the failed one', () => {
    const after = (by: string) => ({ by, through: 'after' });
    expect(heldBackBy(nodes, new Set(['db']))).toEqual(new Map([['app', after('db')], ['web', after('db')]]));
    expect(heldBackBy(nodes, new Set(['cache']))).toEqual(new Map([['web', after('cache')]]));
    expect(heldBackBy(nodes, new Set(['web']))).toEqual(new Map());
  });
  it('cuts waves from the rollout order; a failure holds back every later wave, said as through the waves', () => {
    expect(waves(nodes, 2).map((w) => w.map((n) => n.name))).toEqual([['db', 'app'], ['cache', 'web']]);
    expect(waves(nodes, 4).length).toBe(1);
    expect(waves(nodes, undefined).length).toBe(1);
    // app fails in wave 1: web comes after app; cache is only in the next wave
    expect(heldBackBy(nodes, new Set(['app']), 2)).toEqual(new Map([['cache', { by: 'app', through: 'wave' }], ['web', { by: 'app', through: 'after' }]]));
    expect(heldBackBy(nodes, new Set(['cache']), 2)).toEqual(new Map([['web', { by: 'cache', through: 'after' }]]));
  });
});

describe('--max-unavailable', () => {
  it.each([
    ['10', { count: 10 }],
    [3, { count: 3 }],
    ['20%', { percent: 20 }],
    ['100%', { percent: 100 }],
  ])('%j is %j', (text, want) => expect(parseMaxUnavailable(text)).toEqual(want));
  it.each(['0', '0%', '101%', '-1', '1.5', 'ten', '', '10 %'])('%j is refused', (text) => expect(parseMaxUnavailable(text)).toBeNull());
  it('a percentage is of the target, rounded down, at least 1', () => {
    expect(waveSize({ percent: 20 }, 50)).toBe(10);
    expect(waveSize({ percent: 20 }, 4)).toBe(1);
    expect(waveSize({ count: 7 }, 4)).toBe(7);
  });
  it('GIVEN DEPLOY_MAX_UNAVAILABLE or the plan default THEN the target has that wave size, only when it makes several waves; a bad value is refused naming where', () => {
    const model = (env: NodeJS.ProcessEnv, more: (p: any) => void = () => {}) => buildTargets(planWith({}, more), loadCoordinates({}, { K8S_REGISTRY: 'r', ...env }, process.cwd()), FILE, ['all'])[0]!;
    expect(model({ DEPLOY_MAX_UNAVAILABLE: '2' }).waveSize).toBe(2);
    expect(model({}, (p) => (p.maxUnavailable = '50%')).waveSize).toBe(2);
    expect(model({ DEPLOY_MAX_UNAVAILABLE: '3' }, (p) => (p.maxUnavailable = 1)).waveSize).toBe(3);
    expect('waveSize' in model({ DEPLOY_MAX_UNAVAILABLE: '4' })).toBe(false);
    expect(() => loadCoordinates({}, { K8S_REGISTRY: 'r', DEPLOY_MAX_UNAVAILABLE: 'half' }, process.cwd())).toThrow(ConfigError);
    try {
      loadCoordinates({}, { K8S_REGISTRY: 'r', DEPLOY_MAX_UNAVAILABLE: 'half' }, process.cwd());
    } catch (err) {
      expect((err as ConfigError).issues).toEqual([{ where: 'DEPLOY_MAX_UNAVAILABLE (or --max-unavailable)', message: expect.stringContaining('a whole number of nodes') }]);
    }
    expect(() => planWith({}, (p) => (p.maxUnavailable = '0%'))).toThrow(/maxUnavailable/);
  });
  it('GIVEN waves of 2 THEN each Deployment of wave 2 depends on the rollout steps of wave 1', () => {
    const [all] = buildTargets(planWith({}), loadCoordinates({}, { K8S_REGISTRY: 'r', DEPLOY_MAX_UNAVAILABLE: '2' }, process.cwd()), FILE, ['all']);
    const json = JSON.parse(renderGraph(all!));
    const deps = (node: string) => Object.values<any>(json.resource.kubernetes_manifest).find((r) => r['//'].metadata.path.endsWith(`/node-${node}/deployment`)).depends_on as string[];
    const rolloutOf = (node: string) => `null_resource.${Object.entries<any>(json.resource.null_resource).find(([, r]) => r['//'].metadata.path.endsWith(`/node-${node}/rollout`))![0]}`;
    // alpha, beta | delta, gamma
    for (const n of ['delta', 'gamma']) expect(deps(n)).toEqual(expect.arrayContaining([rolloutOf('alpha'), rolloutOf('beta')]));
    for (const n of ['alpha', 'beta']) expect(deps(n).some((d) => d.startsWith('null_resource.'))).toBe(false);
  });
});

describe('after in the graph', () => {
  it("GIVEN gamma after beta THEN gamma's Deployment depends on beta's rollout step, and a graph without after has no such edge", () => {
    const [all] = buildTargets(planWith({ gamma: ['beta'] }), coords, FILE, ['all']);
    const json = JSON.parse(renderGraph(all!));
    const deps = (node: string) => Object.values<any>(json.resource.kubernetes_manifest).find((r) => r['//'].metadata.path.endsWith(`/node-${node}/deployment`)).depends_on as string[];
    const rolloutOf = (node: string) => Object.entries<any>(json.resource.null_resource).find(([, r]) => r['//'].metadata.path.endsWith(`/node-${node}/rollout`))![0];
    expect(deps('gamma')).toContain(`null_resource.${rolloutOf('beta')}`);
    expect(deps('beta').some((d) => d.startsWith('null_resource.'))).toBe(false);
    const [plain] = buildTargets(planWith({}), coords, FILE, ['all']);
    const plainJson = JSON.parse(renderGraph(plain!));
    for (const r of Object.values<any>(plainJson.resource.kubernetes_manifest)) expect((r.depends_on as string[]).some((d) => d.startsWith('null_resource.'))).toBe(false);
  });
});
