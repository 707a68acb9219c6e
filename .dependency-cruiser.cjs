// The layer rule of deploy (docs/architecture.md), checked by test/unit/architecture/layers.test.ts
// (part of `npm test`) and by hand with `npx depcruise src stacks`.
//
//     cli -> workflow -> { graph, config, tools, state, rollout, spire }
//     graph -> stacks -> { config, contract }
//     every layer may import the leaf modules: contract, errors.ts, log.ts, paths.ts
//     rollout, state, spire, tools, config: never workflow, graph, stacks or cli
//     nothing imports cli (but bin/ and tests)
//     only src/tools/run.ts imports execa / node:child_process
//     contract imports nothing of ours but errors.ts
//
// Each rule below says who may import a layer (or what a layer may import), so one import that
// goes against the flow is named once, by the rule it breaks. Type-only imports count: a type
// from a higher layer is a dependency on it all the same.

/** Files the rule applies to: the program's sources, not their tests. */
const OURS = '^(src|stacks)/';
const LEAVES = '^src/(contract/|errors\\.ts$|log\\.ts$|paths\\.ts$)';

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
      name: 'leaf-modules-are-leaves',
      comment: 'errors.ts, log.ts and paths.ts are imported by every layer, so they import no layer (only each other and src/contract/).',
      severity: 'error',
      from: { path: '^src/(errors|log|paths)\\.ts$' },
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
