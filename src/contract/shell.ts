/**
 * Quoting for the POSIX sh scripts the graph runs (local-exec, the external program) and the
 * ones deploy writes itself (src/workflow/target/deploy-wrapper.ts).
 */
export function shq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Words quoted for sh, joined by spaces. */
export function shellWords(words: readonly string[]): string {
  return words.map(shq).join(' ');
}

/**
 * Terraform reads `${` and `%{` in every string as a template; a shell's own `${VAR}` must be
 * written `$${VAR}` in the graph to reach the shell unchanged.
 */
export function tfEscape(s: string): string {
  // a replacer function: in a replacement string `$$` would itself mean one `$`
  return s.replaceAll('${', () => '$${').replaceAll('%{', () => '%%{');
}
