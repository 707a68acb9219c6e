# The node image: a NixOS system (with node-module.nix) as a one-layer docker archive that
# `deploy` pushes with skopeo (`image.archive` in the group plan).
#
#   nix-build nix/image.nix --arg configuration ./hosts/web.nix --argstr name web
#   -> result: docker-archive tar; `tag` (passthru) is the group plan's `image.tag`
#
# group-plan.nix writes a plan whose `image.build` is the `nix build` of this derivation, so
# that the deployer builds it only when the tag changes (FR-002).
#
# The image: /sbin/init -> the system's init (systemd as PID 1), Cmd /sbin/init, StopSignal
# SIGRTMIN+3 (systemd's clean shutdown), Env container=docker, one layer holding the closure
# of the system (dockerTools.buildImage), an empty /etc/machine-id (node-module.nix).
# The tag follows the system's store path, so it changes exactly when the image does (FR-002).
# Not built on the project's machines (no nixpkgs there); only parsed. See docs/cd-and-nix.md.
{ pkgs ? import <nixpkgs> { }
, configuration
, name ? "node"
, system ? builtins.currentSystem
}:

let
  settings = import ./node-settings.nix;
  lib = pkgs.lib;

  nixos = import (pkgs.path + "/nixos/lib/eval-config.nix") {
    inherit system;
    modules = [
      ./node-module.nix
      configuration
      { deploy.k8sNode.enable = true; }
    ];
  };
  toplevel = nixos.config.system.build.toplevel;

  # 12 hex-ish characters of the store path's hash: changes when the system does.
  tag = "${name}-${builtins.substring 0 12 (builtins.baseNameOf (builtins.unsafeDiscardStringContext toplevel.outPath))}";
in
pkgs.dockerTools.buildImage {
  inherit name tag;
  # /sbin/init refers to the system, so the layer holds the system's whole closure.
  copyToRoot = pkgs.runCommand "${name}-root" { } ''
    mkdir -p $out/sbin
    ln -s ${toplevel}/init $out/sbin/init
  '';
  extraCommands = ''
    mkdir -p etc var/lib run tmp
    : > etc/machine-id
    chmod 1777 tmp
  '';
  config = {
    Cmd = settings.image.cmd;
    StopSignal = settings.image.stopSignal;
    Env = settings.image.env ++ [ "PATH=/run/current-system/sw/bin:/bin" ];
  };
} // {
  # the group plan's image.tag, and the system
  inherit tag toplevel;
}
