/**
 * The e2e harness for `deploy` against the local cluster: a fresh namespace and state
 * directory per suite, node images from test/cluster/images, group plans written to a temp
 * directory, and the real CLI run as a child process (bin/deploy.js, like an operator).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { inject } from 'vitest';
import { LAST_ROLLOUT_ANNOTATION } from '../../src/rollout/last-rollout.js';
import { requireTool } from '../../src/tools/discover.js';
import { buildImage, freePort, registry, repoRoot, type BuiltImage } from '../integration/images-scripts.js';

export const clusterEnv = () => inject('clusterEnv');

export interface NodeSpec {
  image: BuiltImage;
  apps?: string[];
  /** `identity: true` in the plan: the node needs a workload identity (SPIRE). */
  identity?: boolean;
  /** `after` in the plan: the nodes whose rollout this node's Deployment waits for. */
  after?: string[];
}

export interface DeployRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  json?: any;
}

export class DeployHarness {
  readonly namespace: string;
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  private readonly kubectlBin: string;

  private constructor(namespace: string, dir: string, env: NodeJS.ProcessEnv) {
    this.namespace = namespace;
    this.dir = dir;
    this.env = env;
    this.kubectlBin = requireTool('kubectl', env).path;
  }

  static async create(prefix: string): Promise<DeployHarness> {
    const stamp = randomUUID().slice(0, 6);
    const dir = await mkdtemp(join(tmpdir(), `deploy-e2e-${prefix}-`));
    await mkdir(join(dir, 'images'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...clusterEnv(),
      K8S_NAMESPACE: `${prefix}-${stamp}`,
      DEPLOY_STATE_DIR: join(dir, 'state'),
      DEPLOY_ROLLOUT_TIMEOUT: '120s',
      DEPLOY_LOG_LEVEL: 'warn',
      // the embedded state backend, on purpose: CI runs the tests with CI=true, where deploy
      // refuses it unless asked, and the suite's state directory lasts as long as the suite
      DEPLOY_STATE: 'embedded',
    };
    delete env.TF_HTTP_ADDRESS;
    return new DeployHarness(`${prefix}-${stamp}`, dir, env);
  }

  /** Writes a group plan (nodes -> image) and returns its path. */
  async writePlan(name: string, nodes: Record<string, NodeSpec>, extra: Record<string, unknown> = {}, group = 'e2e'): Promise<string> {
    const planNodes: Record<string, unknown> = {};
    for (const [n, spec] of Object.entries(nodes)) {
      const link = join(this.dir, 'images', `${spec.image.tag}.tar`);
      await symlink(spec.image.archive, link).catch((e) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)));
      planNodes[n] = { image: { archive: `images/${spec.image.tag}.tar`, tag: spec.image.tag }, apps: spec.apps ?? [], ...(spec.identity ? { identity: true } : {}), ...(spec.after ? { after: spec.after } : {}) };
    }
    const file = join(this.dir, `${name}.json`);
    await writeFile(file, JSON.stringify({ version: 1, group, nodes: planNodes, ...extra }, null, 2));
    return file;
  }

  /** Runs `bin/deploy <verb> --plan <file> [--json] ...` (JSON parsed unless `json: false`). */
  async deploy(verb: string, plan: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, opts: { json?: boolean; cwd?: string } = {}): Promise<DeployRun> {
    const json = opts.json ?? true;
    const r = await execa(join(repoRoot, 'bin', 'deploy'), [verb, '--plan', plan, ...(json ? ['--json'] : []), ...args], {
      env: { ...this.env, ...env },
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
      reject: false,
      timeout: 900_000,
    });
    let parsed: any;
    try {
      parsed = json ? JSON.parse(r.stdout) : undefined;
    } catch {
      parsed = undefined;
    }
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, json: parsed };
  }

  async kubectl(args: string[], opts: { input?: string; namespace?: string | null } = {}) {
    const ns = opts.namespace === null ? [] : ['-n', opts.namespace ?? this.namespace];
    return execa(this.kubectlBin, ['--kubeconfig', this.env.KUBE_CONFIG_PATH!, ...ns, ...args], { input: opts.input, reject: false, timeout: 180_000, env: this.env });
  }

  async kubectlOk(args: string[], opts: { input?: string; namespace?: string | null } = {}): Promise<string> {
    const r = await this.kubectl(args, opts);
    if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.exitCode}): ${r.stderr}`);
    return r.stdout;
  }

  async getJson(args: string[], opts: { namespace?: string | null } = {}): Promise<any> {
    return JSON.parse(await this.kubectlOk([...args, '-o', 'json'], opts));
  }

  /** The one pod of a node's Deployment that is not being deleted. */
  async podOf(node: string, namespace = this.namespace): Promise<any> {
    const pods = await this.getJson(['get', 'pods', '-l', `app.kubernetes.io/name=${node}`], { namespace });
    const live = pods.items.filter((p: any) => !p.metadata.deletionTimestamp);
    if (live.length !== 1) throw new Error(`expected one pod of ${node} in ${namespace}, found ${live.length}`);
    return live[0];
  }

  async exec(node: string, script: string, namespace = this.namespace): Promise<string> {
    return this.kubectlOk(['exec', `deploy/${node}`, '-c', 'node', '--', 'sh', '-c', script], { namespace });
  }

  /** The digest the registry gives for a tag (skopeo inspect). */
  async registryDigest(ref: string, env: NodeJS.ProcessEnv = {}): Promise<string | undefined> {
    const skopeo = requireTool('skopeo', this.env).path;
    const r = await execa(skopeo, ['inspect', '--tls-verify=false', '--format', '{{.Digest}}', `docker://${ref}`], { reject: false, env: { ...this.env, ...env }, timeout: 60_000 });
    return r.exitCode === 0 ? r.stdout.trim() : undefined;
  }

  /**
   * Whether a volume is gone within a minute: the host-path provisioner deletes a released
   * volume a moment after its claim, not within destroy's run.
   */
  async volumeGone(volume: string): Promise<boolean> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if ((await this.kubectl(['get', 'pv', volume], { namespace: null })).exitCode !== 0) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  async cleanup(): Promise<void> {
    await this.kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=false', this.namespace], { namespace: null });
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * A registry of the test's own (test/cluster/registry.sh) on a free loopback port, its data
 * under the harness's state directory: the deployer reaches it, the cluster's containerd does
 * not pull from it, and stopping it leaves the shared registry alone.
 */
export async function ownRegistry(h: DeployHarness, name: string): Promise<{ port: number; stop: () => Promise<void>; remove: () => Promise<void> }> {
  const port = await freePort();
  const run = async (args: string[]) => {
    const r = await registry(args, { env: h.env });
    if (r.exitCode !== 0) throw new Error(`registry.sh ${args.join(' ')} failed (${r.exitCode}): ${r.stderr}`);
  };
  await run(['up', '--name', name, '--port', String(port)]);
  return { port, stop: () => run(['down', '--name', name]), remove: () => run(['down', '--name', name, '--purge']) };
}

export const images = {
  good: () => buildImage('good'),
  broken: () => buildImage('broken'),
  /** systemd stays `starting` for ever (hang.service never returns) */
  hang: () => buildImage('hang'),
  /** boots to `running`, then late-fail.service fails 20 s after its start: systemd ends `degraded` (the soak's test) */
  lateFail: () => buildImage('late-fail'),
  /** slow-stop.service takes 15 s to stop; /var/lib/stop-log records the stop and shutdown.target */
  slowStop: () => buildImage('slow-stop'),
  goodWith: (config: string) => buildImage('good', [config]),
};

/** Every file under `dir` (for searching what a run left behind). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Adds the command line of every process now running to `seen` (argv leak checks). */
export async function sampleArgv(seen: Set<string>): Promise<void> {
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd) seen.add(cmd.replaceAll('\0', ' '));
  }
}

/**
 * What the graph's apply made of a Deployment, to compare after an apply: its spec, labels and
 * annotations but the controller's revision and the rollout step's last-rollout annotation.
 */
export function deploymentShape(d: any) {
  const { [LAST_ROLLOUT_ANNOTATION]: _l, 'deployment.kubernetes.io/revision': _r, ...annotations } = d.metadata.annotations ?? {};
  return { spec: d.spec, labels: d.metadata.labels, annotations };
}
