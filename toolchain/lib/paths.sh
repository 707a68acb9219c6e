# shellcheck shell=bash
# The per-user directories, resolved and exported when sourced (src/paths.ts is the same
# formula for TypeScript; keep the two in step):
#   DEPLOY_CACHE_DIR  built programs, keyed by name and version (tofu, providers, cluster
#                     programs, images); default ${XDG_CACHE_HOME:-$HOME/.cache}/k8s-deployer
#   DEPLOY_STATE_DIR  per-user state (graphs, the embedded state backend, the local cluster,
#                     the registry, the test spire node); default
#                     ${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer
# An empty variable counts as unset, as in src/paths.ts.
DEPLOY_CACHE_DIR="${DEPLOY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s-deployer}"
DEPLOY_STATE_DIR="${DEPLOY_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}"
export DEPLOY_CACHE_DIR DEPLOY_STATE_DIR
