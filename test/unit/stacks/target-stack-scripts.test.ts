/**
 * The shell the graph runs inside tofu, exactly as it is written into cdk.tf.json: the push
 * and the digest read of a node's image, the plan-time reads from the spire node, and the
 * hand-off with its destroy step. A change of one character changes every existing graph, and
 * so the next plan of every target (a push's script is no trigger: tofu plans no change for it,
 * seen on the demo on 2026-12-05; a trigger's text would replace), so the text is pinned here; the generators
 * (stacks/image-scripts.ts, stacks/spire-scripts.ts) are what the graph carries.
 */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { renderGraph } from '../../../src/graph/render.js';
import { spireEnv, spirePlan } from '../../support/cli.js';

const PLAN_FILE = '/plans/group.json';
const ENV = {
  K8S_REGISTRY: 'reg.test:5000',
  K8S_REGISTRY_TLS_VERIFY: 'false',
  ...spireEnv({ keyFile: '/keys/id', sshOpts: ['-o', 'Port=2222', '-o', "ServerAliveCountMax=${x}'3"] }),
};

function graphOf(target: string, edit: (plan: Record<string, any>) => void = () => {}): any {
  const coords = loadCoordinates({}, ENV, process.cwd());
  const plan = spirePlan();
  plan.nodes.alpha.image.archive = "images/it's alpha.tar";
  edit(plan);
  const targets = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, [target]);
  return JSON.parse(renderGraph(targets[0]!));
}

const byPath = (section: Record<string, any> | undefined, end: string): any => Object.values(section ?? {}).find((r: any) => r['//'].metadata.path.endsWith(end));

describe('the shell the graph runs (as written into cdk.tf.json)', () => {
  const g = graphOf('web');

  it('pushes the image with skopeo', () => {
    expect(byPath(g.resource.null_resource, '/image-alpha/push').provisioner[0]['local-exec'].command).toMatchInlineSnapshot(`
      "deploy_escape() { tr -d '\\000-\\010\\013-\\037' | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g' -e "s/$(printf '\\t')/\\\\\\\\t/g"; }
      deploy_json() { printf '%s\\n' "$1" | deploy_escape | sed -e '$!s/$/\\\\n/' | tr -d '\\n'; }
      deploy_line() { printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$(deploy_json "$3")" "$(deploy_json "$4")" >&2; }
      deploy_lines() { n=$(deploy_json "$3"); deploy_escape | while IFS= read -r l || [ -n "$l" ]; do printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$n" "$l"; done >&2; }
      archive='/plans/images/it'\\''s alpha.tar'
      if [ -n "$\${DEPLOY_RUN_DIR:-}" ] && [ -s "$DEPLOY_RUN_DIR/alpha.pushed-digest" ]; then exit 0; fi
      if [ -n "$\${DEPLOY_RUN_DIR:-}" ] && [ -d "$DEPLOY_RUN_DIR" ]; then
        up="$DEPLOY_RUN_DIR/upload-4790c8d6a42302f7"
        if mkdir "$up" 2>/dev/null; then printf '%s %s\\n' "$$" 'alpha' >"$up/by.tmp" && mv "$up/by.tmp" "$up/by"
        else
          i=0; until [ -s "$up/by" ] || [ "$i" -ge 300 ]; do i=$((i + 1)); sleep 0.1; done
          if read -r pid first <"$up/by" 2>/dev/null; then
            while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
            if [ ! -s "$DEPLOY_RUN_DIR/$first.pushed-digest" ]; then deploy_line push failed 'alpha' "not pushed: node $first, which pushes the same archive and tag in this run and started first, failed (its error says why)"; exit 1; fi
          fi
        fi
      fi
      if [ ! -r "$archive" ]; then deploy_line push failed 'alpha' "image archive $archive is missing or unreadable; build the node image, or fix image.archive in the group plan"; exit 1; fi
      set --; if [ -n "$\${DEPLOY_RUN_DIR:-}" ]; then set -- --digestfile "$DEPLOY_RUN_DIR/alpha.pushed-digest"; fi
      exec "$\${DEPLOY_SKOPEO:-skopeo}" copy --quiet --retry-times 3 --dest-tls-verify=false "$@" "docker-archive:$archive" 'docker://reg.test:5000/fediversity-web/alpha:a1'"
    `);
  });

  it('builds the image first when the node has image.build (FR-002), and only then', () => {
    const built = graphOf('web', (plan) => (plan.nodes.alpha.image.build = ['nix', 'build', '--file', "it's.nix", '--out-link', "images/it's alpha.tar", '${x}$y`z`"q"']));
    // the push as above, with the build's lines put in before the archive is checked: only those pinned here
    const plain = byPath(g.resource.null_resource, '/image-alpha/push').provisioner[0]['local-exec'].command.split('\n') as string[];
    const withBuild = byPath(built.resource.null_resource, '/image-alpha/push').provisioner[0]['local-exec'].command.split('\n') as string[];
    const at = plain.findIndex((l, i) => l !== withBuild[i]);
    const added = withBuild.length - plain.length;
    expect(at).toBeGreaterThan(0);
    expect(withBuild.slice(at + added)).toEqual(plain.slice(at));
    expect(withBuild.slice(at, at + added).join('\n')).toMatchInlineSnapshot(`
      "deploy_line push said 'alpha' "building its image: 'nix' 'build' '--file' 'it'\\\\''s.nix' '--out-link' 'images/it'\\\\''s alpha.tar' '\\$\${x}\\$y\\\`z\\\`\\"q\\"' (in /plans)"
      rc=$( { { (cd '/plans' && unset TF_HTTP_ADDRESS TF_HTTP_UPDATE_METHOD TF_HTTP_LOCK_ADDRESS TF_HTTP_LOCK_METHOD TF_HTTP_UNLOCK_ADDRESS TF_HTTP_UNLOCK_METHOD TF_HTTP_USERNAME TF_HTTP_PASSWORD TF_HTTP_SKIP_CERT_VERIFICATION TF_HTTP_RETRY_MAX TF_HTTP_RETRY_WAIT_MIN TF_HTTP_RETRY_WAIT_MAX TF_HTTP_CLIENT_CA_CERTIFICATE_PEM TF_HTTP_CLIENT_CERTIFICATE_PEM TF_HTTP_CLIENT_PRIVATE_KEY_PEM && { [ -z "$\${DEPLOY_TOFU_GOGC:-}" ] || unset GOGC DEPLOY_TOFU_GOGC; } && exec 'nix' 'build' '--file' 'it'\\''s.nix' '--out-link' 'images/it'\\''s alpha.tar' '$\${x}$y\`z\`"q"') </dev/null 2>&1 3>&-; echo "$?" >&3; } | deploy_lines push build 'alpha'; } 3>&1 )
      if [ "$rc" != 0 ]; then deploy_line push failed 'alpha' "the image build failed (exit $rc): 'nix' 'build' '--file' 'it'\\\\''s.nix' '--out-link' 'images/it'\\\\''s alpha.tar' '\\$\${x}\\$y\\\`z\\\`\\"q\\"'; nothing was pushed for this node; fix the command (image.build in the group plan) or what it builds"; exit 1; fi
      if [ ! -r "$archive" ]; then deploy_line push failed 'alpha' "the image build ('nix' 'build' '--file' 'it'\\\\''s.nix' '--out-link' 'images/it'\\\\''s alpha.tar' '\\$\${x}\\$y\\\`z\\\`\\"q\\"') ended without writing image archive $archive; make it write there, or fix image.archive in the group plan"; exit 1; fi"
    `);
    // the argv is no trigger: the tag alone says when the push (and so the build) is replaced
    expect(byPath(built.resource.null_resource, '/image-alpha/push').triggers).toEqual(byPath(g.resource.null_resource, '/image-alpha/push').triggers);
    // the node without a build is pushed exactly as before
    expect(byPath(built.resource.null_resource, '/image-beta/push')).toEqual(byPath(g.resource.null_resource, '/image-beta/push'));
  });

  it("reads the digest the push wrote, else the tag's with skopeo", () => {
    expect(byPath(g.data.external, '/image-alpha/digest').program).toMatchInlineSnapshot(`
      [
        "/bin/sh",
        "-c",
        "if [ -n "$\${DEPLOY_RUN_DIR:-}" ] && [ -r "$DEPLOY_RUN_DIR/$2.pushed-digest" ]; then
        IFS= read -r d <"$DEPLOY_RUN_DIR/$2.pushed-digest" || :
        case "$d" in sha256:*) printf '{"digest":"%s"}\\n' "$d"; exit 0 ;; esac
      fi
      exec "$\${DEPLOY_SKOPEO:-skopeo}" inspect --tls-verify=false --format '{"digest":"{{.Digest}}"}' "docker://$1"",
        "deploy-digest",
        "reg.test:5000/fediversity-web/alpha:a1",
        "alpha",
      ]
    `);
  });

  it('runs the rollout step', () => {
    expect(byPath(g.resource.null_resource, '/node-alpha/rollout').provisioner[0]['local-exec'].command).toMatchInlineSnapshot(`""$\${DEPLOY_BIN:-deploy}" rollout --namespace 'fediversity-web' --node 'alpha' --timeout "$\${DEPLOY_ROLLOUT_TIMEOUT:-5m}""`);
  });

  it('reads the machine ID and the bundle from the spire node', () => {
    // both reads start with the same prelude (typed lines, the key, known_hosts, ssh): pinned once
    const [id, bundle] = ['/spire/spire-machine-id', '/spire/spire-bundle'].map((p) => byPath(g.data.external, p).program as string[]);
    expect(id!.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(bundle!.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    const [idLines, bundleLines] = [id![2]!.split('\n'), bundle![2]!.split('\n')];
    const shared = idLines.findIndex((l, i) => l !== bundleLines[i]);
    expect(shared).toBeGreaterThan(10);
    expect(idLines.slice(0, shared).join('\n')).toMatchInlineSnapshot(`
      "set -eu
      deploy_escape() { tr -d '\\000-\\010\\013-\\037' | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g' -e "s/$(printf '\\t')/\\\\\\\\t/g"; }
      deploy_json() { printf '%s\\n' "$1" | deploy_escape | sed -e '$!s/$/\\\\n/' | tr -d '\\n'; }
      deploy_line() { printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$(deploy_json "$3")" "$(deploy_json "$4")" >&2; }
      deploy_lines() { n=$(deploy_json "$3"); deploy_escape | while IFS= read -r l || [ -n "$l" ]; do printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$n" "$l"; done >&2; }
      key="$\${SSH_PRIVATE_KEY_FILE:?is not set: the ssh key for the spire node spire.central.example.org}"
      tmp=$(mktemp -d)
      trap 'rm -rf "$tmp"' EXIT
      kh=$tmp/known_hosts
      printf '%s' 'spire-node ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X
      ' >"$kh"
      spire_ssh() { "$\${DEPLOY_SSH:-ssh}" -i "$key" '-o' 'IdentitiesOnly=yes' '-o' 'BatchMode=yes' '-o' 'StrictHostKeyChecking=yes' '-o' "UserKnownHostsFile=$kh" '-o' 'GlobalKnownHostsFile=/dev/null' '-o' 'HostKeyAlias=spire-node' '-o' 'UpdateHostKeys=no' '-o' 'ConnectTimeout=15' '-o' 'ServerAliveInterval=10' '-o' 'Port=2222' '-o' 'ServerAliveCountMax=$\${x}'\\''3' -l 'deploy' -- 'spire.central.example.org' "$@" 2>"$tmp/ssh.err"; }
      unreachable() { deploy_line spire failed 'spire.central.example.org' "the spire node spire.central.example.org is not reachable over ssh as deploy ($1); check K8S_SPIRE_NODE, the node, the host key in SSH_NODES and SSH_PRIVATE_KEY_FILE"; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; }
      cat >/dev/null
      tries=0
      while :; do"
    `);
    expect([idLines.slice(shared).join('\n'), ...id!.slice(3)]).toMatchInlineSnapshot(`
      [
        "  out=$(spire_ssh cat /etc/machine-id) && break
        rc=$?
        [ "$rc" -ne 255 ] || unreachable 'reading /etc/machine-id'
        tries=$((tries + 1))
        if [ "$tries" -ge 10 ]; then deploy_line spire failed 'spire.central.example.org' "on the spire node spire.central.example.org, cat /etc/machine-id failed (exit $rc) 10 times in about 30 s (reading /etc/machine-id); check the SPIRE server there: spire-server healthcheck"; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; fi
        sleep 3
      done
      printf '%s' "$out" | grep -Eqx '[0-9a-f]{32}' || { deploy_line spire failed 'spire.central.example.org' "the spire node spire.central.example.org has no machine ID in /etc/machine-id"; exit 1; }
      printf '{"machine_id":"%s"}' "$out"",
        "deploy-spire-machine_id",
      ]
    `);
    expect([bundleLines.slice(shared).join('\n'), ...bundle!.slice(3)]).toMatchInlineSnapshot(`
      [
        "  out=$(spire_ssh spire-server bundle show -format pem) && break
        rc=$?
        [ "$rc" -ne 255 ] || unreachable 'reading the trust bundle'
        tries=$((tries + 1))
        if [ "$tries" -ge 10 ]; then deploy_line spire failed 'spire.central.example.org' "on the spire node spire.central.example.org, spire-server bundle show -format pem failed (exit $rc) 10 times in about 30 s (reading the trust bundle); check the SPIRE server there: spire-server healthcheck"; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; fi
        sleep 3
      done
      printf '%s\\n' "$out" | grep -q -- '-----BEGIN CERTIFICATE-----' || { deploy_line spire failed 'spire.central.example.org' "the SPIRE server on spire.central.example.org gave no PEM trust bundle; check it with spire-server healthcheck"; exit 1; }
      out=$(printf '%s\\n' "$out" | base64 -w0)
      printf '{"bundle_b64":"%s"}' "$out"",
        "deploy-spire-bundle_b64",
      ]
    `);
  });

  it('hands off the kubeconfig and the names, and takes them back on destroy', () => {
    const handoff = byPath(g.resource.null_resource, '/spire/handoff');
    // the prelude pinned above (the reads'), up to its ssh and `unreachable`: only what follows is pinned here
    const read = (byPath(g.data.external, '/spire/spire-machine-id').program as string[])[2]!.split('\n');
    const create = (handoff.provisioner[0]['local-exec'].command as string).split('\n');
    const shared = create.findIndex((l, i) => l !== read[i]);
    expect(create[shared - 1]).toMatch(/^unreachable\(\) \{/);
    expect(create.slice(shared).join('\n')).toMatchInlineSnapshot(`
      "kc() { "$\${DEPLOY_KUBECTL:-kubectl}" --kubeconfig "$\${KUBE_CONFIG_PATH:?is not set: the kubeconfig of the cluster}" "$@"; }
      server=$(kc config view --minify -o jsonpath='{.clusters[0].cluster.server}')
      ca=$(kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
      if [ -z "$ca" ]; then ca=$(base64 -w0 <"$(kc config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')"); fi
      token=$(kc -n 'fediversity-web' create token spire-server --duration 8760h)
      printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: %s\\n  cluster:\\n    server: %s\\n    certificate-authority-data: %s\\nusers:\\n- name: spire-server\\n  user:\\n    token: %s\\ncontexts:\\n- name: %s\\n  context:\\n    cluster: %s\\n    user: spire-server\\ncurrent-context: %s\\n' 'fediversity-web' "$server" "$ca" "$token" 'fediversity-web' 'fediversity-web' 'fediversity-web' | spire_ssh 'sh -c '\\''set -eu
      umask 077
      d='\\''\\'\\'''\\''/var/lib/spire/k8s/fediversity-web'\\''\\'\\'''\\''
      mkdir -p "$d/entries"
      cat >"$d/kubeconfig.new"
      chmod 0600 "$d/kubeconfig.new"
      mv -f "$d/kubeconfig.new" "$d/kubeconfig"
      rm -f "$d"/entries/*.json
      printf '\\''\\'\\'''\\''%s'\\''\\'\\'''\\'' '\\''\\'\\'''\\''ewogICJlbnRyaWVzIjogWwogICAgewogICAgICAic3BpZmZlX2lkIjogInNwaWZmZTovL2ZlZGl2ZXJzaXR5L2s4cy9mZWRpdmVyc2l0eS13ZWIvZmVkaXZlcnNpdHktd2ViL25vZGUtYWxwaGEiLAogICAgICAicGFyZW50X2lkIjogInNwaWZmZTovL2ZlZGl2ZXJzaXR5L3NwaXJlL3NlcnZlciIsCiAgICAgICJzZWxlY3RvcnMiOiBbCiAgICAgICAgewogICAgICAgICAgInR5cGUiOiAiazhzX3BzYXQiLAogICAgICAgICAgInZhbHVlIjogImNsdXN0ZXI6ZmVkaXZlcnNpdHktd2ViLmFscGhhIgogICAgICAgIH0sCiAgICAgICAgewogICAgICAgICAgInR5cGUiOiAiazhzX3BzYXQiLAogICAgICAgICAgInZhbHVlIjogImFnZW50X25zOmZlZGl2ZXJzaXR5LXdlYiIKICAgICAgICB9LAogICAgICAgIHsKICAgICAgICAgICJ0eXBlIjogIms4c19wc2F0IiwKICAgICAgICAgICJ2YWx1ZSI6ICJhZ2VudF9zYTpub2RlLWFscGhhIgogICAgICAgIH0KICAgICAgXQogICAgfSwKICAgIHsKICAgICAgInNwaWZmZV9pZCI6ICJzcGlmZmU6Ly9mZWRpdmVyc2l0eS9ob3N0L2ZlZGl2ZXJzaXR5LXdlYi1hbHBoYSIsCiAgICAgICJwYXJlbnRfaWQiOiAic3BpZmZlOi8vZmVkaXZlcnNpdHkvazhzL2ZlZGl2ZXJzaXR5LXdlYi9mZWRpdmVyc2l0eS13ZWIvbm9kZS1hbHBoYSIsCiAgICAgICJzZWxlY3RvcnMiOiBbCiAgICAgICAgewogICAgICAgICAgInR5cGUiOiAidW5peCIsCiAgICAgICAgICAidmFsdWUiOiAidWlkOjAiCiAgICAgICAgfQogICAgICBdCiAgICB9CiAgXQp9Cg=='\\''\\'\\'''\\'' | base64 -d >"$d/entries/alpha.json"
      printf '\\''\\'\\'''\\''%s'\\''\\'\\'''\\'' '\\''\\'\\'''\\''ewogICJlbnRyaWVzIjogWwogICAgewogICAgICAic3BpZmZlX2lkIjogInNwaWZmZTovL2ZlZGl2ZXJzaXR5L2s4cy9mZWRpdmVyc2l0eS13ZWIvZmVkaXZlcnNpdHktd2ViL25vZGUtYmV0YSIsCiAgICAgICJwYXJlbnRfaWQiOiAic3BpZmZlOi8vZmVkaXZlcnNpdHkvc3BpcmUvc2VydmVyIiwKICAgICAgInNlbGVjdG9ycyI6IFsKICAgICAgICB7CiAgICAgICAgICAidHlwZSI6ICJrOHNfcHNhdCIsCiAgICAgICAgICAidmFsdWUiOiAiY2x1c3RlcjpmZWRpdmVyc2l0eS13ZWIuYmV0YSIKICAgICAgICB9LAogICAgICAgIHsKICAgICAgICAgICJ0eXBlIjogIms4c19wc2F0IiwKICAgICAgICAgICJ2YWx1ZSI6ICJhZ2VudF9uczpmZWRpdmVyc2l0eS13ZWIiCiAgICAgICAgfSwKICAgICAgICB7CiAgICAgICAgICAidHlwZSI6ICJrOHNfcHNhdCIsCiAgICAgICAgICAidmFsdWUiOiAiYWdlbnRfc2E6bm9kZS1iZXRhIgogICAgICAgIH0KICAgICAgXQogICAgfSwKICAgIHsKICAgICAgInNwaWZmZV9pZCI6ICJzcGlmZmU6Ly9mZWRpdmVyc2l0eS9ob3N0L2ZlZGl2ZXJzaXR5LXdlYi1iZXRhIiwKICAgICAgInBhcmVudF9pZCI6ICJzcGlmZmU6Ly9mZWRpdmVyc2l0eS9rOHMvZmVkaXZlcnNpdHktd2ViL2ZlZGl2ZXJzaXR5LXdlYi9ub2RlLWJldGEiLAogICAgICAic2VsZWN0b3JzIjogWwogICAgICAgIHsKICAgICAgICAgICJ0eXBlIjogInVuaXgiLAogICAgICAgICAgInZhbHVlIjogInVpZDowIgogICAgICAgIH0KICAgICAgXQogICAgfQogIF0KfQo='\\''\\'\\'''\\'' | base64 -d >"$d/entries/beta.json"'\\''' || unreachable 'handing off the kubeconfig'"
    `);
    expect(handoff.provisioner[1]['local-exec']).toMatchInlineSnapshot(`
      {
        "command": "set -eu
      deploy_escape() { tr -d '\\000-\\010\\013-\\037' | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g' -e "s/$(printf '\\t')/\\\\\\\\t/g"; }
      deploy_json() { printf '%s\\n' "$1" | deploy_escape | sed -e '$!s/$/\\\\n/' | tr -d '\\n'; }
      deploy_line() { printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$(deploy_json "$3")" "$(deploy_json "$4")" >&2; }
      deploy_lines() { n=$(deploy_json "$3"); deploy_escape | while IFS= read -r l || [ -n "$l" ]; do printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$n" "$l"; done >&2; }
      key="$\${SSH_PRIVATE_KEY_FILE:?is not set: the ssh key for the spire node \${self.triggers.spire_node}}"
      tmp=$(mktemp -d)
      trap 'rm -rf "$tmp"' EXIT
      kh=$tmp/known_hosts
      printf '%s' 'spire-node \${self.triggers.host_key}
      ' >"$kh"
      if [ "$\${DEPLOY_SPIRE_NODE:-}" = "\${self.triggers.spire_node}" ] && [ -n "$\${DEPLOY_SPIRE_HOST_KEY:-}" ]; then printf 'spire-node %s\\n' "$DEPLOY_SPIRE_HOST_KEY" >>"$kh"; fi
      spire_ssh() { "$\${DEPLOY_SSH:-ssh}" -i "$key" '-o' 'IdentitiesOnly=yes' '-o' 'BatchMode=yes' '-o' 'StrictHostKeyChecking=yes' '-o' "UserKnownHostsFile=$kh" '-o' 'GlobalKnownHostsFile=/dev/null' '-o' 'HostKeyAlias=spire-node' '-o' 'UpdateHostKeys=no' '-o' 'ConnectTimeout=15' '-o' 'ServerAliveInterval=10' \${self.triggers.ssh_options} -l "\${self.triggers.ssh_user}" -- "\${self.triggers.spire_node}" "$@" 2>"$tmp/ssh.err"; }
      unreachable() { deploy_line spire failed "\${self.triggers.spire_node}" "the spire node \${self.triggers.spire_node} is not reachable over ssh as \${self.triggers.ssh_user} ($1); check K8S_SPIRE_NODE, the node, the host key in SSH_NODES and SSH_PRIVATE_KEY_FILE"; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; }
      spire_ssh 'rm -rf '\\''/var/lib/spire/k8s/fediversity-web'\\''' || unreachable 'removing the kubeconfig and names of fediversity-web'",
        "when": "destroy",
      }
    `);
    expect(handoff.triggers.ssh_options).toMatchInlineSnapshot(`"'-o' 'Port=2222' '-o' 'ServerAliveCountMax=$\${x}'\\''3'"`);
  });
});
