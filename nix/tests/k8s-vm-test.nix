# The specification's VM test of the k8s method (US1, US2): k3s and a registry in one VM, the
# state backend and the deployer in a NixOS container on it; node images built from NixOS
# configurations with nix/image.nix.
#
#   nix-build nix/tests/k8s-vm-test.nix            (or: nix build .#checks.x86_64-linux.k8s-vm-test)
#
# US1: one node of a group deploys; its pod becomes ready; the Deployment names the image by
#      its digest; the pod keeps its address on eth0; a pod of the target's namespace can
#      connect to the node and a pod of another namespace cannot; /var/lib is on the node's
#      volume; the machine ID is the pod's container_uuid; a second plan shows no changes.
# US2: after the good deploy, a configuration with a unit that always fails: apply fails with
#      exit code 4 and tells of the rollback; the Deployment runs the previous image again;
#      the new pod has the file written in /var/lib before, and the same machine ID.
# Not run on the project's machines (no nixpkgs, no KVM there); only parsed. See docs/cd-and-nix.md.
{ pkgs ? import <nixpkgs> { }
, deploy ? pkgs.callPackage ../package.nix { }
  # its embedded containerd must be 2.1 or later, which has `cgroup_writable` (below; k3s
  # v1.34.9+k3s1 embeds 2.2.5): the test checks that version before anything else
, k3s ? pkgs.k3s
}:

let
  lib = pkgs.lib;
  registry = "cluster:5000";
  namespace = "fediversity";

  # The node: a NixOS system that runs as a pod (node-module.nix via image.nix).
  goodNode = { ... }: {
    networking.hostName = "web";
    environment.etc."node-config".text = "good";
    system.stateVersion = "25.05";
  };
  brokenNode = { pkgs, ... }: {
    imports = [ goodNode ];
    environment.etc."node-config".text = lib.mkForce "broken";
    systemd.services.broken = {
      description = "A unit that always fails (systemd ends degraded)";
      wantedBy = [ "multi-user.target" ];
      serviceConfig = {
        Type = "oneshot";
        ExecStart = "${pkgs.coreutils}/bin/false";
      };
    };
  };
  goodImage = import ../image.nix { inherit pkgs; configuration = goodNode; name = "web"; };
  brokenImage = import ../image.nix { inherit pkgs; configuration = brokenNode; name = "web"; };

  groupPlan = variant: image: pkgs.writeText "group-${variant}.json" (builtins.toJSON {
    version = 1;
    group = "demo";
    nodes.web = {
      image = { archive = "${image}"; tag = image.tag; };
      apps = [ ];
      persistentPaths = [ "/var/lib/web" ];
    };
    roster.spiffeProvider = null;
  });
  goodPlan = groupPlan "good" goodImage;
  brokenPlan = groupPlan "broken" brokenImage;

  # The method's RuntimeClass; its handler `systemd` is the containerd runtime configured in
  # services.k3s.containerdConfigTemplate below (docs/running-on-your-cluster.md).
  runtimeClass = pkgs.writeText "runtimeclass.json" (builtins.toJSON {
    apiVersion = "node.k8s.io/v1";
    kind = "RuntimeClass";
    metadata.name = "systemd";
    handler = "systemd";
  });

  # Pods for the NetworkPolicy check: busybox from the store, imported into k3s offline.
  probeImage = pkgs.dockerTools.buildImage {
    name = "probe";
    tag = "latest";
    copyToRoot = [ pkgs.busybox ];
    config.Cmd = [ "/bin/sleep" "3600" ];
  };
  probePod = ns: pkgs.writeText "probe-${ns}.json" (builtins.toJSON {
    apiVersion = "v1";
    kind = "Pod";
    metadata = { name = "probe"; namespace = ns; };
    spec.containers = [{ name = "probe"; image = "docker.io/library/probe:latest"; imagePullPolicy = "Never"; }];
  });
in
pkgs.testers.runNixOSTest {
  name = "k8s-deployer";

  nodes.cluster = { config, pkgs, ... }: {
    virtualisation = {
      memorySize = 4096;
      diskSize = 8192;
      cores = 2;
    };
    networking.firewall.enable = false;

    services.dockerRegistry = {
      enable = true;
      listenAddress = "0.0.0.0";
      port = 5000;
    };

    services.k3s = {
      enable = true;
      package = k3s;
      role = "server";
      extraFlags = [ "--disable=traefik" "--disable=metrics-server" "--write-kubeconfig-mode=0644" ];
      images = [ probeImage ];
      # The handler of the RuntimeClass `systemd`: plain runc, but with /sys/fs/cgroup mounted
      # read-write. A pod has its own cgroup namespace on cgroup v2 (the VM's), and runc then
      # gives the cgroup to the container's root (its user namespace's, hostUsers: false), so
      # systemd can manage its units; without it runc mounts the tree read-only and systemd
      # stops at once. containerd 2.x reads config version 3 (k3s's base template is one):
      # the CRI runtimes live under io.containerd.cri.v1.runtime, not the version 2
      # io.containerd.grpc.v1.cri, whose table containerd 2.x would not read here.
      containerdConfigTemplate = ''
        {{ template "base" . }}

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.systemd]
          runtime_type = 'io.containerd.runc.v2'
          cgroup_writable = true
      '';
    };
    environment.etc."rancher/k3s/registries.yaml".text = ''
      mirrors:
        "${registry}":
          endpoint:
            - "http://${registry}"
    '';
    networking.extraHosts = "127.0.0.1 cluster";

    # The deployer and its state backend, in a container that shares the VM's network, so
    # the kubeconfig's server (https://127.0.0.1:6443) is k3s's; but it has its own
    # /etc/hosts, so the registry's name is added there too
    # (skopeo pushes to ${registry} from here). Started by the test once k3s wrote the
    # kubeconfig: a bind mount of a file that does not exist yet fails the container's start.
    containers.deployer = {
      autoStart = false;
      privateNetwork = false;
      bindMounts."/run/kubeconfig" = { hostPath = "/etc/rancher/k3s/k3s.yaml"; isReadOnly = true; };
      config = { ... }: {
        system.stateVersion = "25.05";
        networking.extraHosts = "127.0.0.1 cluster";
        environment.systemPackages = [ deploy ];
        systemd.services.deploy-state = {
          wantedBy = [ "multi-user.target" ];
          serviceConfig = {
            ExecStart = "${deploy}/bin/deploy state serve --listen 127.0.0.1:8080 --data /var/lib/deploy-state";
            StateDirectory = "deploy-state";
          };
        };
      };
    };
    environment.systemPackages = [ pkgs.jq ];
  };

  testScript = ''
    import json
    import re

    def deploy(verb, plan):
        return cluster.execute(
            "nixos-container run deployer -- env"
            " KUBE_CONFIG_PATH=/run/kubeconfig"
            " K8S_REGISTRY=${registry} K8S_REGISTRY_TLS_VERIFY=false K8S_NAMESPACE=${namespace}"
            " TF_HTTP_ADDRESS=http://127.0.0.1:8080"
            " DEPLOY_ROLLOUT_TIMEOUT=180s"
            f" deploy {verb} --plan {plan} --json 2>&1"
        )

    def kubectl(args):
        return cluster.succeed(f"k3s kubectl {args}").strip()

    def web_pod():
        return kubectl("-n ${namespace} get pods -l app.kubernetes.io/name=web"
                       " --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}'")

    def in_pod(cmd):
        return kubectl(f"-n ${namespace} exec {web_pod()} -c node -- {cmd}")

    start_all()
    cluster.wait_for_unit("k3s.service")
    cluster.wait_for_unit("docker-registry.service")
    cluster.wait_until_succeeds("k3s kubectl get node cluster | grep -w Ready", timeout=300)

    with subtest("the cluster: containerd 2.1+ on cgroup v2, the systemd handler, the RuntimeClass"):
        assert cluster.succeed("stat -fc %T /sys/fs/cgroup").strip() == "cgroup2fs", "the VM must run cgroup v2"
        version = cluster.succeed("k3s ctr version")
        m = re.search(r"Server:\s*Version:\s*v(\d+)\.(\d+)", version)
        assert m and (int(m[1]), int(m[2])) >= (2, 1), f"k3s's containerd must be 2.1 or later (cgroup_writable); pass a newer k3s: {version}"
        cluster.succeed("grep -A3 \"runtimes.systemd\\]\" /var/lib/rancher/k3s/agent/etc/containerd/config.toml | grep -q 'cgroup_writable = true'")
        cluster.succeed("k3s kubectl apply -f ${runtimeClass}")

    cluster.wait_for_file("/etc/rancher/k3s/k3s.yaml")
    cluster.succeed("nixos-container start deployer")
    cluster.wait_until_succeeds("nixos-container run deployer -- systemctl is-active deploy-state", timeout=60)
    cluster.succeed("nixos-container run deployer -- getent hosts cluster")

    with subtest("US1: the node deploys, by digest, ready"):
        rc, out = deploy("apply", "${goodPlan}")
        assert rc == 0, out
        image = kubectl("-n ${namespace} get deployment web -o jsonpath='{.spec.template.spec.containers[0].image}'")
        assert image.startswith("${registry}/${namespace}/web@sha256:"), image
        kubectl("-n ${namespace} wait --for=condition=Available deployment/web --timeout=60s")
        good_image = image

    with subtest("US1: the pod keeps its address on eth0"):
        pod_ip = kubectl(f"-n ${namespace} get pod {web_pod()} -o jsonpath='{{.status.podIP}}'")
        assert pod_ip in in_pod("ip -4 addr show eth0"), pod_ip

    with subtest("US1: only pods of the target's namespace reach the node"):
        kubectl("create namespace other")
        kubectl("apply -f ${probePod namespace}")
        kubectl("apply -f ${probePod "other"}")
        for ns in ["${namespace}", "other"]:
            kubectl(f"-n {ns} wait --for=condition=Ready pod/probe --timeout=120s")
        cluster.succeed(f"k3s kubectl -n ${namespace} exec probe -- nc -z -w 5 {pod_ip} 22")
        cluster.fail(f"k3s kubectl -n other exec probe -- nc -z -w 5 {pod_ip} 22")

    with subtest("US1: /var/lib is the node's volume, the machine ID its container_uuid"):
        assert "/var/lib" in in_pod("findmnt -n -o TARGET /var/lib")
        uuid = kubectl("-n ${namespace} get deployment web -o"
                       " jsonpath='{.spec.template.spec.containers[0].env[?(@.name==\"container_uuid\")].value}'")
        assert in_pod("cat /etc/machine-id") == uuid.replace("-", ""), uuid
        machine_id = in_pod("cat /etc/machine-id")

    with subtest("US1: a second plan shows no changes"):
        rc, out = deploy("plan", "${goodPlan}")
        assert rc == 0, out
        result = json.loads(out[out.index("{"):])
        assert all(not t["changes"] for t in result["targets"]), out

    with subtest("US2: a node that does not boot is rolled back"):
        in_pod("sh -c 'echo kept > /var/lib/kept'")
        rc, out = deploy("apply", "${brokenPlan}")
        assert rc == 4, f"exit {rc}: {out}"
        assert "rolled-back" in out and "broken.service" in out, out
        kubectl("-n ${namespace} rollout status deployment/web --timeout=180s")
        image = kubectl("-n ${namespace} get deployment web -o jsonpath='{.spec.template.spec.containers[0].image}'")
        assert image == good_image, image
        assert in_pod("cat /var/lib/kept") == "kept"
        assert in_pod("cat /etc/machine-id") == machine_id
  '';
}
