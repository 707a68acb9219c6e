/**
 * The codec of the planner's records: what JSON cannot say (Maps, Sets, undefined against
 * absent, the refusals) comes back as it was, functions are left out, and nothing that looks
 * like a credential is written.
 */
import { describe, expect, it } from 'vitest';
import { DeployError, ExitCode } from '../../../../src/errors.js';
import { decodeValue, editRefs, encodeValue, fromEditRefs, REDACTED, secretName } from '../../../../src/workflow/target/planner-record-schema.js';

describe('encodeValue / decodeValue', () => {
  it('GIVEN Maps, Sets, undefined and an absent field THEN they come back as they were', () => {
    const value = { m: new Map([['a', { x: 1 }]]), s: new Set(['n']), u: undefined, list: [undefined, null, 2] };
    const json = encodeValue(value);
    expect(json).toEqual({ m: { $map: [['a', { x: 1 }]] }, s: { $set: ['n'] }, u: { $undefined: true }, list: [{ $undefined: true }, null, 2] });
    const back = decodeValue(JSON.parse(JSON.stringify(json)));
    expect(back).toStrictEqual(value);
    expect(Object.keys(back as object)).toContain('u');
    expect(decodeValue(encodeValue({}))).toStrictEqual({});
  });

  it('GIVEN a refusal THEN it comes back a DeployError with its code and hint', () => {
    const back = decodeValue(encodeValue(new DeployError('no', ExitCode.usage, { hint: 'name the node' })));
    expect(back).toBeInstanceOf(DeployError);
    expect(back).toMatchObject({ message: 'no', exitCode: ExitCode.usage, hint: 'name the node', name: 'DeployError' });
  });

  it('GIVEN a function (a client in the objects) THEN it is left out', () => {
    expect(encodeValue({ objects: [], deployments: { patch: async () => undefined } })).toEqual({ objects: [], deployments: {} });
  });

  it('GIVEN what cannot be written faithfully THEN it throws, naming where', () => {
    expect(() => encodeValue({ a: { url: new URL('http://x') } })).toThrow('(root).a.url: an instance of URL');
    expect(() => encodeValue({ n: Number.NaN })).toThrow('(root).n');
    expect(() => encodeValue({ $map: 1 })).toThrow('begins with $');
  });

  it('GIVEN credentials by name, by look, or in a sensitive output THEN none is written', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJkZXBsb3kifQ.c2lnbmF0dXJl';
    const json = JSON.stringify(
      encodeValue({
        env: { TF_HTTP_PASSWORD: 'hunter2', TF_HTTP_USERNAME: 'u' },
        user: { token: 'tok-1', 'client-key-data': 'a2V5' },
        header: 'Bearer abc.def',
        line: `x ${jwt}`,
        assignment: 'TF_HTTP_PASSWORD=hunter2',
        key: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==',
        outputs: { kubeconfig: { value: 'secret text', sensitive: true }, node_names: { value: ['a'], sensitive: false } },
      }),
    );
    for (const secret of ['hunter2', 'tok-1', 'a2V5', 'abc.def', jwt, 'b3Blbg==', 'secret text']) expect(json).not.toContain(secret);
    expect(json).toContain(REDACTED);
    // what is not a credential stays: names of secrets, a service account's list of them, plain words
    expect(JSON.parse(JSON.stringify(encodeValue({ secrets: [{ name: 'sa-token-x' }], secretName: 's', 'f:secretName': {} })))).toEqual({ secrets: [{ name: 'sa-token-x' }], secretName: 's', 'f:secretName': {} });
    expect(json).toContain('"node_names":{"value":["a"]');
  });

  it('GIVEN field names THEN the ones that name credentials are told apart', () => {
    expect(['password', 'TF_HTTP_PASSWORD', 'tf_http_address', 'token', 'id-token', 'REGISTRY_TOKEN', 'f:password'].filter(secretName)).toHaveLength(7);
    expect(['secrets', 'secretName', 'tokenRef', 'name', 'manifest'].filter(secretName)).toEqual([]);
  });
});

describe('editRefs / fromEditRefs', () => {
  it('GIVEN edits that are items of the pool and one that is not THEN identity survives the round trip', () => {
    const pool = [{ f: 'a' }, { f: 'b' }];
    const other = { f: 'b' };
    const refs = editRefs(pool, [pool[1]!, other]);
    expect(refs).toEqual([{ ref: 1 }, { value: other }]);
    const decodedPool = pool.map((e) => ({ ...e }));
    const back = fromEditRefs(decodedPool, refs);
    expect(back[0]).toBe(decodedPool[1]);
    expect(back[1]).not.toBe(decodedPool[1]);
    expect(() => fromEditRefs([], [{ ref: 0 }])).toThrow('a ref to item 0');
  });
});
