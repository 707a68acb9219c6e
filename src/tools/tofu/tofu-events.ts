/**
 * OpenTofu's machine-readable UI (`-json`: one JSON object per line) parsed at the boundary
 * into the project's own events, a union tagged by `kind`.
 * Format: https://opentofu.org/docs/internals/machine-readable-ui/
 *
 * Values are never carried over: resource attributes, outputs and the "Emergency state dump"
 * can hold secrets (law 6). A state dump is handed to the caller separately (`stateDump`) so
 * it can be saved to a private file, never printed.
 */
import { z } from 'zod';
import { describeGraphAddress } from '../../contract/graph/graph-ids.js';
import { stepLinesInWords } from '../../contract/step-lines.js';

export type ChangeAction = 'noop' | 'create' | 'read' | 'update' | 'replace' | 'delete' | 'move' | 'import' | 'forget' | 'open' | 'close' | 'renew' | string;

export interface ChangeSummary {
  readonly operation: 'plan' | 'apply' | 'destroy' | string;
  readonly add: number;
  readonly change: number;
  readonly remove: number;
  readonly import: number;
}

export interface TofuDiagnostic {
  readonly severity: 'error' | 'warning';
  readonly summary: string;
  readonly detail: string;
  /** The resource address the diagnostic is about, when tofu knows it. */
  readonly address: string | undefined;
  /** `file:line` of the configuration, when there is one. */
  readonly where: string | undefined;
}

export type TofuEvent =
  | { readonly kind: 'version'; readonly tofu: string }
  | { readonly kind: 'log'; readonly level: string; readonly message: string }
  | { readonly kind: 'diagnostic'; readonly diagnostic: TofuDiagnostic }
  | { readonly kind: 'planned-change'; readonly address: string; readonly action: ChangeAction; readonly reason: string | undefined }
  | { readonly kind: 'drift'; readonly address: string; readonly action: ChangeAction }
  | { readonly kind: 'change-summary'; readonly summary: ChangeSummary }
  | { readonly kind: 'apply-start'; readonly address: string; readonly action: ChangeAction }
  | { readonly kind: 'apply-progress'; readonly address: string; readonly action: ChangeAction; readonly elapsedSeconds: number }
  | { readonly kind: 'apply-complete'; readonly address: string; readonly action: ChangeAction; readonly elapsedSeconds: number }
  | { readonly kind: 'apply-errored'; readonly address: string; readonly action: ChangeAction; readonly elapsedSeconds: number }
  | { readonly kind: 'provision'; readonly phase: 'start' | 'output' | 'complete' | 'errored'; readonly address: string; readonly provisioner: string; readonly output: string | undefined }
  | { readonly kind: 'refresh'; readonly phase: 'start' | 'complete'; readonly address: string }
  | { readonly kind: 'outputs'; readonly names: readonly string[] }
  /** A line that is not tofu JSON (a crash, a plugin's raw output). */
  | { readonly kind: 'unparsed'; readonly line: string };

const resource = z.object({ addr: z.string() }).loose();
const hook = <T extends z.ZodRawShape>(shape: T) => z.object({ resource, ...shape }).loose();

const base = { '@level': z.string().optional(), '@message': z.string().optional() };

/** A diagnostic as tofu writes it in -json output (the stream and `validate -json`). */
export const diagnosticSchema = z
  .object({
    severity: z.string(),
    summary: z.string(),
    detail: z.string().optional(),
    address: z.string().optional(),
    range: z.object({ filename: z.string(), start: z.object({ line: z.number() }).loose() }).loose().optional(),
  })
  .loose();

/** tofu's diagnostic -> ours. */
export function toDiagnostic(d: z.infer<typeof diagnosticSchema>): TofuDiagnostic {
  return {
    severity: d.severity === 'error' ? 'error' : 'warning',
    summary: d.summary,
    detail: d.detail ?? '',
    address: d.address,
    where: d.range ? `${d.range.filename}:${d.range.start.line}` : undefined,
  };
}

const messageSchema = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('version'), tofu: z.string().optional(), terraform: z.string().optional() }).loose(),
  z.object({ ...base, type: z.literal('log') }).loose(),
  z
    .object({
      ...base,
      type: z.literal('diagnostic'),
      diagnostic: diagnosticSchema,
    })
    .loose(),
  z.object({ ...base, type: z.literal('planned_change'), change: z.object({ resource, action: z.string(), reason: z.string().optional() }).loose() }).loose(),
  z.object({ ...base, type: z.literal('resource_drift'), change: z.object({ resource, action: z.string() }).loose() }).loose(),
  z
    .object({
      ...base,
      type: z.literal('change_summary'),
      changes: z
        .object({ add: z.number(), change: z.number(), remove: z.number(), import: z.number().optional(), operation: z.string() })
        .loose(),
    })
    .loose(),
  z.object({ ...base, type: z.literal('apply_start'), hook: hook({ action: z.string() }) }).loose(),
  z.object({ ...base, type: z.literal('apply_progress'), hook: hook({ action: z.string(), elapsed_seconds: z.number() }) }).loose(),
  z.object({ ...base, type: z.literal('apply_complete'), hook: hook({ action: z.string(), elapsed_seconds: z.number() }) }).loose(),
  z.object({ ...base, type: z.literal('apply_errored'), hook: hook({ action: z.string(), elapsed_seconds: z.number() }) }).loose(),
  z.object({ ...base, type: z.literal('provision_start'), hook: hook({ provisioner: z.string() }) }).loose(),
  z.object({ ...base, type: z.literal('provision_progress'), hook: hook({ provisioner: z.string(), output: z.string() }) }).loose(),
  z.object({ ...base, type: z.literal('provision_complete'), hook: hook({ provisioner: z.string() }) }).loose(),
  z.object({ ...base, type: z.literal('provision_errored'), hook: hook({ provisioner: z.string() }) }).loose(),
  z.object({ ...base, type: z.literal('refresh_start'), hook: hook({}) }).loose(),
  z.object({ ...base, type: z.literal('refresh_complete'), hook: hook({}) }).loose(),
  z.object({ ...base, type: z.literal('outputs'), outputs: z.record(z.string(), z.unknown()) }).loose(),
]);

/** Any other message type still has a level and a message. */
const genericSchema = z.object({ type: z.string().optional(), '@level': z.string().optional(), '@message': z.string().optional() }).loose();

export interface ParsedLine {
  readonly event: TofuEvent;
  /** The state of an "Emergency state dump" (tofu could not write errored.tfstate). Secret. */
  readonly stateDump?: unknown;
}

/** Parses one line of `tofu ... -json` output. Never throws. */
export function parseTofuLine(line: string): ParsedLine {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { event: { kind: 'unparsed', line } };
  }
  const parsed = messageSchema.safeParse(json);
  if (!parsed.success) {
    const generic = genericSchema.safeParse(json);
    if (generic.success && (generic.data['@message'] !== undefined || generic.data.type !== undefined)) {
      return { event: { kind: 'log', level: generic.data['@level'] ?? 'info', message: generic.data['@message'] ?? `(${generic.data.type})` } };
    }
    return { event: { kind: 'unparsed', line: '(a JSON line that is not a tofu message)' } };
  }
  const m = parsed.data;
  const level = m['@level'] ?? 'info';
  const message = m['@message'] ?? '';
  switch (m.type) {
    case 'version':
      return { event: { kind: 'version', tofu: m.tofu ?? m.terraform ?? 'unknown' } };
    case 'log': {
      const dump = (m as { state?: unknown }).state;
      if (dump !== undefined) {
        return { event: { kind: 'log', level: 'error', message: 'tofu dumped its state because it could not save it (kept out of the output)' }, stateDump: dump };
      }
      return { event: { kind: 'log', level, message } };
    }
    case 'diagnostic':
      return { event: { kind: 'diagnostic', diagnostic: toDiagnostic(m.diagnostic) } };
    case 'planned_change':
      return { event: { kind: 'planned-change', address: m.change.resource.addr, action: m.change.action, reason: m.change.reason } };
    case 'resource_drift':
      return { event: { kind: 'drift', address: m.change.resource.addr, action: m.change.action } };
    case 'change_summary': {
      const c = m.changes;
      return { event: { kind: 'change-summary', summary: { operation: c.operation, add: c.add, change: c.change, remove: c.remove, import: c.import ?? 0 } } };
    }
    case 'apply_start':
      return { event: { kind: 'apply-start', address: m.hook.resource.addr, action: m.hook.action } };
    case 'apply_progress':
      return { event: { kind: 'apply-progress', address: m.hook.resource.addr, action: m.hook.action, elapsedSeconds: m.hook.elapsed_seconds } };
    case 'apply_complete':
      return { event: { kind: 'apply-complete', address: m.hook.resource.addr, action: m.hook.action, elapsedSeconds: m.hook.elapsed_seconds } };
    case 'apply_errored':
      return { event: { kind: 'apply-errored', address: m.hook.resource.addr, action: m.hook.action, elapsedSeconds: m.hook.elapsed_seconds } };
    case 'provision_start':
      return { event: { kind: 'provision', phase: 'start', address: m.hook.resource.addr, provisioner: m.hook.provisioner, output: undefined } };
    case 'provision_progress':
      return { event: { kind: 'provision', phase: 'output', address: m.hook.resource.addr, provisioner: m.hook.provisioner, output: m.hook.output } };
    case 'provision_complete':
      return { event: { kind: 'provision', phase: 'complete', address: m.hook.resource.addr, provisioner: m.hook.provisioner, output: undefined } };
    case 'provision_errored':
      return { event: { kind: 'provision', phase: 'errored', address: m.hook.resource.addr, provisioner: m.hook.provisioner, output: undefined } };
    case 'refresh_start':
      return { event: { kind: 'refresh', phase: 'start', address: m.hook.resource.addr } };
    case 'refresh_complete':
      return { event: { kind: 'refresh', phase: 'complete', address: m.hook.resource.addr } };
    case 'outputs':
      return { event: { kind: 'outputs', names: Object.keys(m.outputs).sort() } };
  }
}

/** One line for a person (CI logs, the pino `msg`). */
export function describeTofuEvent(e: TofuEvent): string {
  switch (e.kind) {
    case 'version':
      return `OpenTofu ${e.tofu}`;
    case 'log':
      return e.message.trim();
    case 'diagnostic':
      return formatDiagnostic(e.diagnostic);
    case 'planned-change':
      return `${e.address}: will ${e.action}${e.reason ? ` (${e.reason})` : ''}`;
    case 'drift':
      return `${e.address}: changed outside OpenTofu (${e.action})`;
    case 'change-summary':
      return `${e.summary.operation}: ${e.summary.add} to add, ${e.summary.change} to change, ${e.summary.remove} to destroy`;
    case 'apply-start':
      return `${e.address}: ${e.action} started`;
    case 'apply-progress':
      return `${e.address}: ${e.action} still running (${Math.round(e.elapsedSeconds)}s)`;
    case 'apply-complete':
      return `${e.address}: ${e.action} done (${Math.round(e.elapsedSeconds)}s)`;
    case 'apply-errored':
      return `${e.address}: ${e.action} FAILED (${Math.round(e.elapsedSeconds)}s)`;
    case 'provision':
      return e.phase === 'output' ? `${e.address} (${e.provisioner}): ${e.output ?? ''}` : `${e.address}: ${e.provisioner} ${e.phase}`;
    case 'refresh':
      return `${e.address}: refresh ${e.phase}`;
    case 'outputs':
      return `outputs: ${e.names.join(', ')}`;
    case 'unparsed':
      return e.line;
  }
}

/**
 * tofu's words when a provider it was starting, or talking to, ended under the interrupt (the
 * terminal's Ctrl-C reaches the providers too): go-plugin's handshake failure, whose text
 * blames the plugin's architecture or libraries, and a gRPC connection closed mid-call. After
 * an interrupt these say nothing about the plugin; the next run starts the same binaries.
 */
const PROVIDER_ENDED = /Unrecognized remote plugin message|Plugin did not respond|connection is shut down|plugin exited before we could connect|code = (Canceled|Unavailable)/i;

/** A diagnostic that only says that the run's interrupt stopped something (the echo and tofu-failure.ts leave these out after an interrupt). */
export function causedByTheInterrupt(d: Pick<TofuDiagnostic, 'summary' | 'detail'>): boolean {
  return /interrupt|cancel|^execution halted$/i.test(d.summary) || /signal: (interrupt|terminated|killed)/.test(d.detail) || PROVIDER_ENDED.test(`${d.summary}\n${d.detail}`);
}

/** A diagnostic for people: its resource named as the node and part (`mail: image push`), not by address, in its text too. */
export function formatDiagnostic(d: TofuDiagnostic): string {
  const where = (d.address === undefined ? undefined : (describeGraphAddress(d.address) ?? d.address)) ?? d.where;
  const head = `${d.severity === 'error' ? 'Error' : 'Warning'}${where ? ` (${where})` : ''}: ${nameGraphParts(d.summary)}`;
  // a step's typed lines (src/contract/step-lines.ts) in the words they stand for
  const detail = nameGraphParts(stepLinesInWords(withoutScript(d.detail.trim())));
  return detail ? `${head}: ${detail}` : head;
}

/**
 * A local-exec failure without the step's whole shell script (the graph's push, digest and
 * rollout steps are scripts of dozens of lines): its exit status and its output, which say
 * what failed. The script is in the graph (cdk.tf.json), and in tofu's own events at
 * DEPLOY_LOG_LEVEL=debug.
 */
export function withoutScript(detail: string): string {
  const m = /^Error running command '[\s\S]*?': (exit status \d+|signal: [a-z]+)\. Output: ?([\s\S]*)$/.exec(detail);
  if (m === null) return detail;
  const output = m[2]!.trim();
  return `the step's command failed (${m[1]})${output ? `; its output:\n${output}` : ', with no output'}`;
}

/**
 * A text with each graph address or construct ID in it (`kubernetes_manifest.node-mail_deployment_A2CE01B5`)
 * said as people name it (`[mail: Deployment]`): tofu and the providers quote addresses in their words.
 */
export function nameGraphParts(text: string): string {
  return text.replace(/\b(?:data\.)?(?:[a-z][a-z0-9_]*\.)?((?:image|node|spire)-?[a-z0-9-]*_[a-z-]+_[0-9A-F]{8})\b/g, (all, name: string) => {
    const words = describeGraphAddress(name);
    return words === undefined ? all : `[${words}]`;
  });
}
