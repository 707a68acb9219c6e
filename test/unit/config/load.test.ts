import { describe, expect, it } from 'vitest';
import { findDuplicateKeys } from '../../../src/config/json-duplicates.js';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { parseDuration } from '../../../src/config/duration.js';
import { samplePlan } from '../../support/cli.js';

describe('findDuplicateKeys', () => {
  it('finds keys repeated in the same object, at any depth, with their path', () => {
    const text = '{"a":1,"b":{"x":[{"k":1,"k":2}],"x":3},"a":"\\"a\\""}';
    expect(findDuplicateKeys(text)).toEqual([
      { path: ['b', 'x', 0], key: 'k' },
      { path: ['b'], key: 'x' },
      { path: [], key: 'a' },
    ]);
  });
  it('does not confuse equal keys of sibling objects or keys inside strings', () => {
    expect(findDuplicateKeys('{"n":{"a":1},"m":{"a":2},"s":"\\"n\\":1"}')).toEqual([]);
  });
});

describe('parseDuration', () => {
  it.each([
    ['90', 90],
    ['90s', 90],
    ['5m', 300],
    ['1h30m', 5400],
    ['2m5s', 125],
  ])('%s is %i seconds', (text, seconds) => expect(parseDuration(text)?.seconds).toBe(seconds));
  it.each(['', 'soon', '5 m', '-1s', '1d'])('%j is refused', (text) => expect(parseDuration(text)).toBeUndefined());
});

describe('honest degrade', () => {
  it('reports persistent paths outside /var/lib and host firewall sources, per node', () => {
    const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/p/group.json');
    const [all] = buildTargets(plan, loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()), '/p/group.json', ['all']);
    expect(all!.degrade).toEqual([
      expect.objectContaining({ node: 'beta', kind: 'persistent-path-outside-var-lib', message: expect.stringContaining('/etc/keys is not under /var/lib') }),
      expect.objectContaining({ node: 'gamma', kind: 'host-firewall-sources', message: expect.stringContaining('192.0.2.0/24') }),
    ]);
  });
});

describe('per-app namespaces', () => {
  it('refuses an app whose namespace would be too long, naming the app', () => {
    const p = samplePlan();
    p.nodes.alpha.apps = ['a'.repeat(60)];
    const plan = parseGroupPlan(JSON.stringify(p), '/p/group.json');
    expect(() => buildTargets(plan, loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()), '/p/group.json')).toThrow(/app "a{60}".*is 72 characters long/);
  });
});

describe('the targets a run works on (one target unless asked)', () => {
  const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/p/group.json');
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd());
  const chosen = (targets?: string[]) => buildTargets(plan, coords, '/p/group.json', targets).map((t) => `${t.target}:${t.namespace}`);

  it('GIVEN no --target THEN only `all`: every node once, in K8S_NAMESPACE', () => {
    expect(chosen()).toEqual(['all:fediversity']);
    expect(chosen([])).toEqual(['all:fediversity']);
  });
  it("GIVEN --target <app> THEN that app only; GIVEN '*' THEN every target, in the group's order", () => {
    expect(chosen(['web'])).toEqual(['web:fediversity-web']);
    expect(chosen(['*'])).toEqual(['all:fediversity', 'mail:fediversity-mail', 'web:fediversity-web']);
  });
  it("GIVEN the flag repeated THEN those targets, each once, in the group's order", () => {
    expect(chosen(['web', 'all', 'web'])).toEqual(['all:fediversity', 'web:fediversity-web']);
    expect(chosen(['web', '*'])).toEqual(['all:fediversity', 'mail:fediversity-mail', 'web:fediversity-web']);
  });
  it('GIVEN unknown names THEN each is named with the targets there are', () => {
    expect(() => chosen(['chat', 'web', 'news'])).toThrow(/--target: "chat" is not a target of group "g1"; its targets are: all, mail, web \(or '\*' for every one\)\n.*--target: "news"/);
  });
});
