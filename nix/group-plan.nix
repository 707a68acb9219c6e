# The group plan for `deploy` (docs/group-plan.md), written by Nix: each node's image is
# built on the deployer by the graph's push step (`image.build`, FR-002), only when its tag
# changes. Evaluating this builds nothing: the tag comes from the system's store path
# (image.nix), and `image.build` names the `nix build` of exactly the derivation evaluated here.
#
#   nix eval --json --file nix/group-plan.nix --argstr group demo \
#     --arg nodes '{ web = { configuration = ./hosts/web.nix; apps = [ "web" ]; }; }' > group.json
#   deploy apply --plan group.json
#
# Write group.json into a directory of your own (not the store): the build runs in the plan
# file's directory and writes `images/<node>.tar` there (a symbolic link into the store, which
# is also a garbage collector root). The evaluation writes the image's .drv into the store;
# a garbage collection before the apply removes it, and the build then fails naming the node
# and the command: evaluate the plan again.
# Not run on the project's machines (no nixpkgs, no nix build there): evaluated with a stub
# image only (test/integration/cd-nix.test.ts). See docs/cd-and-nix.md.
{ pkgs ? import <nixpkgs> { }
, system ? builtins.currentSystem
  # `{ configuration, name } -> derivation with passthru tag`: image.nix, or a stub in the test
, nodeImage ? { configuration, name }: import ./image.nix { inherit pkgs configuration name system; }
, group
  # name -> { configuration; and any other node field of the plan: apps, persistentPaths, ... }
, nodes
, roster ? { spiffeProvider = null; }
, submission ? null
}:

let
  nodePlan = name: node:
    let
      image = nodeImage { inherit name; inherit (node) configuration; };
      archive = "images/${name}.tar";
    in
    (builtins.removeAttrs node [ "configuration" ]) // {
      image = {
        inherit archive;
        inherit (image) tag;
        # the .drv, not its output: referring to it builds nothing now
        build = [
          "nix"
          "--extra-experimental-features"
          "nix-command"
          "build"
          "${builtins.unsafeDiscardStringContext image.drvPath}^out"
          "--out-link"
          archive
        ];
      };
    };
in
{
  version = 1;
  inherit group roster;
  nodes = builtins.mapAttrs nodePlan nodes;
} // (if submission == null then { } else { inherit submission; })
