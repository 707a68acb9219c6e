import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssues, parseJson } from '../../../src/contract/parse-json.js';
import { ExitCode, ToolError } from '../../../src/errors.js';

const schema = z.object({ id: z.string(), items: z.array(z.object({ n: z.number() })) });

describe('parseJson', () => {
  it('GIVEN JSON as the schema wants THEN the typed value, from a string or a buffer', () => {
    expect(parseJson(schema, '{"id":"a","items":[{"n":1}]}', 'the file x')).toEqual({ id: 'a', items: [{ n: 1 }] });
    expect(parseJson(schema, Buffer.from('{"id":"b","items":[]}'), 'the file x')).toEqual({ id: 'b', items: [] });
  });

  it('GIVEN a text that is not JSON THEN a ToolError (exit 3) naming where it was read, and the parser\'s words', () => {
    const err = (() => {
      try {
        parseJson(schema, '{"id":', 'the lock of state "web"');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).exitCode).toBe(ExitCode.tool);
    expect((err as ToolError).message).toMatch(/^the lock of state "web": not JSON \(.+\)$/);
  });

  it('GIVEN JSON that is not as the schema wants THEN the message names where and the path of every wrong field', () => {
    expect(() => parseJson(schema, '{"id":1,"items":[{"n":1},{"n":"2"}]}', '/tmp/f.json')).toThrow(/^\/tmp\/f\.json: id: .+; items\.1\.n: .+$/);
    expect(() => parseJson(schema, '[]', '/tmp/f.json')).toThrow(/^\/tmp\/f\.json: \(root\): /);
  });
});

describe('describeIssues', () => {
  it('GIVEN a zod error THEN each issue as path: message, (root) for the document', () => {
    const r = z.object({ a: z.object({ b: z.string() }) }).safeParse({ a: { b: 1 } });
    expect(r.success).toBe(false);
    expect(describeIssues(r.error!)).toMatch(/^a\.b: /);
    expect(describeIssues(z.string().safeParse(1).error!)).toMatch(/^\(root\): /);
  });
});
