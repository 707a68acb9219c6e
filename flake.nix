# Nix entry points of the k8s deployer (see README "Nix"; none is built on the project's own
# machines, which cannot fetch nixpkgs: CI only parses these files).
#
#   nix build .#deploy                         the CLI with tofu + providers, skopeo, kubectl
#   nixosModules.k8sNode                       a NixOS node that runs as a pod
#   lib.nodeImage { configuration; name; }     its one-layer docker archive
#   lib.groupPlan { group; nodes; ... }        a group plan whose nodes the deployer builds
#                                              (image.build = nix build of nodeImage)
#   nix build .#checks.x86_64-linux.k8s-vm-test   the VM test (k3s + registry, US1/US2)
{
  description = "deploy: run NixOS machines (systemd as PID 1) as Kubernetes Deployments";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      system = "x86_64-linux";
      pkgs = nixpkgs.legacyPackages.${system};
    in
    {
      packages.${system} = rec {
        deploy = pkgs.callPackage ./nix/package.nix { };
        default = deploy;
      };

      nixosModules.k8sNode = import ./nix/node-module.nix;

      lib.nodeImage = { configuration, name ? "node" }:
        import ./nix/image.nix { inherit pkgs configuration name system; };

      lib.groupPlan = args: import ./nix/group-plan.nix ({ inherit pkgs system; } // args);

      checks.${system}.k8s-vm-test = import ./nix/tests/k8s-vm-test.nix {
        inherit pkgs;
        deploy = self.packages.${system}.deploy;
      };
    };
}
