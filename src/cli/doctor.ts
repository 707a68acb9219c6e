import type { Command } from 'commander';
import { ExitCode } from '../errors.js';
import type { Inventory } from '../tools/inventory.js';
import type { CliContext } from './context.js';

const HELP = `
Checks the programs deploy runs: tofu (OpenTofu), the providers tofu needs (from the offline
mirror that \`npm run tools\` builds, or downloaded by an online \`tofu init\`), skopeo and
kubectl. Each is looked for in DEPLOY_TOFU / DEPLOY_SKOPEO / DEPLOY_KUBECTL, then the cache
  \${DEPLOY_CACHE_DIR:-\${XDG_CACHE_HOME:-$HOME/.cache}/k8s-deployer}
then PATH. With K8S_REGISTRY_CA_FILE set, the registry's CA file is checked as a run checks it.
Exit code 0 when everything is there, 3 when something is missing.`;

/** `deploy doctor [--json]`. */
export function registerDoctor(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description('Show the versions of tofu, its providers, skopeo and kubectl, and what is missing.')
    .option('--json', 'print JSON')
    .addHelpText('after', HELP)
    .action(async (opts: { json?: boolean }) => {
      const { collectInventory } = await import('../tools/inventory.js');
      const inv = await collectInventory(ctx.env, ctx.signal);
      ctx.stdout.write(opts.json ? `${JSON.stringify(inv, null, 2)}\n` : formatInventory(inv));
      if (!inv.ok) ctx.exitCode = ExitCode.tool;
    });
}

/** The human report of `deploy doctor`: one line per program and provider, then what to do. */
export function formatInventory(inv: Inventory): string {
  const lines: string[] = [];
  const pad = (s: string, n: number) => s.padEnd(n);
  lines.push(`cache: ${inv.cacheDir}`);
  for (const t of inv.tools) {
    const version = t.status === 'ok' ? (t.version ?? '?') : t.status;
    const where = t.path ? `${t.path} (${t.source})` : '';
    lines.push(`${pad(t.name, 10)} ${pad(version, 22)} ${where}`.trimEnd());
    if (t.problem && t.status === 'ok') lines.push(`${pad('', 10)} note: ${t.problem}`);
  }
  const cfg = inv.providerConfig;
  const how =
    cfg.kind === 'cache'
      ? `offline mirror, TF_CLI_CONFIG_FILE=${cfg.cliConfigFile}`
      : cfg.kind === 'env'
        ? `TF_CLI_CONFIG_FILE=${cfg.cliConfigFile} (from the environment)`
        : 'no mirror: an online `tofu init` downloads them';
  lines.push(`providers  (${how})`);
  for (const p of inv.providers) {
    const state = p.status === 'ok' ? 'ok' : p.status;
    lines.push(`  ${pad(p.name, 12)} ${pad(p.version, 8)} ${state}`);
  }
  const ca = inv.registryCa;
  if (ca) lines.push(`${pad('registry CA', 10)} ${pad(ca.status === 'ok' ? `${ca.certificates} certificate${ca.certificates === 1 ? '' : 's'}` : 'broken', 22)} ${ca.file} (K8S_REGISTRY_CA_FILE)`);
  if (inv.ok) {
    lines.push('everything is there');
  } else {
    lines.push('', 'missing:');
    for (const t of inv.tools.filter((x) => x.status !== 'ok')) lines.push(`  - ${t.problem ?? t.name}: ${t.hint ?? ''}`);
    for (const p of inv.providers.filter((x) => x.status === 'missing')) lines.push(`  - provider ${p.name} ${p.version}: ${p.hint ?? ''}`);
    if (ca?.status === 'broken') lines.push(`  - ${ca.problem}`);
  }
  return `${lines.join('\n')}\n`;
}
