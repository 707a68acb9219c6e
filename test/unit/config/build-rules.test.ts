/**
 * `image.build` in the group plan (FR-002): an argv that writes the node's archive. Bad values
 * are named by file, node and field; the model carries the command and its working directory
 * (the plan file's); nodes that share an archive must agree when one of them builds it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { samplePlan } from '../../support/cli.js';

const FILE = '/plans/group.json';
const coords = () => loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd());

const problems = (edit: (p: Record<string, any>) => void): string[] => {
  const p = samplePlan();
  edit(p);
  try {
    buildTargets(parseGroupPlan(JSON.stringify(p), FILE), coords(), FILE);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.where}: ${i.message}`);
    throw err;
  }
  return [];
};

describe('image.build in the group plan', () => {
  it('GIVEN an argv THEN the model has it with the plan file directory as working directory; without it the node has no build', () => {
    const p = samplePlan();
    p.nodes.alpha.image.build = ['nix', 'build', '--out-link', 'images/alpha.tar'];
    const [all] = buildTargets(parseGroupPlan(JSON.stringify(p), FILE), coords(), FILE);
    const alpha = all!.nodes.find((n) => n.name === 'alpha')!;
    expect(alpha.build).toEqual({ argv: ['nix', 'build', '--out-link', 'images/alpha.tar'], dir: '/plans' });
    expect(alpha.archive).toBe('/plans/images/alpha.tar');
    expect('build' in all!.nodes.find((n) => n.name === 'beta')!).toBe(false);
  });

  it('GIVEN an empty argv, an empty word, a string or a number THEN each is named by file, node and field', () => {
    expect(problems((p) => (p.nodes.alpha.image.build = []))).toEqual([
      `${FILE}:$.nodes.alpha.image.build: must name the command that writes image.archive, e.g. ["nix", "build", "--out-link", "images/web.tar"]; leave the field out when the archive is built elsewhere`,
    ]);
    expect(problems((p) => (p.nodes.beta.image.build = ['nix', '']))).toEqual([`${FILE}:$.nodes.beta.image.build[1]: must not be empty: each element is one word of the command`]);
    expect(problems((p) => (p.nodes.gamma.image.build = 'nix build'))).toEqual([
      `${FILE}:$.nodes.gamma.image.build: must be an argv array, e.g. ["nix", "build", "--out-link", "images/web.tar"]`,
    ]);
    expect(problems((p) => (p.nodes.gamma.image.build = ['nix', 3]))).toEqual([`${FILE}:$.nodes.gamma.image.build[1]: must be a string: each element is one word of the command`]);
  });

  it('GIVEN nodes sharing an archive that one of them builds THEN they must agree on build and tag, else the others are named', () => {
    const shared = (p: Record<string, any>) => {
      for (const n of ['alpha', 'beta', 'gamma']) p.nodes[n].image = { archive: 'images/one.tar', tag: 't1', build: ['make', 'images/one.tar'] };
    };
    expect(problems(shared)).toEqual([]);
    expect(
      problems((p) => {
        shared(p);
        p.nodes.beta.image.build = ['make', 'other'];
        delete p.nodes.gamma.image.build;
        p.nodes.delta.image = { archive: '/plans/images/one.tar', tag: 't2', build: ['make', 'images/one.tar'] };
      }),
    ).toEqual(
      ['beta', 'delta', 'gamma'].map(
        (n) =>
          `${FILE}:$.nodes.${n}.image: node "${n}" names the archive /plans/images/one.tar of node "alpha", and one of them builds it (image.build): nodes that share an archive must have the same image.build and image.tag; give node "${n}" an archive of its own`,
      ),
    );
    // without a build, a shared prebuilt archive with different tags is as before
    expect(problems((p) => ['alpha', 'beta'].forEach((n, i) => (p.nodes[n].image = { archive: 'images/one.tar', tag: `t${i}` })))).toEqual([]);
  });
});
