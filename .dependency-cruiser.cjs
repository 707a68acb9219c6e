// The layer rule of deploy (docs/architecture.md), checked by test/unit/architecture/layers.test.ts
// (part of `npm test`) and by hand with `npx depcruise src stacks`.
//
//     cli -> workflow -> { graph, config, tools, state, rollout, spire, kube }
//     rollout -> kube (the cluster client) -> { tools/run.ts }
//     graph -> stacks -> { config, contract }
//     every layer may import the leaf modules: contract, errors.ts, log.ts, paths.ts, deadline.ts, process-alive.ts
//     rollout, state, spire, tools, config: never workflow, graph, stacks or cli
//     kube: only cli, workflow and rollout import it; it imports no layer above it
//     no import cycle anywhere in src/ and stacks/
//     nothing imports cli (but bin/ and tests)
//     only src/tools/run.ts imports execa / node:child_process
//     contract imports nothing of ours but errors.ts
//
// A layer's rooms (its subfolders: src/workflow/target/, src/state/store/, src/tools/tofu/, ...)
// are that layer: every path below is a folder prefix (`^src/workflow/`), so it covers them; the
// one file a rule names, src/tools/run.ts, stays at the top of tools/.
//
// Each rule below says who may import a layer (or what a layer may import), so one import that
// goes against the flow is named once, by the rule it breaks. Type-only imports count: a type
// from a higher layer is a dependency on it all the same.

/** Files the rule applies to: the program's sources, not their tests. */
const OURS = '^(src|stacks)/';
const LEAVES = '^src/(contract/|errors\\.ts$|log\\.ts$|paths\\.ts$|deadline\\.ts$|process-alive\\.ts$)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'nothing-imports-cli',
      comment: 'src/cli/ is the top: argv -> command -> exit code. Only bin/ and tests import it; move what a lower layer needs out of cli/ (orchestration to workflow/, a type to the layer that uses it).',
      severity: 'error',
      from: { path: OURS, pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'workflow-only-from-cli',
      comment: 'src/workflow/ runs the verbs; only cli/ calls it.',
      severity: 'error',
      from: { path: OURS, pathNot: '^src/(cli|workflow)/' },
      to: { path: '^src/workflow/' },
    },
    {
      name: 'graph-only-from-cli-or-workflow',
      comment: 'src/graph/ synthesizes the stacks; rollout, state, spire, tools and config never reach up to it.',
      severity: 'error',
      from: { path: OURS, pathNot: '^src/(cli|workflow|graph)/' },
      to: { path: '^src/graph/' },
    },
    {
      name: 'stacks-only-from-graph',
      comment: 'stacks/ (CDKTF constructs) is reached through src/graph/ only; a fact both the graph and the runtime need belongs in src/contract/.',
      severity: 'error',
      from: { path: OURS, pathNot: '^(src/graph/|stacks/)' },
      to: { path: '^stacks/' },
    },
    {
      name: 'stacks-import-config-and-contract',
      comment: 'stacks/ is pure (no clock, no environment, no I/O): of ours it imports src/config/, src/contract/ and the leaf modules only.',
      severity: 'error',
      from: { path: '^stacks/' },
      to: { path: '^src/', pathNot: `^src/config/|${LEAVES}` },
    },
    {
      name: 'contract-imports-only-errors',
      comment: 'src/contract/ holds pure facts and pure functions shared by the graph and the runtime: of ours it imports only src/errors.ts.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { path: OURS, pathNot: '^src/(contract/|errors\\.ts$)' },
    },
    {
      name: 'kube-only-from-cli-workflow-rollout',
      comment: 'src/kube/ is the cluster client (the kubeconfig, the requests, the watch): the rollout, the workflow (the verified no-op check, deploy status) and the CLI use it; state, spire, tools, config and graph do not talk to the API server.',
      severity: 'error',
      from: { path: OURS, pathNot: '^src/(cli|workflow|rollout|kube)/' },
      to: { path: '^src/kube/' },
    },
    {
      name: 'kube-imports-no-layer-above',
      comment: 'src/kube/ sits under rollout, workflow and status: of ours it imports only itself, the leaf modules and src/tools/run.ts (an exec credential plugin is a process like any other).',
      severity: 'error',
      from: { path: '^src/kube/' },
      to: { path: OURS, pathNot: `^src/(kube/|tools/run\\.ts$)|${LEAVES}` },
    },
    {
      name: 'leaf-modules-are-leaves',
      comment: 'errors.ts, log.ts, paths.ts and deadline.ts are imported by every layer, so they import no layer (only each other and src/contract/).',
      severity: 'error',
      from: { path: '^src/(errors|log|paths|deadline)\\.ts$' },
      to: { path: OURS, pathNot: LEAVES },
    },
    {
      name: 'only-run-ts-starts-processes',
      comment: 'src/tools/run.ts is the one process wrapper (argv arrays, deadlines, signals); call it instead of execa or node:child_process.',
      severity: 'error',
      from: { path: OURS, pathNot: '^src/tools/run\\.ts$' },
      to: { path: '^(node:)?child_process$|(^|/)execa/' },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one: neither can be read, tested or loaded lazily without the other (and an ESM cycle can see an export before it is set). Move what both need into a third module (an interface apart from the factory that picks an implementation: state/source/state-source.ts and open-state-source.ts, workflow/view/run-view.ts and open-run-view.ts).',
      severity: 'error',
      from: { path: OURS },
      to: { path: OURS, circular: true },
    },
    {
      name: 'imports-resolve',
      comment: 'An import of ours the checker cannot resolve would escape every rule above.',
      severity: 'error',
      from: { path: OURS },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules', dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'core'] },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
