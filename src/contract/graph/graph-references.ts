/**
 * Which blocks of a graph name which: every resource and data source by its address, and the
 * addresses each one names (in `depends_on` and `replace_triggered_by` bare, in an expression
 * after `${`). Found by the words of the block's JSON that have the shape of an address
 * (`type.name`, `data.type.name`) and are the address of a block of the graph: a word that only
 * looks like one (a script's `a.b`) is not a block and is dropped, and a reference cannot hide
 * (tofu reads no reference that is not such a word). So the set may hold more than tofu
 * would, never less: what it keeps in a graph (scoped-graph.ts) is a superset of what tofu reads.
 */
import type { GraphDocument } from './graph-document.js';

/** The words of a JSON text shaped as an address; `(?<!...)`: not the tail of a longer word. */
const ADDRESS_WORD = /(?<![A-Za-z0-9_.-])(?:data\.)?[a-z][a-z0-9_]*\.[A-Za-z0-9_-]+/g;

/** Every resource and data source of the graph by its address (`type.name`, `data.type.name`). */
export function graphBlocks(doc: GraphDocument): Map<string, Readonly<Record<string, unknown>>> {
  const blocks = new Map<string, Readonly<Record<string, unknown>>>();
  for (const [type, byName] of Object.entries(doc.resource ?? {})) for (const [name, block] of Object.entries(byName)) blocks.set(`${type}.${name}`, block);
  for (const [type, byName] of Object.entries(doc.data ?? {})) for (const [name, block] of Object.entries(byName)) blocks.set(`data.${type}.${name}`, block);
  return blocks;
}

/** The addresses of `blocks` that `value` (a block, an output, any part of the graph) names; CDKTF's `//` metadata is no reference. */
export function referencesIn(value: unknown, blocks: { has(address: string): boolean }): Set<string> {
  const text = JSON.stringify(value, (key, v: unknown) => (key === '//' ? undefined : v)) ?? '';
  return new Set((text.match(ADDRESS_WORD) ?? []).filter((w) => blocks.has(w)));
}

/** Each block's references to the other blocks of the graph. */
export function graphReferences(doc: GraphDocument): Map<string, Set<string>> {
  const blocks = graphBlocks(doc);
  const edges = new Map<string, Set<string>>();
  for (const [address, block] of blocks) {
    const refs = referencesIn(block, blocks);
    refs.delete(address);
    edges.set(address, refs);
  }
  return edges;
}
