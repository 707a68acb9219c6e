/**
 * `deploy rbac`: the Namespace, Role, RoleBinding, ClusterRole and ClusterRoleBinding per
 * target that a least-privilege CD identity needs (src/workflow/rbac/rbac.ts), printed for
 * `kubectl apply -f -` by the cluster's admin. Reads the group plan and the coordinates as
 * `deploy plan` does; touches no cluster, no state and no file.
 */
import type { Command } from 'commander';
import { ConfigError, type InputIssue } from '../errors.js';
import type { CliContext } from './context.js';
import { addInputOptions, type InputFlags } from './inputs.js';
import type { RbacSubject } from '../workflow/rbac/rbac.js';

interface RbacFlags extends InputFlags {
  serviceAccount?: string[];
  user?: string[];
  group?: string[];
  output?: string;
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

export function registerRbac(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('rbac')
    .description(
      "print what the cluster's admin applies (`deploy rbac ... | kubectl apply -f -`) so that a CD identity can plan, apply, roll back, read and destroy the chosen targets and nothing else: per target the Namespace (the admin's: set \"namespaceManagedBy\": \"admin\" in the group plan), a Role with the verbs deploy uses in it and a RoleBinding, and a ClusterRole and binding that read that namespace and the RuntimeClass by name and list the CRDs (which tofu's provider reads) (docs/running-on-your-cluster.md)",
    )
    .option('--service-account <namespace/name>', 'bind the role to this ServiceAccount (repeatable)', collect)
    .option('--user <name>', 'bind the role to this user, as the cluster authenticates it (repeatable)', collect)
    .option('--group <name>', 'bind the role to this group (repeatable)', collect)
    .option('--output <format>', 'yaml (default) or json (a v1 List)');
  addInputOptions(cmd).action(async (flags: RbacFlags) => {
    const format = flags.json ? 'json' : (flags.output ?? 'yaml');
    const subjects = subjectsOf(flags, format);
    const { loadTargets } = await import('../config/load-targets.js');
    const { targets } = await loadTargets(flags, ctx);
    const { buildRbac } = await import('../workflow/rbac/rbac.js');
    const objects = buildRbac(targets, subjects);
    if (format === 'json') ctx.stdout.write(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2) + '\n');
    else {
      const { dump } = await import('js-yaml');
      ctx.stdout.write(objects.map((o) => dump(o, { noRefs: true, lineWidth: -1 })).join('---\n'));
    }
    const deploys = targets.filter((t) => t.namespaceManagedBy !== 'admin').map((t) => t.target);
    if (deploys.length > 0) {
      ctx.stderr.write(
        `deploy: warning: the group plan does not say "namespaceManagedBy": "admin", so deploy would create and delete the namespace of ${deploys.join(', ')} itself, which this role does not grant: add it to the plan before running deploy with this identity\n`,
      );
    }
  });
}

/** The identities named by the flags, or every problem with them at once (exit 2). */
function subjectsOf(flags: RbacFlags, format: string): RbacSubject[] {
  const issues: InputIssue[] = [];
  const subjects: RbacSubject[] = [];
  for (const sa of flags.serviceAccount ?? []) {
    const [namespace, name, ...rest] = sa.split('/');
    if (!namespace || !name || rest.length > 0) issues.push({ where: '--service-account', message: `"${sa}" must be <namespace>/<name>` });
    else subjects.push({ kind: 'ServiceAccount', namespace, name });
  }
  for (const name of flags.user ?? []) subjects.push({ kind: 'User', name });
  for (const name of flags.group ?? []) subjects.push({ kind: 'Group', name });
  if (subjects.length === 0 && issues.length === 0) issues.push({ where: '--service-account, --user, --group', message: 'name the identity the role is for (at least one)' });
  if (format !== 'yaml' && format !== 'json') issues.push({ where: '--output', message: `"${format}" must be yaml or json` });
  if (issues.length > 0) throw new ConfigError('deploy rbac cannot print the role', issues, { hint: 'e.g. deploy rbac --plan group.json --service-account ci/deployer | kubectl apply -f -' });
  return subjects;
}
