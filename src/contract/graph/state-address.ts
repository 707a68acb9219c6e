/**
 * Where the state of one (group, target) lives on an HTTP state backend: `<base>/<state key>`.
 * deploy plan|apply|destroy give tofu this address (src/workflow/target/backend.ts), and
 * `deploy state ...` reads and locks the same one (src/state/source/state-source.ts).
 */
export function stateAddress(base: string, key: string): string {
  return `${base.replace(/\/+$/, '')}/${encodeURIComponent(key)}`;
}
