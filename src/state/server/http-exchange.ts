/**
 * One HTTP exchange of the state backend: the request's body read within a limit (and checked
 * against its Content-MD5), the reply written, and the client mistake that answers 4xx.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a route answers: a status, a body (bytes as they are, an object as JSON), headers. */
export interface Reply {
  status: number;
  body?: Buffer | string | object;
  headers?: Record<string, string>;
}

/** A client mistake: answered with its status (4xx) and message, never logged as a failure. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads the body up to `limit` bytes (413 beyond) and checks `Content-MD5` when sent (400
 * when it does not match: the body was damaged on the way).
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    throw new HttpProblem(413, `the body is ${declared} bytes, more than the limit of ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new HttpProblem(413, `the body is more than the limit of ${limit} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof HttpProblem) throw err;
    // the client went away mid-body: a client matter, not a storage failure
    throw new HttpProblem(400, `the body was cut off: ${(err as Error).message}`);
  }
  const body = Buffer.concat(chunks, size);
  const md5Header = req.headers['content-md5'];
  if (typeof md5Header === 'string' && md5Header !== '') {
    const expected = Buffer.from(md5Header.trim(), 'base64');
    if (expected.length !== 16) throw new HttpProblem(400, `Content-MD5 "${md5Header}" is not a base64 MD5 digest`);
    const actual = createHash('md5').update(body).digest();
    if (!actual.equals(expected)) throw new HttpProblem(400, 'the body does not match its Content-MD5: it was damaged on the way; send it again');
  }
  return body;
}

/** Writes `reply`, unless the connection is gone or answered already. */
export function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const body = reply.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...reply.headers, 'Content-Length': body.length };
  // an answer before the body was read (401, 413, a bad key): close rather than drain the rest
  if (!res.req.complete) headers.Connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(body);
}
