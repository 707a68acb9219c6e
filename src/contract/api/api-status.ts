/**
 * A failed request to the Kubernetes API server, read from its structured answer (the meta/v1
 * Status: the HTTP code, `reason`, `details` with the object and the `causes` with their field
 * paths), its class, and what to do about it (issue 45). Never from words of the message: the
 * message of a 422 says "spec.strategy.rollingUpdate: Forbidden: may not be specified ...", and a
 * word match on it once advised RBAC rights for an invalid object.
 *
 * Two facts have no structured field, and only there is the message read, each in one place:
 * which permission a 403 of the RBAC authorizer lacks (forbidden.ts), and whether a 403 came
 * from the ResourceQuota admission (isQuotaRefusal below).
 *
 * The answers come from deploy's own requests (src/kube/api-error.ts hands over the status
 * code and the body) and from the kubernetes provider, which relays a Status in tofu's
 * diagnostics (apiFailuresRelayed). Pure, and shared by src/kube/ and src/tools/: hence here.
 * Status: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/
 * The tests classify real answers of a cluster: test/fixtures/api-answers/.
 */
import { z } from 'zod';
import { FORBIDDEN_HINT, forbiddenIn, forbiddenWords } from './forbidden.js';

/** One cause of a refusal: the field (`spec.strategy.rollingUpdate`) and what is wrong with it. */
export interface ApiCause {
  readonly field: string | undefined;
  readonly reason: string | undefined;
  readonly message: string;
}

/** A failed API request, as its answer says it. */
export interface ApiFailure {
  /** The HTTP status; undefined when no answer came, or the relay does not say it. */
  readonly code: number | undefined;
  /** The Status's reason (`Invalid`, `Forbidden`, `NotFound`, ...); undefined when the answer gave none. */
  readonly reason: string | undefined;
  readonly message: string;
  /** The object, as the Status's details name it (`Deployment`/`apps`/`web`, or a resource: `deployments`). */
  readonly kind: string | undefined;
  readonly group: string | undefined;
  readonly name: string | undefined;
  readonly causes: readonly ApiCause[];
  readonly retryAfterSeconds: number | undefined;
  /** No answer: the client gave up waiting (its own deadline). */
  readonly noAnswer: boolean;
}

export type ApiFailureClass =
  | 'forbidden'
  | 'unauthorized'
  | 'invalid'
  | 'conflict'
  | 'not-found'
  | 'too-many-requests'
  | 'quota'
  | 'server-error'
  | 'timeout'
  | 'other';

/** What happened, in deploy's words, and what to do about it. */
export interface ApiAdvice {
  readonly class: ApiFailureClass;
  /** One sentence: what the API server did, the object, the fields. */
  readonly what: string;
  readonly hint: string;
}

/** A hand edit as deploy found it (src/workflow/drift/hand-edits.ts HandEdit): the field and its writer. */
export interface EditedField {
  readonly kind: string;
  readonly name: string;
  /** As people write it: `spec.template.spec.containers[node].env[FOO]`. */
  readonly field: string;
  readonly writer: string;
}

// --- reading an answer -----------------------------------------------------------------------

const statusSchema = z.looseObject({
  kind: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
  details: z
    .looseObject({
      name: z.string().optional(),
      group: z.string().optional(),
      kind: z.string().optional(),
      causes: z.array(z.looseObject({ reason: z.string().optional(), message: z.string().optional(), field: z.string().optional() })).optional(),
      retryAfterSeconds: z.number().optional(),
    })
    .optional(),
});

/**
 * The failure an answer describes: its HTTP status, its body (the Status, as text or parsed) and
 * its Retry-After header. A body that is no Status (a proxy's error page) keeps the code alone.
 */
export function apiFailureOf(code: number | undefined, body: unknown, retryAfter?: string): ApiFailure {
  const status = statusSchema.safeParse(typeof body === 'string' ? parsedOrText(body) : body);
  const header = retryAfter !== undefined && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (!status.success) {
    const text = typeof body === 'string' ? body : '';
    return { ...NOTHING, code, message: text.trim(), retryAfterSeconds: header };
  }
  const s = status.data;
  const d = s.details;
  return {
    code: code ?? s.code,
    reason: s.reason || undefined,
    message: s.message ?? '',
    kind: d?.kind || undefined,
    group: d?.group || undefined,
    name: d?.name || undefined,
    causes: (d?.causes ?? []).map((c) => ({ field: c.field || undefined, reason: c.reason || undefined, message: c.message ?? '' })),
    retryAfterSeconds: d?.retryAfterSeconds ?? header,
    noAnswer: false,
  };
}

/** No answer within the client's deadline (src/deadline.ts DeadlineError, a TimeoutError). */
export function apiNoAnswer(message: string): ApiFailure {
  return { ...NOTHING, message, noAnswer: true };
}

const NOTHING: ApiFailure = { code: undefined, reason: undefined, message: '', kind: undefined, group: undefined, name: undefined, causes: [], retryAfterSeconds: undefined, noAnswer: false };

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// --- reading the provider's relay ------------------------------------------------------------

/** A diagnostic of tofu's, as far as the relay needs it (src/tools/tofu/tofu-events.ts TofuDiagnostic). */
export interface RelayedDiagnostic {
  readonly summary: string;
  readonly detail: string;
  readonly address?: string | undefined;
}

/** A failure the provider relayed, and the diagnostics that said it. */
export interface Relayed<D extends RelayedDiagnostic> {
  readonly failure: ApiFailure;
  readonly diagnostics: readonly D[];
}

// The kubernetes provider's words for a Status (v2.38.0, manifest/provider/diagnostics.go
// APIStatusErrorToDiagnostics): "API response status: <status>" with the message as detail;
// then, when the Status has details, "Kubernetes API Error: <Reason> <Kind.group> [<name>]";
// then one diagnostic per cause, its summary the field and its detail the message. A
// field-manager conflict and an object that exists already have their own summaries
// (manifest/provider/apply.go). Fixed formats of the provider, not the API server's prose.
const STATUS_SUMMARY = /^API response status: /;
const ERROR_SUMMARY = /^Kubernetes API Error: (\S*) (\S*) \[(.*)\]$/s;
const CONFLICT_SUMMARY = /^There was a field manager conflict when trying to apply the manifest for "(?:([^"/]*)\/)?([^"]*)"$/;
const EXISTS_SUMMARY = /^Cannot create resource that already exists$/;
const EXISTS_DETAIL = /^resource "(?:[^"/]*\/)?([^"]*)" already exists$/;

/**
 * The API failures the provider relayed in these diagnostics (those of a kubernetes_manifest;
 * its typed resources pass on only the message, so they give none), each with the diagnostics
 * that carry it, in order.
 */
export function apiFailuresRelayed<D extends RelayedDiagnostic>(diagnostics: readonly D[]): Relayed<D>[] {
  const out: Relayed<D>[] = [];
  for (let i = 0; i < diagnostics.length; i++) {
    const d = diagnostics[i]!;
    const conflict = CONFLICT_SUMMARY.exec(d.summary);
    if (conflict) out.push({ failure: { ...NOTHING, code: 409, reason: 'Conflict', message: d.detail.split('\n')[0]!, name: conflict[2] || undefined }, diagnostics: [d] });
    else if (EXISTS_SUMMARY.test(d.summary)) {
      const name = EXISTS_DETAIL.exec(d.detail)?.[1];
      // (the provider's own check, a read that found the object: no 409 was answered)
      out.push({ failure: { ...NOTHING, reason: 'AlreadyExists', message: d.detail, name: name || undefined }, diagnostics: [d] });
    } else if (STATUS_SUMMARY.test(d.summary)) {
      const group = relayedStatus(diagnostics, i);
      out.push(group);
      i += group.diagnostics.length - 1;
    }
  }
  return out;
}

/** The Status relayed from diagnostics[i] ("API response status: ..."): its error line and causes follow. */
function relayedStatus<D extends RelayedDiagnostic>(diagnostics: readonly D[], i: number): Relayed<D> {
  const first = diagnostics[i]!;
  const same = (d: D | undefined): d is D => d !== undefined && d.address === first.address;
  const head = diagnostics[i + 1];
  const error = same(head) ? ERROR_SUMMARY.exec(head.summary) : null;
  if (!error) return { failure: { ...NOTHING, message: first.detail }, diagnostics: [first] };
  const [, reason, groupKind, name] = error;
  const dot = groupKind!.indexOf('.');
  const taken: D[] = [first, head!];
  const causes: ApiCause[] = [];
  for (let j = i + 2; same(diagnostics[j]) && !isRelayHead(diagnostics[j]!.summary); j++) {
    const c = diagnostics[j]!;
    taken.push(c);
    causes.push({ field: c.summary || undefined, reason: undefined, message: c.detail });
  }
  const failure: ApiFailure = {
    ...NOTHING,
    reason: reason || undefined,
    message: first.detail,
    kind: (dot < 0 ? groupKind : groupKind!.slice(0, dot)) || undefined,
    group: dot < 0 ? undefined : groupKind!.slice(dot + 1),
    name: name || undefined,
    causes,
  };
  return { failure, diagnostics: taken };
}

function isRelayHead(summary: string): boolean {
  return STATUS_SUMMARY.test(summary) || ERROR_SUMMARY.test(summary) || CONFLICT_SUMMARY.test(summary) || EXISTS_SUMMARY.test(summary);
}

// --- the class -----------------------------------------------------------------------------

/** The Status reasons (metav1.StatusReason) and their class; the reason wins over the code. */
const BY_REASON: Readonly<Record<string, ApiFailureClass>> = {
  Forbidden: 'forbidden',
  Unauthorized: 'unauthorized',
  Invalid: 'invalid',
  Conflict: 'conflict',
  AlreadyExists: 'conflict',
  NotFound: 'not-found',
  TooManyRequests: 'too-many-requests',
  Timeout: 'timeout',
  ServerTimeout: 'timeout',
  InternalError: 'server-error',
  ServiceUnavailable: 'server-error',
};

const BY_CODE: Readonly<Record<number, ApiFailureClass>> = { 401: 'unauthorized', 403: 'forbidden', 404: 'not-found', 409: 'conflict', 422: 'invalid', 429: 'too-many-requests', 504: 'timeout' };

/** The class of a failure, from its status and reason only (and, for a 403, isQuotaRefusal). */
export function classifyApiFailure(f: ApiFailure): ApiFailureClass {
  if (f.noAnswer) return 'timeout';
  const code = f.code ?? 0;
  const cls = (f.reason !== undefined ? BY_REASON[f.reason] : undefined) ?? BY_CODE[code] ?? (code >= 500 ? 'server-error' : 'other');
  return cls === 'forbidden' && isQuotaRefusal(f.message) ? 'quota' : cls;
}

/**
 * Whether a 403 is the ResourceQuota admission's. Its Status is a plain Forbidden (reason,
 * code and details as any 403: test/fixtures/api-answers/quota.json), so here alone the
 * message tells: the plugin's own words after the "is forbidden: " of admission.NewForbidden,
 * "exceeded quota: <name>, requested: ..." or, before the quota is counted, "status unknown
 * for quota: <name>" (kubernetes plugin/pkg/admission/resourcequota/controller.go). Matched
 * after that prefix only, so an object or namespace named "exceeded-quota" does not count.
 */
export function isQuotaRefusal(message: string): boolean {
  return / is forbidden: (exceeded quota|status unknown for quota): /.test(message);
}

/** What to do about a quota's refusal. */
export const QUOTA_HINT =
  "raise the quota the message names, or free what it counts (`kubectl describe resourcequota -n <namespace>` shows use and limits), or ask the cluster's operator; then run the command again";

// --- the advice ----------------------------------------------------------------------------

/**
 * What happened and what to do, per class; `edits`: the hand edits deploy found on the target's
 * objects, so that an invalid field that one of them wrote is named with its writer.
 */
export function adviseApiFailure(f: ApiFailure, edits: readonly EditedField[] = []): ApiAdvice {
  const cls = classifyApiFailure(f);
  const said = ADVICE[cls](f, edits);
  return { class: cls, ...said };
}

type Advise = (f: ApiFailure, edits: readonly EditedField[]) => { what: string; hint: string };

const ADVICE: Readonly<Record<ApiFailureClass, Advise>> = {
  forbidden: adviseForbidden,
  unauthorized: (f) => ({
    what: `the API server did not accept deploy's credentials (${status(f)})`,
    hint: 'the kubeconfig\'s user has no valid credentials for this cluster (an expired token or certificate, or those of another cluster): renew them and check with `kubectl --kubeconfig "$KUBE_CONFIG_PATH" auth whoami`, then run the command again',
  }),
  invalid: adviseInvalid,
  conflict: (f) =>
    f.reason === 'AlreadyExists'
      ? {
          what: `${objectOf(f)} exists already, and deploy did not create it (${status(f)}): ${brief(f.message)}`,
          hint: 'an object of that name that deploy\'s state does not hold is in the way: if it is a leftover, delete it (`kubectl delete`); if it is someone else\'s, give the node another name; then run the command again',
        }
      : {
          what: `another writer changed ${objectOf(f)} while deploy wrote it (${status(f)}): ${brief(f.message)}`,
          hint: 'run the command again: it reads the object anew; if this comes back every time, something keeps writing the object (a controller, a script): `deploy plan` names the writers of its hand edits',
        },
  'not-found': (f) => ({
    what: `${objectOf(f)} does not exist (${status(f)}): ${brief(f.message)}`,
    hint: 'it was deleted, or deploy looks in another namespace or cluster than the one that holds it: check K8S_NAMESPACE (or --namespace) and the kubeconfig\'s context; `deploy apply` creates what the graph holds and the cluster lacks',
  }),
  'too-many-requests': (f) => ({
    what: `the API server turned the request away under load (${status(f)})${f.retryAfterSeconds !== undefined ? `, asking to try again after ${f.retryAfterSeconds}s` : ''}: ${brief(f.message)}`,
    hint: "wait a little and run the command again; if it keeps happening, the cluster's API Priority and Fairness gives deploy's identity too little room: ask the cluster's operator about the FlowSchema and priority level that hold it",
  }),
  quota: (f) => ({
    what: `the namespace's ResourceQuota refused ${objectOf(f)} (${status(f)}): ${brief(f.message)}`,
    hint: QUOTA_HINT,
  }),
  'server-error': (f) => ({
    what: `the API server failed${f.name || f.kind ? ` on ${objectOf(f)}` : ''} (${status(f)}): ${brief(f.message)}`,
    hint: "a failure of the cluster, not of the object: if the message names an admission webhook, the webhook's service is down or broken (its owner or the cluster's operator must mend it); otherwise check the API server and its etcd (`kubectl get --raw /readyz`); then run the command again",
  }),
  timeout: (f) => ({
    what: f.noAnswer ? `no answer from the API server in time: ${brief(f.message)}` : `the API server did not finish the request in time (${status(f)}): ${brief(f.message)}`,
    hint: 'the API server, or an admission webhook it calls, is slow or overloaded: check that it answers (`kubectl get --raw /readyz`), then run the command again; it goes on from what was done',
  }),
  other: (f) => ({
    what: `the API server refused the request (${status(f)}): ${brief(f.message)}`,
    hint: "read the API server's answer above, fix what it names, then run the command again",
  }),
};

function adviseForbidden(f: ApiFailure): { what: string; hint: string } {
  // a 403 of the RBAC authorizer names the permission (forbidden.ts); any other 403 is an
  // admission's (Pod Security, a LimitRange, a webhook that denied it)
  const refused = forbiddenIn(f.message);
  if (refused.length > 0) return { what: refused.map(forbiddenWords).join('; '), hint: FORBIDDEN_HINT };
  return {
    what: `the cluster's admission refused ${objectOf(f)} (${status(f)}), for no missing permission: ${brief(f.message)}`,
    hint: "a rule of the cluster (Pod Security, a LimitRange, a policy or webhook) refuses the object as written: change what the message names, or ask the cluster's operator about the rule",
  };
}

function adviseInvalid(f: ApiFailure, edits: readonly EditedField[]): { what: string; hint: string } {
  if (f.causes.length === 0) {
    return {
      what: `the API server refused the request to ${objectOf(f)} as invalid, naming no field (${status(f)}): ${brief(f.message)}`,
      hint: 'a JSON patch whose test failed is answered so (the object changed since deploy read it): run the command again; if it comes back, read the message above',
    };
  }
  const causes = f.causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const edited = editsAtCauses(f, edits);
  const byHand = edited.map((e) => `${e.field} of ${e.kind} ${e.name} is a hand edit by ${e.writer}`);
  return {
    what: `the API server refused ${objectOf(f)} as invalid (${status(f)}): ${brief(causes.join('; '))}${byHand.length ? `; ${byHand.join('; ')}` : ''}`,
    hint: byHand.length
      ? "the hand edit named above made the object invalid together with what deploy writes: undo it (`kubectl edit`, or ask its writer), then run the command again; `deploy plan` lists every hand edit and its writer"
      : 'the field named above is wrong as written: if someone edited the object by hand, `deploy plan` names the edit and its writer and `deploy apply` removes it; otherwise the value does not suit this cluster (its version, its admission rules): correct it in the group plan',
  };
}

/** The edits of the failed object whose field is a cause's field, or under or over it. */
export function editsAtCauses(f: ApiFailure, edits: readonly EditedField[]): EditedField[] {
  const fields = f.causes.map((c) => c.field).filter((c): c is string => c !== undefined).map(steps);
  return edits.filter(
    (e) =>
      (f.name === undefined || e.name === f.name) &&
      (f.kind === undefined || e.kind.toLowerCase() === f.kind.toLowerCase()) &&
      fields.some((c) => nested(steps(e.field), c)),
  );
}

/** `spec.containers[0].env[FOO]` -> spec, containers, [0], env, [FOO]. */
function steps(field: string): string[] {
  return [...field.matchAll(/\[([^\]]*)\]|([^.[\]]+)/g)].map((m) => (m[1] !== undefined ? `[${m[1]}]` : m[2]!));
}

/**
 * Whether one path is the other or under it. The API server names a list element by its index
 * (`containers[0]`), a hand edit by its key (`containers[web]`): an index stands for any element.
 */
function nested(a: readonly string[], b: readonly string[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const anyElement = x.startsWith('[') && y.startsWith('[') && (/^\[\d+\]$/.test(x) || /^\[\d+\]$/.test(y));
    if (!anyElement) return false;
  }
  return true;
}

/** `Deployment web`, `configmaps stale`, or `the object`. */
function objectOf(f: ApiFailure): string {
  if (f.kind && f.name) return `${f.kind} ${f.name}`;
  return f.name ? `object ${f.name}` : f.kind ? `the ${f.kind}` : 'the object';
}

/** `422 Invalid`, `Invalid` (relayed: no code), `HTTP 502`. */
function status(f: ApiFailure): string {
  if (f.code !== undefined && f.reason !== undefined) return `${f.code} ${f.reason}`;
  return f.reason ?? (f.code !== undefined ? `HTTP ${f.code}` : 'no status');
}

/** The message's first line, at most 500 characters. */
function brief(message: string): string {
  return message.split('\n')[0]!.slice(0, 500) || '(no message)';
}
