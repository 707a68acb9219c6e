# shellcheck shell=bash
# The CD workflow's coordinates, from the repository's secrets and variables.
#
#   . .forgejo/workflows/cd-env.sh k8s        (sourced by a workflow step)
#   . .forgejo/workflows/cd-env.sh cleanup    (last step of the job, `if: always()`)
#
# Profile `k8s` reads, from the step's environment (the workflow maps each secret and
# variable to an environment variable of the same name):
#   KUBE_CONFIG              secret: the kubeconfig of the cluster (its text)
#   REGISTRY_AUTH            secret: containers-auth.json of the registry (its text)
#   K8S_REGISTRY             variable: registry host[:port][/path]
#   K8S_NAMESPACE            variable, optional: namespace of the `all` target
#   K8S_REGISTRY_TLS_VERIFY  variable, optional: `false` for a plain-http registry
#   K8S_REGISTRY_CA          variable, optional: the PEM text of the CA that signed the
#                            registry's certificate (a registry with a private CA; a CA is
#                            public, hence a variable), written to registry-ca.pem beside the
#                            secrets and exported as K8S_REGISTRY_CA_FILE (docs/registry-tls.md)
# writes the two secrets to files of mode 0600 in a directory of mode 0700 in the runner's
# temp directory ($RUNNER_TEMP/deploy-secrets; both Forgejo's runner and act set RUNNER_TEMP),
# and exports for this shell and, through the runner's env file ($GITHUB_ENV, which Forgejo's
# runner and act both provide; $FORGEJO_ENV when only that is set), for the later steps:
#   KUBE_CONFIG_PATH, REGISTRY_AUTH_FILE, K8S_REGISTRY, DEPLOY_SECRETS_DIR,
#   and K8S_NAMESPACE / K8S_REGISTRY_TLS_VERIFY / K8S_REGISTRY_CA_FILE when set.
# The secret variables are then unset in this shell, so no later command inherits them.
# Every missing or empty secret or variable is reported on its own line (stderr) naming it;
# the sourcing then returns 2 and changes nothing. Sourcing it again is harmless: the same
# files are rewritten (or, when the secrets were already unset by a first sourcing, reused).
# No secret value is ever printed: xtrace (`set -x`) is off while it runs and restored after.
#
# `cleanup` removes those files (the two secrets and the CA) and their directory (only those), wherever
# DEPLOY_SECRETS_DIR points; the runner also empties RUNNER_TEMP after the job.

_cd_env_say() { printf 'cd-env: %s\n' "$*" >&2; }

# _cd_env_put NAME VALUE: export for this shell and, when the runner gives one, its env file.
_cd_env_put() {
  export "$1=$2"
  local env_file=${GITHUB_ENV:-${FORGEJO_ENV:-}}
  if [ -n "$env_file" ]; then
    printf '%s=%s\n' "$1" "$2" >>"$env_file"
  fi
}

# _cd_env_write FILE VALUE: the value to FILE, mode 0600 from the start (umask), atomically.
_cd_env_write() {
  (
    umask 077
    # The value as given; a newline is added only when it does not end in one.
    case $2 in
      *$'\n') printf '%s' "$2" ;;
      *) printf '%s\n' "$2" ;;
    esac >"$1.tmp.$$" && chmod 0600 "$1.tmp.$$" && mv -f "$1.tmp.$$" "$1"
  )
}

_cd_env_one_line() { # NAME VALUE: values that go into the env file must be one line
  case $2 in
    *$'\n'* | *$'\r'*)
      _cd_env_say "variable $1 has more than one line; it must be a single value"
      return 1
      ;;
  esac
}

_cd_env_k8s() {
  local missing=0 reuse=0 dir base
  dir=${DEPLOY_SECRETS_DIR:-}
  # A second sourcing in a shell where the first one already consumed the secrets.
  if [ -z "${KUBE_CONFIG:-}" ] && [ -z "${REGISTRY_AUTH:-}" ] && [ -n "$dir" ] &&
    [ -s "$dir/kubeconfig" ] && [ -s "$dir/registry-auth.json" ]; then
    reuse=1
  fi
  if [ "$reuse" = 0 ]; then
    if [ -z "${KUBE_CONFIG:-}" ]; then
      _cd_env_say "secret KUBE_CONFIG is missing or empty: add the cluster's kubeconfig as the secret KUBE_CONFIG and map it in the step (env: KUBE_CONFIG: \${{ secrets.KUBE_CONFIG }})"
      missing=1
    fi
    if [ -z "${REGISTRY_AUTH:-}" ]; then
      _cd_env_say "secret REGISTRY_AUTH is missing or empty: add the registry's containers-auth.json as the secret REGISTRY_AUTH and map it in the step (env: REGISTRY_AUTH: \${{ secrets.REGISTRY_AUTH }})"
      missing=1
    fi
  fi
  if [ -z "${K8S_REGISTRY:-}" ]; then
    _cd_env_say "variable K8S_REGISTRY is missing or empty: set the repository variable K8S_REGISTRY (registry host[:port][/path]) and map it in the step (env: K8S_REGISTRY: \${{ vars.K8S_REGISTRY }})"
    missing=1
  else
    _cd_env_one_line K8S_REGISTRY "$K8S_REGISTRY" || missing=1
  fi
  if [ -n "${K8S_NAMESPACE:-}" ]; then
    _cd_env_one_line K8S_NAMESPACE "$K8S_NAMESPACE" || missing=1
  fi
  case ${K8S_REGISTRY_TLS_VERIFY:-} in
    '' | true | false) ;;
    *)
      _cd_env_say "variable K8S_REGISTRY_TLS_VERIFY must be true or false"
      missing=1
      ;;
  esac
  if [ -n "${K8S_REGISTRY_CA:-}" ]; then
    case $K8S_REGISTRY_CA in
      *'-----BEGIN CERTIFICATE-----'*) ;;
      *)
        _cd_env_say "variable K8S_REGISTRY_CA holds no PEM certificate: set it to the text of the CA file (-----BEGIN CERTIFICATE----- ...), or leave it unset for a registry with a public certificate"
        missing=1
        ;;
    esac
    if [ "${K8S_REGISTRY_TLS_VERIFY:-}" = false ]; then
      _cd_env_say "variables K8S_REGISTRY_CA and K8S_REGISTRY_TLS_VERIFY=false contradict each other: a CA is for verifying the registry; unset one of them"
      missing=1
    fi
  fi
  [ "$missing" = 0 ] || return 2

  if [ "$reuse" = 0 ]; then
    if [ -z "$dir" ]; then
      base=${RUNNER_TEMP:-}
      if [ -z "$base" ] || [ ! -d "$base" ]; then
        _cd_env_say "RUNNER_TEMP is not set (not in a workflow run?); using a new directory under ${TMPDIR:-/tmp}"
        base=$(mktemp -d "${TMPDIR:-/tmp}/cd-env.XXXXXX") || return 3
      fi
      dir=$base/deploy-secrets
    fi
    if ! (umask 077 && mkdir -p "$dir" && chmod 0700 "$dir"); then
      _cd_env_say "cannot make the directory $dir"
      return 3
    fi
    if ! _cd_env_write "$dir/kubeconfig" "$KUBE_CONFIG" ||
      ! _cd_env_write "$dir/registry-auth.json" "$REGISTRY_AUTH"; then
      _cd_env_say "cannot write the secret files in $dir"
      return 3
    fi
  fi
  unset KUBE_CONFIG REGISTRY_AUTH
  if [ -n "${K8S_REGISTRY_CA:-}" ]; then
    if ! _cd_env_write "$dir/registry-ca.pem" "$K8S_REGISTRY_CA"; then
      _cd_env_say "cannot write $dir/registry-ca.pem"
      return 3
    fi
  fi

  _cd_env_put DEPLOY_SECRETS_DIR "$dir"
  _cd_env_put KUBE_CONFIG_PATH "$dir/kubeconfig"
  _cd_env_put REGISTRY_AUTH_FILE "$dir/registry-auth.json"
  _cd_env_put K8S_REGISTRY "$K8S_REGISTRY"
  [ -z "${K8S_NAMESPACE:-}" ] || _cd_env_put K8S_NAMESPACE "$K8S_NAMESPACE"
  [ -z "${K8S_REGISTRY_TLS_VERIFY:-}" ] || _cd_env_put K8S_REGISTRY_TLS_VERIFY "$K8S_REGISTRY_TLS_VERIFY"
  [ -z "${K8S_REGISTRY_CA:-}" ] || _cd_env_put K8S_REGISTRY_CA_FILE "$dir/registry-ca.pem"
  _cd_env_say "k8s: KUBE_CONFIG_PATH and REGISTRY_AUTH_FILE written to $dir (mode 0600); K8S_REGISTRY=$K8S_REGISTRY${K8S_NAMESPACE:+, K8S_NAMESPACE=$K8S_NAMESPACE}"
}

_cd_env_cleanup() {
  local dir=${DEPLOY_SECRETS_DIR:-}
  if [ -z "$dir" ]; then
    [ -n "${RUNNER_TEMP:-}" ] && dir=$RUNNER_TEMP/deploy-secrets
  fi
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    _cd_env_say "cleanup: nothing to remove"
    return 0
  fi
  rm -f "$dir/kubeconfig" "$dir/registry-auth.json" "$dir/registry-ca.pem" "$dir"/kubeconfig.tmp.* "$dir"/registry-auth.json.tmp.* "$dir"/registry-ca.pem.tmp.*
  rmdir "$dir" 2>/dev/null || _cd_env_say "cleanup: $dir holds other files; left in place"
  _cd_env_say "cleanup: removed the secret files in $dir"
}

_cd_env_main() {
  case ${1:-} in
    k8s) _cd_env_k8s ;;
    cleanup) _cd_env_cleanup ;;
    *)
      _cd_env_say "usage: . .forgejo/workflows/cd-env.sh k8s | cd-env.sh cleanup (profile '${1:-}' is unknown)"
      return 2
      ;;
  esac
}

# No secret in a trace: xtrace off while this runs, restored after.
case $- in
  *x*)
    set +x
    _cd_env_xtrace=1
    ;;
  *) _cd_env_xtrace=0 ;;
esac
_cd_env_status=0
if (return 0 2>/dev/null); then
  _cd_env_main "$@" || _cd_env_status=$?
else
  _cd_env_say "source this file: . .forgejo/workflows/cd-env.sh k8s|cleanup"
  _cd_env_status=2
fi
[ "$_cd_env_xtrace" = 1 ] && set -x
unset _cd_env_xtrace
# The status of a sourced file is that of its last command: under `bash -e` (the workflow's
# default shell) a failure ends the step. A subshell, not `return`, so that linters following
# the `.` see the caller go on.
(exit "$_cd_env_status")
