# NixOS module: a node that runs as the single pod of a Kubernetes Deployment (the k8s
# method of `deploy`), with systemd as PID 1 in a container.
#
#   imports = [ ./nix/node-module.nix ];
#   deploy.k8sNode.enable = true;
#
# What it does, from nix/node-settings.nix (the same settings the Debian test images follow,
# checked by test/integration/cd-nix.test.ts):
#   - boot as a container: no kernel, no initrd, no boot loader; /sbin/init is the system's
#     init (image.nix links it);
#   - FR-011: nothing manages eth0 (no DHCP client, networkd, NetworkManager or resolved
#     rewriting it), and the firewall trusts eth0: NetworkPolicy filters the pod network;
#   - FR-013: /etc/machine-id is an empty file, so systemd uses the runtime's container_uuid;
#   - FR-014: sshd host keys on the state claim under /var/lib/ssh (sshd makes missing ones);
#   - masked units that must not run in a pod;
#   - `deploy-node-ready`: the readiness check of the Deployment's probe (prints the systemd
#     state and the failed units, exits 0 only when systemd is `running`).
# Not built on the project's machines (no nixpkgs there); only parsed. See docs/cd-and-nix.md.
{ config, lib, pkgs, ... }:

let
  settings = import ./node-settings.nix;
  cfg = config.deploy.k8sNode;

  readyScript = pkgs.writeShellScriptBin "deploy-node-ready" ''
    export PATH=${lib.makeBinPath [ config.systemd.package pkgs.coreutils ]}:$PATH
    ${settings.readinessScript}
  '';
  startedScript = pkgs.writeShellScriptBin "deploy-node-started" ''
    export PATH=${lib.makeBinPath [ config.systemd.package pkgs.coreutils ]}:$PATH
    ${settings.startupScript}
  '';
in
{
  options.deploy.k8sNode = {
    enable = lib.mkEnableOption "running this NixOS system as the single pod of a Kubernetes Deployment (systemd as PID 1)";

    podInterface = lib.mkOption {
      type = lib.types.str;
      default = settings.podInterface;
      description = "The pod's network interface, configured by the CNI plugin; nothing on the node may manage it.";
    };

    sshHostKeys = lib.mkOption {
      type = lib.types.listOf (lib.types.attrsOf lib.types.str);
      default = settings.sshHostKeys;
      description = "sshd host keys, on the node's state claim (/var/lib) so they survive pod replacement (FR-014).";
    };

    extraMaskedUnits = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      description = "Further units that must not run in the pod.";
    };
  };

  config = lib.mkIf cfg.enable {
    boot.isContainer = true;
    boot.loader.grub.enable = false;

    # FR-011: the CNI's address and routes on eth0 stay as they are.
    networking.useDHCP = false;
    networking.dhcpcd.enable = false;
    networking.useNetworkd = false;
    networking.networkmanager.enable = false;
    systemd.network.enable = false;
    networking.useHostResolvConf = false;
    services.resolved.enable = false;
    networking.firewall.trustedInterfaces = [ cfg.podInterface ];

    # FR-013: empty, and a real file (mode makes it a copy, not a store link), so systemd
    # can mount the runtime's container_uuid over it.
    environment.etc."machine-id" = {
      text = settings.machineIdContents;
      mode = "0644";
    };

    # FR-014
    services.openssh.enable = lib.mkDefault true;
    services.openssh.hostKeys = map
      (k: { inherit (k) type path; } // lib.optionalAttrs (k.type == "rsa") { bits = 4096; })
      cfg.sshHostKeys;
    systemd.tmpfiles.rules = [ "d /var/lib/ssh 0755 root root -" ];

    # Masked: not generated at all (upstream units), or disabled where NixOS defines them.
    systemd.suppressedSystemUnits = settings.maskedUnits ++ cfg.extraMaskedUnits;
    systemd.services."getty@tty1".enable = false;
    systemd.services."console-getty".enable = false;
    services.fstrim.enable = false;

    # The runtime gives /run, /run/lock, /tmp (memory) and /var/lib (the claim).
    boot.tmp.useTmpfs = false;
    boot.tmp.cleanOnBoot = false;

    environment.systemPackages = [ readyScript startedScript ];
  };
}
