import { describe, expect, it } from 'vitest';
import { REDACTED, redactState } from '../../../src/state/redact.js';

describe('redactState', () => {
  // the shape tofu 1.12 writes for random_password (result is marked sensitive)
  const state = {
    version: 4,
    serial: 3,
    lineage: 'l',
    outputs: {
      pw: { value: 'out-secret-1', type: 'string', sensitive: true },
      names: { value: ['alpha'], type: ['list', 'string'] },
    },
    resources: [
      {
        mode: 'managed',
        type: 'random_password',
        name: 'db',
        instances: [
          {
            schema_version: 3,
            attributes: { id: 'none', length: 16, result: 'attr-secret-2', bcrypt_hash: 'hash-secret-3', special: true },
            sensitive_attributes: [[{ type: 'get_attr', value: 'result' }]],
            private: 'cHJpdmF0ZS1zZWNyZXQ=',
          },
        ],
      },
      {
        mode: 'managed',
        type: 'kubernetes_manifest',
        name: 'm',
        instances: [
          {
            attributes: { manifest: { value: { data: { keys: ['k0', 'nested-secret-4'] } } }, object: { token: 'tok-secret-5' } },
            sensitive_attributes: [[{ type: 'get_attr', value: 'manifest' }, { type: 'get_attr', value: 'value' }, { type: 'get_attr', value: 'data' }, { type: 'get_attr', value: 'keys' }, { type: 'index', value: { value: 1, type: 'number' } }]],
          },
        ],
      },
    ],
  };

  it('hides sensitive outputs, sensitive attribute paths, secret-looking names and private data', () => {
    const { doc, hidden } = redactState(state);
    const text = JSON.stringify(doc);
    for (const secret of ['out-secret-1', 'attr-secret-2', 'hash-secret-3', 'nested-secret-4', 'tok-secret-5', 'cHJpdmF0ZS1zZWNyZXQ=']) {
      expect(text).not.toContain(secret);
    }
    expect(hidden).toBe(6);
    expect(text).toContain(REDACTED);
    // what is not secret stays readable
    expect(text).toContain('alpha');
    expect(text).toContain('"length":16');
    expect(text).toContain('"k0"');
    // the input is not changed
    expect(JSON.stringify(state)).toContain('attr-secret-2');
  });
});
