# What a node must be to run as the single pod of a Kubernetes Deployment (the k8s method),
# as plain data: no nixpkgs needed, so it evaluates anywhere
#   nix-instantiate --eval --strict --json nix/node-settings.nix
# node-module.nix turns it into NixOS options and image.nix into the image config; the test
# test/integration/cd-nix.test.ts compares it with what the Debian test images
# (test/cluster/images/rootfs.sh, lib/docker-archive.sh) do and with the probes of
# src/contract/probes.ts, so the two kinds of node image cannot drift apart unnoticed.
{
  # Units that must not run in a node pod (masked). On NixOS: left out of the generated
  # systemd configuration (systemd.suppressedSystemUnits) and disabled where NixOS defines them.
  maskedUnits = [
    # FR-011: the pod's CNI address and routes on eth0 must stay; nothing may manage links.
    "systemd-networkd.service"
    "systemd-networkd.socket"
    "systemd-networkd-wait-online.service"
    # Scrubbing/trimming file systems the pod does not own.
    "fstrim.timer"
    # The root file system and the tmpfs mounts are the runtime's, not systemd's.
    "systemd-remount-fs.service"
    # No consoles in a pod.
    "console-getty.service"
    "getty@tty1.service"
  ];

  # Units the Debian images mask that NixOS does not have at all (apt, e2fsprogs' scrub).
  debianOnlyMaskedUnits = [
    "apt-daily.timer"
    "apt-daily-upgrade.timer"
    "apt-daily.service"
    "apt-daily-upgrade.service"
    "e2scrub_all.timer"
    "e2scrub_all.service"
    "e2scrub_reap.service"
  ];

  # FR-011: the pod's network belongs to the CNI. No DHCP client, no networkd, no
  # NetworkManager on it, and the host firewall does not filter it (NetworkPolicy does).
  podInterface = "eth0";

  # FR-014: sshd host keys on the node's state claim (mounted on /var/lib), made on the
  # first boot when missing and kept across pod replacement; none in the image.
  sshHostKeys = [
    { type = "ed25519"; path = "/var/lib/ssh/ssh_host_ed25519_key"; }
    { type = "ecdsa"; path = "/var/lib/ssh/ssh_host_ecdsa_key"; }
    { type = "rsa"; path = "/var/lib/ssh/ssh_host_rsa_key"; }
  ];

  # FR-013: /etc/machine-id exists and is empty in the image, so systemd takes the machine ID
  # from the runtime's `container_uuid` (the random UUID kept in the deployer's state).
  machineIdContents = "";

  # The pod mounts these; systemd must not mount or clean them itself.
  runtimeMounts = [ "/run" "/run/lock" "/tmp" "/var/lib" ];

  # The image (image.nix; the Debian images' docker-archive.sh writes the same).
  image = {
    cmd = [ "/sbin/init" ];
    # systemd's clean shutdown (what `docker stop` / the kubelet send first).
    stopSignal = "SIGRTMIN+3";
    env = [ "container=docker" ];
  };

  # The readiness helper the module installs as `deploy-node-ready`: the Deployment's readiness
  # probe (src/contract/probes.ts READINESS_SCRIPT): ready only when systemd is `running`;
  # otherwise print the state and the failed units, which the kubelet puts in its event.
  readinessScript = ''state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ''${state:-unknown}"; [ "$state" = running ] && exit 0; systemctl --failed --no-legend --plain 2>/dev/null; exit 1'';
  # and the startup probe (STARTUP_SCRIPT): the boot is over, whatever the verdict.
  startupScript = ''state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ''${state:-unknown}"; case "$state" in running|degraded|maintenance) exit 0;; esac; exit 1'';
}
