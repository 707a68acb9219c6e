import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { heldBackBy, rolloutOrder } from '../../../src/config/order-rules.js';
import { ConfigError } from '../../../src/errors.js';
import { renderGraph } from '../../../src/graph/synth.js';
import { samplePlan } from '../helpers.js';

const FILE = '/p/group.json';
const coords = loadCoordinates({}, { K8S_REGISTRY: 'r' });

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
    expect(heldBackBy(nodes, new Set(['db']))).toEqual(new Map([['app', 'db'], ['web', 'db']]));
    expect(heldBackBy(nodes, new Set(['cache']))).toEqual(new Map([['web', 'cache']]));
    expect(heldBackBy(nodes, new Set(['web']))).toEqual(new Map());
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
