/**
 * The one way a JSON text that deploy did not write in this process is read: parsed and checked
 * against its zod schema at the boundary (house style: parse machine output with zod), so the
 * code behind it works on a typed value, and a bad text is one error that names what was read
 * and the path of the field that is wrong.
 */
import type { z } from 'zod';
import { ToolError } from '../errors.js';

/** `path.to.field: message; ...` of a zod error, `(root)` for the document itself. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

/**
 * One line of another program's output that may be one of ours: parsed and checked by
 * `schema`, or undefined when it is not JSON or not of that shape (a line for people). Never
 * throws: the line readers of the steps' output (log.ts, rollout/progress.ts,
 * contract/step-lines.ts) take every other line as text.
 */
export function parseJsonLine<S extends z.ZodType>(schema: S, line: string): z.output<S> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/**
 * `text` parsed as JSON and checked by `schema`; throws a ToolError (exit 3) naming `where`
 * (what was read: "the lock of state x in /var/lib/deploy/state.db", a file path, ...) and,
 * when the JSON is not as expected, the path of each wrong field.
 */
export function parseJson<S extends z.ZodType>(schema: S, text: string | Buffer, where: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(typeof text === 'string' ? text : text.toString('utf8'));
  } catch (err) {
    throw new ToolError(`${where}: not JSON (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ToolError(`${where}: ${describeIssues(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
}
