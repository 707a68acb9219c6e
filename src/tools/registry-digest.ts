/**
 * What each node's tag points at now, read in this process: one client for every node of the
 * target instead of a `skopeo inspect` process per node (issue 22). Used only by the verified
 * no-op check (src/workflow/noop/verdict.ts), which needs a definite answer or none: anything
 * this client is not sure of (a credential helper, an unexpected status, a TLS failure) is
 * `unsure`, and the caller then runs the full plan, whose digest reads are skopeo's own.
 *
 * The protocol: a HEAD of /v2/<repository>/manifests/<tag> with the manifest types skopeo
 * accepts; the registry answers with the manifest's digest (Docker-Content-Digest). A 401
 * with a Bearer challenge is answered with a token from the realm it names, with the
 * credentials of the auth file skopeo would read (REGISTRY_AUTH_FILE, else
 * $XDG_RUNTIME_DIR/containers/auth.json, else ~/.docker/config.json).
 * https://distribution.github.io/distribution/spec/api/ and containers-auth.json(5).
 *
 * A registry with a private CA (K8S_REGISTRY_CA_FILE) is trusted as skopeo trusts it with
 * --cert-dir: that CA besides the system's (containers/image adds the directory's *.crt to the
 * system pool), for the registry and its token service alike.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { rootCertificates } from 'node:tls';
import { join } from 'node:path';
import { z } from 'zod';
import { parseJson } from '../contract/parse-json.js';

/** The manifest types skopeo asks for: its digest is the digest of what the registry holds. */
const ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** node's codes for a certificate that does not verify (openssl's verify errors, and the name check). */
const CERTIFICATE_ERRORS = /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_|ERR_TLS_CERT_ALTNAME_INVALID)/;

export type TagDigest =
  | { readonly kind: 'digest'; readonly digest: string }
  /** the registry answered that the tag (or its repository) is not there */
  | { readonly kind: 'gone' }
  /** no definite answer: why, in words */
  | { readonly kind: 'unsure'; readonly why: string };

export interface RegistryReadOptions {
  /** false: the registry may serve plain HTTP or a certificate that does not verify (K8S_REGISTRY_TLS_VERIFY=false). */
  readonly tlsVerify: boolean;
  /** K8S_REGISTRY_CA_FILE: a PEM file of CA certificates trusted besides the system's. */
  readonly caFile?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  /** Each request's deadline. */
  readonly requestMs?: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
}

/** A token service's answer (https://distribution.github.io/distribution/spec/auth/token/): `token`, or OAuth2's `access_token`. */
const tokenReplySchema = z.looseObject({ token: z.string().optional(), access_token: z.string().optional() });

/** The auth file skopeo reads (containers-auth.json(5), Docker's config.json): base64 `user:password` per registry, or credential helpers. */
const authFileSchema = z.looseObject({
  auths: z.record(z.string(), z.looseObject({ auth: z.string().optional() })).optional(),
  credHelpers: z.unknown().optional(),
  credsStore: z.unknown().optional(),
});

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** `host[:port]/repo/path:tag` -> its parts; undefined for a reference by digest or without a tag. */
export function parseTagRef(ref: string): { host: string; repository: string; tag: string } | undefined {
  const slash = ref.indexOf('/');
  const colon = ref.lastIndexOf(':');
  if (slash <= 0 || colon <= slash || ref.includes('@')) return undefined;
  return { host: ref.slice(0, slash), repository: ref.slice(slash + 1, colon), tag: ref.slice(colon + 1) };
}

/** The digest every tag reference points at now, read concurrently through one client. */
export async function readTagDigests(refs: readonly string[], opts: RegistryReadOptions): Promise<Map<string, TagDigest>> {
  const client = new RegistryClient(opts);
  const out = new Map<string, TagDigest>();
  const queue = [...new Set(refs)];
  const worker = async () => {
    for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
      out.set(ref, await client.tagDigest(ref).catch((err: Error) => ({ kind: 'unsure', why: err.message }) as const));
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 16, queue.length) }, worker));
  return out;
}

class RegistryClient {
  /** per host: the scheme that answered, and the token of each repository's pull scope */
  private readonly schemes = new Map<string, Promise<'https' | 'http'>>();
  private readonly tokens = new Map<string, Promise<string>>();
  private auths: Promise<Record<string, { auth?: string }> | 'helpers'> | undefined;
  /** the CAs https trusts: undefined for node's own (the system's), else those and the CA file's */
  private cas: Promise<string[] | undefined> | undefined;

  constructor(private readonly opts: RegistryReadOptions) {}

  async tagDigest(ref: string): Promise<TagDigest> {
    const p = parseTagRef(ref);
    if (!p) return { kind: 'unsure', why: `${ref} is not a tag reference this client reads` };
    const path = `/v2/${p.repository}/manifests/${encodeURIComponent(p.tag)}`;
    const scheme = await this.scheme(p.host);
    let reply = await this.send(scheme, p.host, 'HEAD', path, await this.authorization(p.host, p.repository, undefined));
    if (reply.status === 401) {
      const challenge = String(reply.headers['www-authenticate'] ?? '');
      reply = await this.send(scheme, p.host, 'HEAD', path, await this.authorization(p.host, p.repository, challenge));
    }
    if (reply.status === 404) return { kind: 'gone' };
    if (reply.status !== 200) return { kind: 'unsure', why: `HEAD ${p.host}${path} answered ${reply.status}` };
    const digest = String(reply.headers['docker-content-digest'] ?? '');
    if (DIGEST.test(digest)) return { kind: 'digest', digest };
    // a registry that does not say the digest: the manifest's bytes are it
    const got = await this.send(scheme, p.host, 'GET', path, await this.authorization(p.host, p.repository, String(reply.headers['www-authenticate'] ?? '') || undefined));
    if (got.status !== 200) return { kind: 'unsure', why: `GET ${p.host}${path} answered ${got.status}` };
    return { kind: 'digest', digest: `sha256:${createHash('sha256').update(got.body).digest('hex')}` };
  }

  /** https, or with TLS verification off also plain http when https does not answer (as skopeo does). */
  private scheme(host: string): Promise<'https' | 'http'> {
    let s = this.schemes.get(host);
    if (!s) {
      s = this.send('https', host, 'HEAD', '/v2/', undefined).then(
        () => 'https' as const,
        (err: NodeJS.ErrnoException) => {
          if (this.opts.tlsVerify) throw new Error(`https://${host}/v2/: ${err.message}${this.certificateHint(err)}`);
          return 'http' as const;
        },
      );
      this.schemes.set(host, s);
    }
    return s;
  }

  /** For a certificate that does not verify: which CAs it was checked against, and the setting that names them. */
  private certificateHint(err: NodeJS.ErrnoException): string {
    if (!CERTIFICATE_ERRORS.test(err.code ?? '')) return '';
    return this.opts.caFile !== undefined
      ? ` (checked against the system's CAs and K8S_REGISTRY_CA_FILE=${this.opts.caFile}: is that the CA that signed the registry's certificate?)`
      : " (checked against the system's CAs: for a registry with a private CA, set K8S_REGISTRY_CA_FILE to its CA's PEM file)";
  }

  private trustedCas(): Promise<string[] | undefined> {
    const file = this.opts.caFile;
    this.cas ??= file === undefined
      ? Promise.resolve(undefined)
      : readFile(file, 'utf8').then(
          (pem) => [...rootCertificates, pem],
          (err: Error) => {
            throw new Error(`cannot read K8S_REGISTRY_CA_FILE ${file}: ${err.message}`);
          },
        );
    return this.cas;
  }

  /** The Authorization header for a request, after a challenge when there was one. */
  private async authorization(host: string, repository: string, challenge: string | undefined): Promise<string | undefined> {
    if (challenge === undefined) {
      const token = this.tokens.get(`${host}/${repository}`);
      return token ? `Bearer ${await token}` : undefined;
    }
    const basic = await this.basicCredentials(host);
    if (/^basic/i.test(challenge)) {
      if (!basic) throw new Error(`${host} asks for credentials and the auth file has none for it`);
      return `Basic ${basic}`;
    }
    const bearer = /^bearer\s+(.*)$/i.exec(challenge);
    if (!bearer) throw new Error(`${host} asks for an authentication this client does not speak: ${challenge.slice(0, 80)}`);
    const params = Object.fromEntries([...bearer[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
    if (!params.realm) throw new Error(`${host}'s Bearer challenge names no realm`);
    const key = `${host}/${repository}`;
    let token = this.tokens.get(key);
    if (!token) {
      token = this.fetchToken(params.realm, params.service, `repository:${repository}:pull`, basic);
      this.tokens.set(key, token);
    }
    return `Bearer ${await token}`;
  }

  private async fetchToken(realm: string, service: string | undefined, scope: string, basic: string | undefined): Promise<string> {
    const url = new URL(realm);
    if (service) url.searchParams.set('service', service);
    url.searchParams.set('scope', scope);
    const reply = await this.send(url.protocol === 'http:' ? 'http' : 'https', url.host, 'GET', `${url.pathname}${url.search}`, basic ? `Basic ${basic}` : undefined);
    if (reply.status !== 200) throw new Error(`the token service ${url.origin}${url.pathname} answered ${reply.status}`);
    const body = parseJson(tokenReplySchema, reply.body, `the token service ${url.origin}${url.pathname}`);
    const token = body.token ?? body.access_token;
    if (!token) throw new Error(`the token service ${url.origin}${url.pathname} gave no token`);
    return token;
  }

  /** base64 `user:password` for the host from the auth file skopeo reads; a credential helper is not read here. */
  private async basicCredentials(host: string): Promise<string | undefined> {
    this.auths ??= this.readAuthFile();
    const auths = await this.auths;
    if (auths === 'helpers') throw new Error('the registry credentials come from a credential helper, which only skopeo runs');
    return auths[host]?.auth ?? auths[`https://${host}`]?.auth ?? auths[`http://${host}`]?.auth;
  }

  private async readAuthFile(): Promise<Record<string, { auth?: string }> | 'helpers'> {
    const env = this.opts.env;
    const candidates = env.REGISTRY_AUTH_FILE
      ? [env.REGISTRY_AUTH_FILE]
      : [...(env.XDG_RUNTIME_DIR ? [join(env.XDG_RUNTIME_DIR, 'containers/auth.json')] : []), join(env.HOME ?? homedir(), '.docker/config.json')];
    for (const file of candidates) {
      const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw new Error(`cannot read the registry auth file ${file}: ${err.message}`);
      });
      if (text === undefined) continue;
      const doc = parseJson(authFileSchema, text, `the registry auth file ${file}`);
      if (doc.credHelpers !== undefined || doc.credsStore !== undefined) return 'helpers';
      return doc.auths ?? {};
    }
    return {};
  }

  private async send(scheme: 'https' | 'http', host: string, method: string, path: string, authorization: string | undefined): Promise<Reply> {
    const { hostname, port } = new URL(`${scheme}://${host}`);
    const ca = scheme === 'https' ? await this.trustedCas() : undefined;
    return new Promise((resolve, reject) => {
      const req = (scheme === 'http' ? httpRequest : httpsRequest)(
        {
          host: hostname.replace(/^\[|\]$/g, ''),
          port: port || (scheme === 'http' ? 80 : 443),
          method,
          path,
          headers: { Accept: ACCEPT, ...(authorization ? { Authorization: authorization } : {}) },
          ...(scheme === 'https' ? { rejectUnauthorized: this.opts.tlsVerify, ...(ca !== undefined ? { ca } : {}) } : {}),
          timeout: this.opts.requestMs ?? 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.opts.requestMs ?? 10_000} ms`)));
      req.on('error', reject);
      req.end();
    });
  }
}
