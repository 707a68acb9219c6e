/**
 * The paths of managedFields' FieldsV1 (`f:spec`, `k:{"name":"node"}`, `v:"x"`, `i:0`, as the API
 * server records which manager wrote which field): the paths a manager's trie owns, the value
 * and JSON pointer at a path in an object, the leaf paths of a manifest, and the path as people
 * write it (`spec.template.spec.containers[node].env[FOO]`). Pure.
 * https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 */

import { z } from 'zod';
import { parseJson } from '../../contract/parse-json.js';

/** The keys of a list item in a FieldsV1 step `k:{"name":"web"}` (the API server writes them as JSON). */
const listKeysSchema = z.record(z.string(), z.unknown());

/** managedFields' FieldsV1: `f:<field>`, `k:<json of the item's keys>`, `v:<json value>`, `i:<index>`, `.` for the node itself. */
export interface FieldsTrie {
  readonly [step: string]: FieldsTrie;
}

/** One step of a FieldsV1 path. */
export type Step = string;

/**
 * A field's name in one form for the API (camelCase) and the provider's schema (snake_case):
 * underscores dropped, lower case (`storageClassName`, `storage_class_name`: `storageclassname`).
 */
export function schemaKey(name: string): string {
  return name.replaceAll('_', '').toLowerCase();
}

/** Fields of a map whose keys are data (label names, resource names), said `labels[app]`. */
const MAP_FIELDS = new Set(['labels', 'annotations', 'matchLabels', 'nodeSelector', 'limits', 'requests', 'data', 'stringData', 'capacity']);

/** Every path a FieldsV1 trie owns: each leaf `{}`, and each node that holds `.` (the item or entry itself). */
export function ownedPaths(trie: FieldsTrie, prefix: Step[] = []): Step[][] {
  const out: Step[][] = [];
  for (const [step, child] of Object.entries(trie)) {
    if (step === '.') {
      out.push(prefix);
      continue;
    }
    const path = [...prefix, step];
    if (child === null || typeof child !== 'object' || Object.keys(child).length === 0) out.push(path);
    else out.push(...ownedPaths(child, path));
  }
  return out;
}

/** The value at `steps` in a plain JSON value (an API object, a manifest), with the index path to it; undefined when absent. */
export function valueAt(root: unknown, steps: readonly Step[]): { value: unknown; pointer: (string | number)[] } | undefined {
  let at: unknown = root;
  const pointer: (string | number)[] = [];
  for (const step of steps) {
    const kind = step.slice(0, 2);
    const rest = step.slice(2);
    if (kind === 'f:') {
      if (at === null || typeof at !== 'object' || Array.isArray(at) || !(rest in at)) return undefined;
      at = (at as Record<string, unknown>)[rest];
      pointer.push(rest);
    } else if (kind === 'k:' || kind === 'v:' || kind === 'i:') {
      if (!Array.isArray(at)) return undefined;
      const index = kind === 'i:' ? Number(rest) : at.findIndex((item) => (kind === 'k:' ? matchesKeys(item, rest) : sameJson(item, rest)));
      if (!(index >= 0 && index < at.length)) return undefined;
      at = at[index];
      pointer.push(index);
    } else return undefined;
  }
  return at === undefined ? undefined : { value: at, pointer };
}

/** Each `k:` step's keys, parsed once: a 200-node group's Deployments repeat the same few thousand times. */
const parsedKeys = new Map<string, [string, unknown][]>();

function keysOf(keysJson: string): [string, unknown][] {
  let keys = parsedKeys.get(keysJson);
  if (keys === undefined) {
    keys = Object.entries(parseJson(listKeysSchema, keysJson, `the managedFields key k:${keysJson}`));
    parsedKeys.set(keysJson, keys);
  }
  return keys;
}

function matchesKeys(item: unknown, keysJson: string): boolean {
  if (item === null || typeof item !== 'object') return false;
  const keys = keysOf(keysJson);
  // a key the graph writes as a reference cannot be matched: it stays undecided (no match)
  return keys.every(([k, v]) => String((item as Record<string, unknown>)[k]) === String(v));
}

function sameJson(item: unknown, valueJson: string): boolean {
  return JSON.stringify(item) === JSON.stringify(JSON.parse(valueJson));
}

/** The JSON pointer (RFC 6901) of `steps` in the object, when it holds them. */
export function pointerIn(object: unknown, steps: readonly Step[]): string | undefined {
  const found = valueAt(object, steps);
  if (found === undefined) return undefined;
  return found.pointer.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** The leaf fields of a manifest, as FieldsV1 steps (list items by their usual key, else atomic). */
export function leafPaths(manifest: unknown, prefix: Step[] = []): Step[][] {
  if (manifest === null || typeof manifest !== 'object') return [prefix];
  if (Array.isArray(manifest)) {
    const key = LIST_KEYS[prefix.at(-1)?.slice(2) ?? ''];
    if (key === undefined || manifest.some((i) => i === null || typeof i !== 'object' || typeof (i as Record<string, unknown>)[key] !== 'string')) return [prefix];
    return manifest.flatMap((item) => leafPaths(item, [...prefix, `k:${JSON.stringify({ [key]: (item as Record<string, unknown>)[key] })}`]));
  }
  const entries = Object.entries(manifest as Record<string, unknown>);
  if (entries.length === 0) return [prefix];
  return entries.flatMap(([k, v]) => leafPaths(v, [...prefix, `f:${k}`]));
}

/** The key of the lists of a Deployment that the graph writes (their x-kubernetes-list-map-keys). */
const LIST_KEYS: Record<string, string> = { containers: 'name', initContainers: 'name', env: 'name', volumes: 'name', volumeMounts: 'mountPath', imagePullSecrets: 'name' };

/** `spec.template.spec.containers[node].env[FOO]` from FieldsV1 steps. */
export function readablePath(steps: readonly Step[]): string {
  let out = '';
  let parent = '';
  for (const step of steps) {
    const kind = step.slice(0, 2);
    const rest = step.slice(2);
    if (kind === 'f:') {
      out += MAP_FIELDS.has(parent) ? `[${rest}]` : `${out === '' ? '' : '.'}${rest}`;
      parent = MAP_FIELDS.has(parent) ? '' : rest;
      continue;
    }
    if (kind === 'k:') {
      const keys = keysOf(rest);
      out += `[${keys.length === 1 ? String(keys[0]![1]) : keys.map(([k, v]) => `${k}=${String(v)}`).join(',')}]`;
    } else if (kind === 'v:') out += `[${String(JSON.parse(rest))}]`;
    else out += `[${rest}]`;
    parent = '';
  }
  return out;
}
