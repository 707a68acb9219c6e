/**
 * The relative links of Markdown files, and which of them do not resolve: a file or folder
 * that is not there, or an `#anchor` that is no heading of the Markdown file it points into.
 * Anchors are GitHub's: the heading's text, lower case, without punctuation (but `-` and `_`),
 * each space a `-`, and `-1`, `-2`, ... after a repeated one (the rule of github-slugger,
 * https://github.com/Flet/github-slugger, which GitHub and Forgejo render with).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

/** One link of a file: where it is (file:line) and what it points at, as written. */
export interface MarkdownLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/**
 * The lines of `text` outside fenced code blocks. Indented lines stay: a list item's lines are
 * indented too, and an indented code block here holds no `[x](y)`.
 */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (opening !== null && opening[1]!.startsWith(fence)) fence = undefined;
      return;
    }
    if (opening !== null) {
      fence = opening[1]!;
      return;
    }
    out.push({ line: i + 1, text: line });
  });
  return out;
}

/** `text` without its inline code spans (a link inside backticks is not a link). */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)[^`]*?\1/g, '');
}

/** How a Markdown file's text is read: from the disk, unless a test gives other text. */
export type ReadText = (file: string) => string;
const fromDisk: ReadText = (file) => readFileSync(file, 'utf8');

/** Every link and image of `file` (inline `[x](t)`, `![x](t)`, and definitions `[x]: t`). */
export function markdownLinks(file: string, read: ReadText = fromDisk): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(read(file))) {
    const prose = withoutCodeSpans(text);
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line, target: m[1]!.replace(/^<|>$/g, '') });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(prose);
    if (definition !== null) links.push({ file, line, target: definition[1]! });
  }
  return links;
}

/** The anchor GitHub gives a heading whose text is `heading`, before duplicates are counted. */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/<[^>]+>/g, ''); // an HTML tag shows nothing
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a Markdown file: its ATX headings' slugs (duplicates numbered) and HTML ids. */
export function markdownAnchors(file: string, read: ReadText = fromDisk): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(read(file))) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (heading !== null) {
      const slug = headingSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of text.matchAll(/<a\s[^>]*(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** Whether `target` leaves the repository's files: a URL (`https:`, `mailto:`) or a protocol-relative one. */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * The links of `files` that do not resolve, one line each: `file:line: target (why)`, the file
 * relative to `root`. External links are not checked (the tests run without network).
 */
export function brokenLinks(root: string, files: readonly string[], read: ReadText = fromDisk): string[] {
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  for (const file of files) {
    for (const link of markdownLinks(file, read)) {
      if (isExternal(link.target)) continue;
      const where = `${relative(root, link.file)}:${link.line}: ${link.target}`;
      const hash = link.target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
      const path = pathPart === '' ? link.file : resolve(dirname(link.file), pathPart.replace(/\?.*$/, ''));
      if (!existsSync(path)) {
        broken.push(`${where} (no such file: ${relative(root, path)})`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!statSync(path).isFile() || !path.endsWith('.md')) {
        broken.push(`${where} (an anchor into ${relative(root, path)}, which is not a Markdown file)`);
        continue;
      }
      const anchors = anchorsOf.get(path) ?? markdownAnchors(path, read);
      anchorsOf.set(path, anchors);
      if (!anchors.has(anchor)) broken.push(`${where} (no heading #${anchor} in ${relative(root, path)})`);
    }
  }
  return broken;
}

/** The number of lines of `text`, as `wc -l` counts them when the last line ends with a newline. */
export function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}
