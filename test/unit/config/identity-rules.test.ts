/**
 * The edge case "no roster has a spiffe provider": a node that declares `identity: true` is
 * refused, by name, without a spiffe provider in the roster or without the SPIRE coordinates;
 * the roster and the coordinates must agree, and a disagreement names both. Every problem at once.
 */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { ConfigError, ExitCode } from '../../../src/errors.js';
import { samplePlan, spireEnv, spirePlan } from '../../support/cli.js';

const FILE = '/p/group.json';
const SPIRE_ENV = spireEnv();

function build(plan: Record<string, any>, spire: boolean) {
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'r', ...(spire ? SPIRE_ENV : {}) }, process.cwd());
  return buildTargets(parseGroupPlan(JSON.stringify(plan), FILE), coords, FILE, ['*']);
}

function refusal(plan: Record<string, any>, spire: boolean): ConfigError {
  try {
    build(plan, spire);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected the plan to be refused');
}

const withIdentity = (plan: Record<string, any>, ...nodes: string[]) => {
  for (const n of nodes) plan.nodes[n].identity = true;
  return plan;
};

const DISAGREEMENT_WHERE = `${FILE}:$.roster.spiffeProvider and K8S_SPIRE_NODE`;

describe('a node that needs an identity', () => {
  it('GIVEN no provider in the roster and no SPIRE coordinates THEN the plan is refused (exit 2) naming the node and both missing parts', () => {
    const err = refusal(withIdentity(samplePlan(), 'alpha'), false);
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.issues).toEqual([
      {
        where: `${FILE}:$.nodes.alpha.identity`,
        message: expect.stringMatching(/^node "alpha" needs a workload identity, and the roster names no spiffe provider \(roster\.spiffeProvider is null\), and the SPIRE coordinates are not set \(K8S_SPIRE_NODE with SSH_USER, SSH_PRIVATE_KEY_FILE and SSH_NODES\)/),
      },
    ]);
    expect(err.message).toContain('group "g1" cannot be deployed with the k8s method');
  });

  it('GIVEN a provider in the roster but no SPIRE coordinates THEN the node is named, and the disagreement names both', () => {
    const err = refusal(withIdentity(spirePlan(), 'beta'), false);
    expect(err.issues).toHaveLength(2);
    expect(err.issues[0]).toEqual({ where: `${FILE}:$.nodes.beta.identity`, message: expect.stringContaining('node "beta" needs a workload identity, and the SPIRE coordinates are not set') });
    expect(err.issues[0]!.message).not.toContain('roster names no spiffe provider');
    expect(err.issues[1]).toEqual({ where: DISAGREEMENT_WHERE, message: expect.stringContaining('the roster names the spiffe provider "central/spire", but K8S_SPIRE_NODE is not set') });
  });

  it('GIVEN the SPIRE coordinates but no provider in the roster THEN the node is named, and the disagreement names both', () => {
    const err = refusal(withIdentity(samplePlan(), 'gamma'), true);
    expect(err.issues).toHaveLength(2);
    expect(err.issues[0]).toEqual({ where: `${FILE}:$.nodes.gamma.identity`, message: expect.stringContaining('node "gamma" needs a workload identity, and the roster names no spiffe provider (roster.spiffeProvider is null):') });
    expect(err.issues[0]!.message).not.toContain('coordinates are not set');
    expect(err.issues[1]).toEqual({ where: DISAGREEMENT_WHERE, message: expect.stringContaining('K8S_SPIRE_NODE is "spire.central.example.org", but the roster names no spiffe provider') });
  });

  it('GIVEN a provider in the roster and the SPIRE coordinates THEN every target is built with SPIRE', () => {
    const targets = build(withIdentity(spirePlan(), 'alpha', 'gamma'), true);
    expect(targets.map((t) => t.target)).toEqual(['all', 'mail', 'web']);
    for (const t of targets) expect(t.spire?.node).toBe('spire.central.example.org');
  });

  it('GIVEN several problems THEN every node, the disagreement and the other rules are reported at once', () => {
    const plan = withIdentity(spirePlan(), 'alpha', 'delta');
    plan.nodes.gamma.tpm = true;
    const err = refusal(plan, false);
    expect(err.issues.map((i) => i.where)).toEqual([
      `${FILE}:$.nodes.gamma.tpm`,
      `${FILE}:$.nodes.alpha.identity`,
      `${FILE}:$.nodes.delta.identity`,
      DISAGREEMENT_WHERE,
    ]);
  });

  it('GIVEN a node the submission turns off THEN its need is not checked (it is in no graph)', () => {
    const plan = withIdentity(samplePlan(), 'delta');
    plan.submission = { id: 's1', turnsOff: ['delta'] };
    expect(build(plan, false).map((t) => t.target)).toEqual(['all', 'mail', 'web']);
  });

  it.each([['yes'], [1], [null]])('GIVEN identity %j THEN the field is refused: it must be true or false', (value) => {
    const plan = samplePlan();
    plan.nodes.alpha.identity = value;
    expect(() => parseGroupPlan(JSON.stringify(plan), FILE)).toThrow(`${FILE}:$.nodes.alpha.identity: must be true or false`);
  });

  it('GIVEN no identity field THEN it is false: a group without SPIRE builds as before', () => {
    expect(parseGroupPlan(JSON.stringify(samplePlan()), FILE).nodes.alpha!.identity).toBe(false);
    expect(build(samplePlan(), false)[0]).not.toHaveProperty('spire');
  });
});

describe('the roster and the SPIRE coordinates agree', () => {
  it('GIVEN a provider in the roster and no SPIRE coordinates (no node asks) THEN the run is refused naming both', () => {
    const err = refusal(spirePlan(), false);
    expect(err.issues).toEqual([
      {
        where: DISAGREEMENT_WHERE,
        message:
          'the roster names the spiffe provider "central/spire", but K8S_SPIRE_NODE is not set, so the nodes would get no identity: set K8S_SPIRE_NODE with SSH_USER, SSH_PRIVATE_KEY_FILE and SSH_NODES to reach central/spire, or set roster.spiffeProvider to null',
      },
    ]);
  });

  it('GIVEN the SPIRE coordinates and no provider in the roster (no node asks) THEN the run is refused naming both', () => {
    const err = refusal(samplePlan(), true);
    expect(err.issues).toEqual([
      {
        where: DISAGREEMENT_WHERE,
        message:
          'K8S_SPIRE_NODE is "spire.central.example.org", but the roster names no spiffe provider (roster.spiffeProvider is null): name that spire node in the roster, e.g. {"group": "central", "node": "spire"}, or unset K8S_SPIRE_NODE',
      },
    ]);
  });

  it('GIVEN neither THEN the run goes ahead without SPIRE', () => {
    for (const t of build(samplePlan(), false)) expect(t).not.toHaveProperty('spire');
  });
});
