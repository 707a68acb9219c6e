/**
 * The group plan (JSON, version 1): what to deploy. It never holds per-run coordinates
 * (registry, kubeconfig, credentials): those come from the environment and flags.
 * Unknown keys are refused everywhere, so a typo is an error and not a silent default.
 */
import { z } from 'zod';
import { labelProblem, NODE_NAME_MAX } from './names.js';
import { parseMaxUnavailable } from './max-unavailable.js';
import { ON_FAILURE } from './coordinate-table.js';
import { DURATION_RULES, durationProblem, parseDuration } from './duration.js';

const label = (max?: number) =>
  z.string().superRefine((s, ctx) => {
    const problem = labelProblem(s, max);
    if (problem) ctx.addIssue({ code: 'custom', message: `"${s}" ${problem}` });
  });

/** An OCI tag: https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pulling-manifests */
const tag = z
  .string()
  .regex(/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/, 'must be an image tag: up to 128 of [A-Za-z0-9_.-], not starting with "." or "-"');

const absolutePath = z.string().regex(/^\/\S*$/, 'must be an absolute path');

const cidrOrAddress = z
  .string()
  .regex(/^[0-9a-fA-F:.]+(\/\d{1,3})?$/, 'must be an IP address or a CIDR range');

export const imageSchema = z.strictObject({
  /** Path to the node's docker archive (docker save format, any number of layers, systemd as /sbin/init), relative to the plan file. */
  archive: z.string().min(1, 'must name the docker archive of the node image'),
  /** Tag derived from the node configuration: the push is replaced when, and only when, it changes. */
  tag,
  /**
   * The command (argv, no shell) that writes the archive, run by the graph's push step just
   * before the push, in the plan file's directory, only when the push is replaced (FR-002).
   * Not part of the replacement: the tag says which image it is (docs/group-plan.md, "The image build on the deployer").
   */
  build: z
    .array(z.string({ error: 'must be a string: each element is one word of the command' }).min(1, 'must not be empty: each element is one word of the command'), { error: 'must be an argv array, e.g. ["nix", "build", "--out-link", "images/web.tar"]' })
    .min(1, 'must name the command that writes image.archive, e.g. ["nix", "build", "--out-link", "images/web.tar"]; leave the field out when the archive is built elsewhere')
    .optional(),
});

export const firewallSchema = z.strictObject({
  internalSources: z.array(cidrOrAddress).default([]),
  adminSources: z.array(cidrOrAddress).default([]),
});

export const nodeSchema = z.strictObject({
  image: imageSchema,
  /** The apps this node serves; each app is also a target with namespace `<ns>-<app>`. */
  apps: z.array(label()).default([]),
  /** Paths that must survive a pod replacement. Only /var/lib does on this method. */
  persistentPaths: z.array(absolutePath).default([]),
  /** A node that seals secrets to a TPM (OpenBao) cannot run as a pod. */
  tpm: z.boolean().default(false),
  /**
   * The node needs a workload identity (a SPIFFE ID from the roster's spiffe provider): a run
   * without a provider in the roster, or without the SPIRE coordinates, is refused naming it.
   */
  identity: z.boolean({ error: 'must be true or false' }).default(false),
  /** Host firewall sources; the pod network is not filtered per source on this method. */
  firewall: firewallSchema.optional(),
  /**
   * Nodes of the same group this node comes after: its Deployment changes only once each of
   * them is Ready on its new image in the same run (or unchanged). config/order-rules.ts.
   */
  after: z.array(label(NODE_NAME_MAX)).default([]),
});

export const rosterSchema = z.strictObject({
  /** The node that provides SPIFFE identities to this group, if any, as `group/node`. */
  spiffeProvider: z
    .strictObject({ group: label(), node: label() })
    .nullable()
    .default(null),
});

export const submissionSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'must be 1-128 of [A-Za-z0-9._-]'),
  /** Nodes this submission turns off: they are dropped from every target's graph. */
  turnsOff: z.array(label(NODE_NAME_MAX)).default([]),
});

export const groupPlanSchema = z.strictObject({
  version: z.literal(1, { error: 'must be 1 (the only plan format version this program reads)' }),
  group: label(40),
  nodes: z.record(label(NODE_NAME_MAX), nodeSchema).refine((n) => Object.keys(n).length > 0, 'must have at least one node'),
  roster: rosterSchema.default({ spiffeProvider: null }),
  submission: submissionSchema.optional(),
  /**
   * The default of --max-unavailable (DEPLOY_MAX_UNAVAILABLE overrides it): how many changed
   * nodes of a target may be down at once, as a number or a percentage (config/order-rules.ts).
   */
  maxUnavailable: z
    .union([z.number(), z.string()], { error: 'must be a number of nodes or a percentage such as "20%"' })
    .refine((v) => parseMaxUnavailable(v) !== null, 'must be a whole number of nodes (at least 1) or a percentage of the target\'s nodes (1%-100%), e.g. 10 or "20%"')
    .optional(),
  /**
   * The default of --soak (DEPLOY_SOAK overrides it): how long each changed node must stay
   * `running` once Ready before its rollout counts (rollout/soak.ts), e.g. "40s"; 0: none.
   */
  soak: z
    .union([z.number(), z.string()], { error: 'must be a duration such as "40s" or "5m" (0 for no soak)' })
    .superRefine((v, ctx) => {
      const problem = durationProblem(parseDuration(String(v)), DURATION_RULES.soak);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${problem}, e.g. "40s"` });
    })
    .optional(),
  /** The default of --on-failure (DEPLOY_ON_FAILURE overrides it): `node` or `group`. */
  onFailure: z.enum(ON_FAILURE, { error: 'must be "node" (a failed rollout sets back the failed node alone) or "group" (it also sets back every node this run changed)' }).optional(),
  /**
   * Who makes and removes the namespaces of the group's targets: `deploy` (the default) creates
   * each one with its labels and deletes it on destroy; `admin`: the cluster's admin made them
   * (with the output of `deploy rbac`), so the graph only reads each one and destroy leaves it
   * (a deployer with a least-privilege role may not create namespaces: docs/running-on-your-cluster.md).
   */
  namespaceManagedBy: z.enum(['deploy', 'admin'], { error: 'must be "deploy" (deploy creates and deletes the namespaces) or "admin" (the cluster\'s admin made them; see deploy rbac)' }).optional(),
});

export type GroupPlan = z.infer<typeof groupPlanSchema>;
export type NodePlan = z.infer<typeof nodeSchema>;
