/**
 * Go's garbage collector target that deploy gives tofu when the operator's environment sets
 * none (src/tools/tofu/tofu-process.ts), and the variable that says deploy set it. Everything
 * tofu starts inherits its environment; the graph's image build (stacks/image-scripts.ts), the
 * operator's own command, gets GOGC back as the operator left it: unset.
 */
export const TOFU_GOGC = '400';
export const TOFU_GOGC_SET_ENV = 'DEPLOY_TOFU_GOGC';
