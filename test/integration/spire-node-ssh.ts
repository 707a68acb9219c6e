/**
 * ssh to a test spire node, for tests that look at it (what the hand-off left, the machine ID,
 * the bundle). deploy itself never runs ssh from TypeScript: the graph's shell steps do
 * (stacks/spire-scripts.ts); this uses the same pinned options (src/contract/spire/spire-ssh-options.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { SpireCoordinates } from '../../src/config/spire-coordinates.js';
import { knownHostsLine, sshArgs } from '../../src/contract/spire/spire-ssh-options.js';

/** Runs `remote` (words, joined by ssh with spaces) on the spire node; throws when it fails. */
export async function runOnSpireNode(spire: SpireCoordinates, remote: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'spire-node-ssh-'));
  try {
    const knownHosts = join(dir, 'known_hosts');
    await writeFile(knownHosts, knownHostsLine(spire), { mode: 0o600 });
    const r = await execa('ssh', sshArgs(spire, knownHosts, remote), { reject: false, timeout: 60_000 });
    if (r.exitCode !== 0) throw new Error(`\`${remote.join(' ')}\` on the spire node ${spire.node}: exit ${r.exitCode}\n${r.stderr}`);
    return { stdout: r.stdout, stderr: r.stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
