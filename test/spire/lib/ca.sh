# shellcheck shell=bash
# CA rotation (for the tests).
# SPIRE 1.13.3's local authority: `x509 prepare` makes the next X.509 CA (its root joins the
# bundle at once), `x509 activate` signs with it from then on. The old root stays in the
# bundle until it expires (no taint/revoke: agents and workloads that hold the old bundle go
# on working until they get the new one).
bundle_fingerprints() {
  local pem=$1
  while [ -n "$pem" ]; do
    openssl x509 -noout -fingerprint -sha256 <<<"$pem" | sed 's/^.*=//'
    pem=$(sed '1,/-----END CERTIFICATE-----/d' <<<"$pem")
  done
}

cmd_rotate_ca() {
  ensure_programs
  daemon_pid spire-server >/dev/null || die 3 "the test spire node is not up: npm run spire:up"
  local before after prepared id old
  before=$(server_cli bundle show -format pem) || die 3 "spire-server bundle show failed"
  old=$(server_cli localauthority x509 show -output json | jq -r '.active.authority_id // empty') || true
  prepared=$(server_cli localauthority x509 prepare -output json) || die 3 "spire-server localauthority x509 prepare failed"
  id=$(jq -r '.prepared_authority.authority_id // empty' <<<"$prepared")
  [ -n "$id" ] || die 3 "x509 prepare named no authority: $prepared"
  server_cli localauthority x509 activate -authorityID "$id" -output json >/dev/null ||
    die 3 "spire-server localauthority x509 activate -authorityID $id failed"
  after=$(server_cli bundle show -format pem) || die 3 "spire-server bundle show failed"
  [ "$before" != "$after" ] || die 3 "the trust bundle did not change after activating $id"
  echo "X.509 authority: ${old:-?} -> $id (active)"
  echo "bundle roots before (sha256):"
  bundle_fingerprints "$before" | sed 's/^/  /'
  echo "bundle roots after (sha256):"
  bundle_fingerprints "$after" | sed 's/^/  /'
}
