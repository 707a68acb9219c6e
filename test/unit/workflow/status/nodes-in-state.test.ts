import { describe, expect, it } from 'vitest';
import { digestOf, readStateFacts, tagOf } from '../../../../src/workflow/status/nodes-in-state.js';
import { digest, fixtureState, imageRef, REPO } from '../state-fixture.js';

describe('readStateFacts', () => {
  it('GIVEN a state of two nodes THEN per node the applied image, the pushed tag, a tainted rollout step, the machine ID and claim UID; the namespace and serial', () => {
    const facts = readStateFacts(fixtureState(7, 'ns1', { web: { image: imageRef('web', 'a'), tag: 'v2', tainted: true }, mail: { image: imageRef('mail', 'b') } }));
    expect(facts).toEqual({
      serial: 7,
      namespace: 'ns1',
      nodes: [
        { node: 'mail', image: imageRef('mail', 'b'), tagRef: `${REPO}/mail:t1`, rolloutFailed: false, machineId: 'mid-mail', claimUid: 'uid-mail' },
        { node: 'web', image: imageRef('web', 'a'), tagRef: `${REPO}/web:v2`, rolloutFailed: true, machineId: 'mid-web', claimUid: 'uid-web' },
      ],
    });
  });
  it('GIVEN a state without resources THEN no node; GIVEN no state of ours THEN undefined', () => {
    expect(readStateFacts(Buffer.from(JSON.stringify({ version: 4, serial: 2, lineage: 'l' })))).toEqual({ serial: 2, namespace: undefined, nodes: [] });
    expect(readStateFacts(Buffer.from('{'))).toBeUndefined();
    expect(readStateFacts(Buffer.from(JSON.stringify({ resources: 'x' })))).toBeUndefined();
  });
});

describe('digestOf, tagOf', () => {
  it('take the digest of a digest reference and the tag of a tag reference, with a port in the host', () => {
    expect(digestOf(`${REPO}/web@${digest('a')}`)).toBe(digest('a'));
    expect(tagOf('reg.test:5000/ns1/web:v2')).toBe('v2');
    expect(tagOf('reg.test:5000/ns1/web')).toBe('reg.test:5000/ns1/web');
  });
});
