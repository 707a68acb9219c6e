/**
 * The shell that pushes a node's image and reads its digest, run by tofu (the push as a
 * null_resource's local-exec, the digest as an `external` data source). The push writes the
 * digest the registry gave it into the run's directory (DEPLOY_RUN_DIR, one per run and
 * target), and the digest read after it prints that one: the digest recorded in the state
 * (stacks/node.ts) is the pushed one, whatever the tag points at by then (FR-003). skopeo reads
 * REGISTRY_AUTH_FILE itself, so credentials never enter the graph; DEPLOY_SKOPEO is the skopeo
 * the run found (src/tools/discover.ts). The text is part of the graph: a change to it changes
 * every graph (test/unit/stacks/target-stack-scripts.test.ts pins it). These return the shell as it
 * runs; the constructs escape it for tofu's templates (tfEscape).
 */
import { createHash } from 'node:crypto';
import type { ImageBuild, TargetModel } from '../src/config/target-model.js';
import { REGISTRY_CERT_DIR_ENV } from '../src/contract/registry-cert-dir.js';
import { shellWords, shq } from '../src/contract/shell.js';
import { sayStepLine, STEP_LINE_SHELL, stepLinesOf } from '../src/contract/step-lines.js';
import { TF_HTTP_VARIABLES } from '../src/contract/graph/tf-http-variables.js';
import { TOFU_GOGC_SET_ENV } from '../src/contract/graph/tofu-gogc.js';

/**
 * How skopeo checks the registry's certificate: against the system's CAs (`system`, skopeo's
 * default), also against the CA the run staged (`ca`: K8S_REGISTRY_CA_FILE, in
 * DEPLOY_REGISTRY_CERT_DIR), or not at all (`off`: K8S_REGISTRY_TLS_VERIFY=false, plain http
 * allowed). A graph without a CA is byte for byte what it was before the CA setting existed.
 */
export type RegistryTls = 'system' | 'ca' | 'off';

export function registryTlsOf(target: Pick<TargetModel, 'registryTlsVerify' | 'registryCaFile'>): RegistryTls {
  if (!target.registryTlsVerify) return 'off';
  return target.registryCaFile !== undefined ? 'ca' : 'system';
}

/** skopeo's option for the registry's certificate: `dest` for copy's destination, `plain` for inspect. */
function tlsOption(tls: RegistryTls, side: 'dest' | 'plain'): string {
  const prefix = side === 'dest' ? '--dest-' : '--';
  if (tls === 'off') return ` ${prefix}tls-verify=false`;
  // unset only when the graph is run by hand, outside deploy: then say so rather than skopeo's default
  if (tls === 'ca') return ` ${prefix}cert-dir "\${${REGISTRY_CERT_DIR_ENV}:?is not set: the registry CA (K8S_REGISTRY_CA_FILE) is staged there by deploy plan/apply}"`;
  return '';
}

export interface PushedImage {
  /** The node's name, as the messages say it. */
  readonly name: string;
  /** The docker archive (absolute). */
  readonly archive: string;
  /** `<registry>/<namespace>/<node>:<tag>`. */
  readonly tagRef: string;
  /** `image.build`: run first (a node without it is pushed as before, byte for byte). */
  readonly build?: ImageBuild;
  /**
   * What the nodes that push the same archive to the same tag share (uploadKey): in one run, the
   * first of them to start uploads it and the others wait for that push, then skopeo mounts its
   * layers into their repositories instead of uploading them again.
   */
  readonly upload: string;
}

/**
 * Copies the node's archive to its tag; a missing archive fails naming the node and what to do.
 * A node this run pushed already (deploy runs the push steps before tofu's apply:
 * src/workflow/target/push-first.ts; its digest is in the run's directory) ends at once, so tofu's
 * own run of the step is a no-op.
 * With `image.build`, the command runs first: in the plan file's directory, stdin from
 * /dev/null, with tofu's environment less the state backend's (TF_HTTP_*: its address and
 * credentials; a build has no business with the state) and less the GOGC deploy gave tofu
 * (src/contract/graph/tofu-gogc.ts: an operator's own GOGC stays); each line it prints (stdout and stderr) goes out as
 * a typed line of the build (src/contract/step-lines.ts; said `<node>: build: <line>`), so the
 * run's progress shows it as it comes. A failure names the node, the command and its exit
 * code; a build that ends well without writing the archive fails too. What the push says to
 * deploy is typed lines only: deploy makes their words (stepLineWords).
 */
export function pushScript(image: PushedImage, registryTls: RegistryTls): string {
  const tls = tlsOption(registryTls, 'dest');
  return [
    ...STEP_LINE_SHELL,
    `archive=${shq(image.archive)}`,
    // pushed already in this run: deploy pushes before tofu's apply (src/workflow/target/push-first.ts)
    `if [ -n "\${DEPLOY_RUN_DIR:-}" ] && [ -s "$DEPLOY_RUN_DIR/${pushedDigestFile(image.name)}" ]; then exit 0; fi`,
    ...sharedUploadLines(image.name, image.upload),
    ...(image.build ? buildLines(image.name, image.build) : []),
    `if [ ! -r "$archive" ]; then ${failed(image.name, 'image archive $archive is missing or unreadable; build the node image, or fix image.archive in the group plan')}; exit 1; fi`,
    // the digest the registry gives for this push, for the digest read after it (FR-003)
    `set --; if [ -n "\${DEPLOY_RUN_DIR:-}" ]; then set -- --digestfile "$DEPLOY_RUN_DIR/${pushedDigestFile(image.name)}"; fi`,
    `exec "\${DEPLOY_SKOPEO:-skopeo}" copy --quiet --retry-times 3${tls} "$@" "docker-archive:$archive" ${shq(`docker://${image.tagRef}`)}`,
  ].join('\n');
}

/**
 * The key of an upload that nodes share: the archive and the tag (not the node's repository).
 * Nodes with the same archive under another tag upload it again, as before.
 */
export function uploadKey(archive: string, tag: string): string {
  return createHash('sha256').update(`${archive}\n${tag}`).digest('hex').slice(0, 16);
}

/**
 * One upload per archive and tag in a run, without an order in the graph. The first push of
 * the run to make `$DEPLOY_RUN_DIR/upload-<key>` uploads (it leaves its PID and node there, its
 * PID stays skopeo's: exec); each other waits until that process is gone, then pushes too, and
 * skopeo mounts the layers it knows were uploaded (its blob-info cache) instead of uploading
 * them again. When the first push failed (it wrote no digest), the others fail without trying,
 * naming it, as they did when the graph made them wait for it. Without DEPLOY_RUN_DIR (tofu run
 * by hand) every push uploads on its own.
 *
 * Why not `depends_on` on the first node's push, as before: the first node by name changes when
 * that node gets another image, and then every other push's dependencies changed in the state,
 * which made tofu decode every resource of the state for its drift report: a scoped plan of one
 * node of 200 took twice as long (bench/README.md).
 */
function sharedUploadLines(name: string, key: string): string[] {
  return [
    `if [ -n "\${DEPLOY_RUN_DIR:-}" ] && [ -d "$DEPLOY_RUN_DIR" ]; then`,
    `  up="$DEPLOY_RUN_DIR/upload-${key}"`,
    `  if mkdir "$up" 2>/dev/null; then printf '%s %s\\n' "$$" ${shq(name)} >"$up/by.tmp" && mv "$up/by.tmp" "$up/by"`,
    `  else`,
    // (the first writes its line right after its mkdir; 30 s without it: push alone)
    `    i=0; until [ -s "$up/by" ] || [ "$i" -ge 300 ]; do i=$((i + 1)); sleep 0.1; done`,
    `    if read -r pid first <"$up/by" 2>/dev/null; then`,
    `      while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done`,
    `      if [ ! -s "$DEPLOY_RUN_DIR/${pushedDigestFile('$first')}" ]; then ${failed(name, 'not pushed: node $first, which pushes the same archive and tag in this run and started first, failed (its error says why)')}; exit 1; fi`,
    `    fi`,
    `  fi`,
    `fi`,
  ];
}

/** The build step's shell: its exit code comes out on fd 3 past the pipe that prefixes its lines. */
function buildLines(name: string, build: ImageBuild): string[] {
  const argv = shellWords(build.argv);
  // the command as the messages show it: its quoted words, inside a double-quoted printf argument
  const shown = inDoubleQuotes(argv);
  return [
    sayStepLine('push', 'said', shq(name), `"building its image: ${shown} (in ${inDoubleQuotes(build.dir)})"`),
    `rc=$( { { (cd ${shq(build.dir)} && unset ${TF_HTTP_VARIABLES.join(' ')} && { [ -z "\${${TOFU_GOGC_SET_ENV}:-}" ] || unset GOGC ${TOFU_GOGC_SET_ENV}; } && exec ${argv}) </dev/null 2>&1 3>&-; echo "$?" >&3; } | ${stepLinesOf('push', 'build', shq(name))}; } 3>&1 )`,
    `if [ "$rc" != 0 ]; then ${failed(name, `the image build failed (exit $rc): ${shown}; nothing was pushed for this node; fix the command (image.build in the group plan) or what it builds`)}; exit 1; fi`,
    `if [ ! -r "$archive" ]; then ${failed(name, `the image build (${shown}) ended without writing image archive $archive; make it write there, or fix image.archive in the group plan`)}; exit 1; fi`,
  ];
}

/**
 * The shell that prints the push's typed line of failure (src/contract/step-lines.ts), which
 * deploy shows as `deploy: node <node>: <text>`; `text` is the inside of a double-quoted sh
 * word (it may name `$archive`, `$rc`, `$first`).
 */
function failed(name: string, text: string): string {
  return sayStepLine('push', 'failed', shq(name), `"${text}"`);
}

/** Text that a double-quoted sh word reproduces as it is. */
const inDoubleQuotes = (s: string): string => s.replace(/[\\"$`]/g, (c) => `\\${c}`);

/** The file in DEPLOY_RUN_DIR where the push of node `node` leaves the digest it pushed. */
function pushedDigestFile(node: string): string {
  return `${node}.pushed-digest`;
}

/**
 * Prints `{"digest":"sha256:..."}` for the node named by its second argument ($2) and the tag
 * given as its first ($1): the protocol of tofu's `external` data source (a JSON object of
 * strings on stdout). After a push of this run (the read is deferred to the apply then), the
 * digest that push wrote, without asking the registry again; otherwise (a plan) the digest
 * the tag points at now, which the plan compares with the recorded one (a moved tag) and
 * which fails with "manifest unknown" when the tag is gone (src/workflow/target/missing-tags.ts).
 */
export function digestScript(registryTls: RegistryTls): string {
  const tls = tlsOption(registryTls, 'plain');
  const pushed = `"$DEPLOY_RUN_DIR/${pushedDigestFile('$2')}"`;
  return [
    `if [ -n "\${DEPLOY_RUN_DIR:-}" ] && [ -r ${pushed} ]; then`,
    `  IFS= read -r d <${pushed} || :`,
    `  case "$d" in sha256:*) printf '{"digest":"%s"}\\n' "$d"; exit 0 ;; esac`,
    'fi',
    `exec "\${DEPLOY_SKOPEO:-skopeo}" inspect${tls} --format '{"digest":"{{.Digest}}"}' "docker://$1"`,
  ].join('\n');
}

/** $0 of the digest read, as ps and error messages show it. */
export const DIGEST_PROGRAM_NAME = 'deploy-digest';
