/** The environment part of `deploy synth|plan|apply|destroy --help`: every variable a run reads. */
import { COORDINATES, SPIRE_COORDINATES } from '../../config/coordinate-table.js';

export const ENVIRONMENT_HELP = `
Environment (flags override it):
${COORDINATES.map((c) => `  ${c.env.padEnd(24)} ${c.help}`).join('\n')}
  K8S_REGISTRY_TLS_VERIFY  false for a plain-http registry (default: true)
  K8S_REGISTRY_CA_FILE     PEM file of the CA that signed the registry's certificate (a private CA),
                           trusted besides the system's by skopeo and the no-op check's tag reads;
                           the cluster's nodes must trust it for their pulls (docs/registry-tls.md)
  REGISTRY_AUTH_FILE       registry credentials (containers-auth.json), read by skopeo (and by the
                           no-op check's tag reads; a credential helper sends the plan to tofu)
  TF_HTTP_ADDRESS          an OpenTofu http state backend (base address: <address>/<group>-<target>); unset: the embedded one
  DEPLOY_STATE             "embedded": allow the embedded backend where CI, GITHUB_ACTIONS or FORGEJO_ACTIONS
                           is set (plan/apply/destroy refuse it there, exit 2: a runner's home may not last)
  DEPLOY_STATE_DIR         where graphs and embedded state live (default: ~/.local/state/k8s-deployer)
  DEPLOY_RUN_ID            this run's name on its state lock (default: user@host:pid); see deploy state unlock --help
  DEPLOY_LOG_LEVEL         trace|debug|info|warn|error (default: info)
  DEPLOY_TOFU, DEPLOY_SKOPEO  program paths (default: the cache, then PATH); every program
                           is checked before the run starts (exit 3 naming what is missing)
  DEPLOY_PROVIDERS         download: tofu init downloads the providers (default: the cache's mirror)
  DEPLOY_PROVIDER_PATCHES  none: the stock providers of \`npm run tools\` (default all: the patched ones)
  DEPLOY_FAST_PLAN         off: every plan and apply runs tofu's full plan (default: a target unchanged
                           since its last verified plan or apply is answered "no changes" without a refresh)

Workload identity with SPIRE (off unless K8S_SPIRE_NODE is set; see docs/spire.md). The plan's
roster.spiffeProvider must name the spire node exactly when K8S_SPIRE_NODE is set, and a node
with "identity": true needs both (else exit 2, naming the node):
${SPIRE_COORDINATES.map((c) => `  ${c.env.padEnd(24)} ${c.help}`).join('\n')}
  DEPLOY_SSH               the ssh the SPIRE steps use (default: found on PATH; Debian: openssh-client)
  DEPLOY_KUBECTL           the kubectl that makes the spire-server token (default: the cache, then PATH)`;
