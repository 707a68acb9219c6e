/**
 * The requirement ids a text cites, and the ids docs/glossary.md defines. An id is one of:
 * `FR-nnn`, `SC-nnn` (the specification's functional requirements and success criteria),
 * `USn` or `USn ASm` (a user story, or one of its acceptance scenarios), `edge n` or
 * `edge case n` (the specification's edge cases, in its order), `law n` (the design's laws).
 * Each is read in one normal form (`FR-006`, `US2 AS3`, `edge case 2`, `law 18`), whatever its
 * case, and also when a comment's line break falls inside it (`law\n * 10`).
 *
 * Not read: a bare `AS3` (which story's it is, only the prose around it says), and the second
 * end of a range written short (`FR-015..017`).
 */

/** One id a file cites: where (file:line) and which, in normal form. */
export interface CitedId {
  readonly file: string;
  readonly line: number;
  readonly id: string;
}

/** Between the words of an id: spaces, or a line break with a comment's `*`, `//` or `#`. */
const GAP = String.raw`[\s*/#]+`;
const ID = new RegExp(
  [
    String.raw`\b(?<fr>FR-\d{3})\b`,
    String.raw`\b(?<sc>SC-\d{3})\b`,
    String.raw`\bUS(?<us>\d+)(?:${GAP}AS(?<as>\d+))?\b`,
    String.raw`\b[Ee]dge(?:${GAP}case)?${GAP}(?<edge>\d+)\b`,
    String.raw`\b[Ll]aw${GAP}(?<law>\d+)\b`,
  ].join('|'),
  'g',
);

/** The normal form of one match of ID. */
function normalForm(groups: Record<string, string | undefined>): string {
  if (groups['fr'] !== undefined) return groups['fr'];
  if (groups['sc'] !== undefined) return groups['sc'];
  if (groups['us'] !== undefined) return groups['as'] === undefined ? `US${groups['us']}` : `US${groups['us']} AS${groups['as']}`;
  if (groups['edge'] !== undefined) return `edge case ${Number(groups['edge'])}`;
  return `law ${Number(groups['law'])}`;
}

/** Every id `text` cites, with the line it starts on. */
export function citedIds(file: string, text: string): CitedId[] {
  const out: CitedId[] = [];
  for (const m of text.matchAll(ID)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ file, line, id: normalForm(m.groups ?? {}) });
  }
  return out;
}

/** One entry of the glossary: the id it defines (normal form) and its text. */
export interface GlossaryEntry {
  readonly id: string;
  readonly text: string;
}

/**
 * The ids a glossary defines: each list item that starts with the id in bold, `- **FR-006**:
 * ...`, its text running to the next item, heading or blank line. Items whose bold words are
 * no id (the terms) are not entries.
 */
export function glossaryEntries(markdown: string): GlossaryEntry[] {
  const out: GlossaryEntry[] = [];
  let current: { id: string; lines: string[] } | undefined;
  const close = () => {
    if (current !== undefined) out.push({ id: current.id, text: current.lines.join(' ') });
    current = undefined;
  };
  for (const line of markdown.split('\n')) {
    const item = /^- \*\*([^*]+)\*\*:\s*(.*)$/.exec(line);
    if (item !== null) {
      close();
      const ids = citedIds('', item[1]!);
      if (ids.length === 1 && item[1]!.trim().length <= ids[0]!.id.length + 1) current = { id: ids[0]!.id, lines: [item[2]!] };
      continue;
    }
    if (current !== undefined && /^\s+\S/.test(line)) current.lines.push(line.trim());
    else close();
  }
  close();
  return out;
}

/**
 * Whether `text` is one sentence: it ends with a full stop, and no full stop inside it is
 * followed by a capital letter (code spans are left out: `bin/deploy.js` is no sentence's end).
 */
export function isOneSentence(text: string): boolean {
  const prose = text.replace(/`[^`]*`/g, 'code').trim();
  return prose.endsWith('.') && !/[.!?]\s+[A-Z]/.test(prose.slice(0, -1));
}
