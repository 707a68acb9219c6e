# The `deploy` CLI as a Nix package (FR-001: OpenTofu with its providers, skopeo and kubectl
# come from the Nix store, not from the user's PATH).
#
#   nix-build -E 'with import <nixpkgs> { }; callPackage ./nix/package.nix { }'
#   result/bin/deploy doctor
#
# buildNpmPackage installs the locked dependencies offline from package-lock.json (with
# --ignore-scripts: the `node` devDependency would fetch a Node binary; the store's nodejs_24
# runs everything instead), runs `npm run build` (tsc -> dist/), prunes the devDependencies
# and installs bin/deploy.js as bin/deploy. The wrapper puts the tools first on PATH and names
# them in DEPLOY_TOFU / DEPLOY_SKOPEO / DEPLOY_KUBECTL (src/tools/discover.ts looks there
# first), so `deploy doctor` reports the store's programs.
#
# npmDepsHash: fill in after the first build (nix prints the hash it got) or with
# prefetch-npm-deps package-lock.json; it changes whenever package-lock.json does.
# The provider versions of nixpkgs must satisfy the graph's constraints (kubernetes 2.38.0,
# null 3.2.4, random 3.7.2, external 2.3.5 pinned by the @cdktf/provider-* bindings);
# pass `tofuProviders` to choose others (newer nixpkgs name them by owner, e.g.
# p.hashicorp_kubernetes, where older ones say p.kubernetes).
# The kubernetes provider gets the same patch as `npm run tools` builds
# (toolchain/tofu/patches/kubernetes-2.38.0/: the per-kind type cache, docs/provider-patch.md)
# when nixpkgs' provider is that version; `providerPatches = false` keeps the stock
# provider (DEPLOY_PROVIDER_PATCHES=none of `npm run tools`). Another version is left stock,
# with a warning: the patch is written against 2.38.0.
# Not built on the project's machines (no nixpkgs there); only parsed. See docs/cd-and-nix.md.
{ lib
, buildNpmPackage
, nodejs_24
, makeWrapper
, opentofu
, skopeo
, kubectl
, gnugrep
, tofuProviders ? (p: [ p.kubernetes p.null p.random p.external ])
, npmDepsHash ? lib.fakeHash
, providerPatches ? true
}:

let
  patchesOf = {
    # in name order, as toolchain/build-tools.sh applies them
    "kubernetes-2.38.0" = lib.filter (f: lib.hasSuffix ".patch" (toString f))
      (lib.filesystem.listFilesRecursive ../toolchain/tofu/patches/kubernetes-2.38.0);
  };
  isKubernetes = p: lib.hasSuffix "kubernetes" (p.provider-source-address or p.pname or "");
  patchProvider = p:
    if !providerPatches || !(isKubernetes p) then p
    else if p.version == "2.38.0" then
      p.overrideAttrs (old: { patches = (old.patches or [ ]) ++ patchesOf."kubernetes-2.38.0"; })
    else lib.warn "nix/package.nix: the kubernetes provider is ${p.version}, the patch is for 2.38.0: left stock" p;
  tofu = opentofu.withPlugins (p: map patchProvider (tofuProviders p));
  packageJson = lib.importJSON ../package.json;
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../package.json
      ../package-lock.json
      ../tsconfig.json
      ../tsconfig.build.json
      ../cdktf.json
      ../bin
      ../src
      ../stacks
      # src/tools/versions.ts reads the pinned versions from it at run time
      ../toolchain/versions.env
    ];
  };
in
buildNpmPackage {
  pname = "k8s-deployer";
  inherit (packageJson) version;
  inherit src npmDepsHash;
  nodejs = nodejs_24;

  npmFlags = [ "--ignore-scripts" ];
  npmBuildScript = "build";
  nativeBuildInputs = [ makeWrapper ];

  postInstall = ''
    # gnugrep: the run guardian (src/tools/run-guardian.ts) finds a run's processes with grep -z
    wrapProgram $out/bin/deploy \
      --prefix PATH : ${lib.makeBinPath [ tofu skopeo kubectl nodejs_24 gnugrep ]} \
      --set-default DEPLOY_TOFU ${tofu}/bin/tofu \
      --set-default DEPLOY_SKOPEO ${skopeo}/bin/skopeo \
      --set-default DEPLOY_KUBECTL ${kubectl}/bin/kubectl
  '';

  passthru = { inherit tofu; };

  meta = {
    description = packageJson.description;
    license = lib.licenses.mit;
    mainProgram = "deploy";
    platforms = lib.platforms.linux;
  };
}
