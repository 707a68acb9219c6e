/**
 * The e2e files side by side (issue 49, docs/tests.md "e2e files side by side"): every e2e file
 * is in exactly one list of test/e2e/side-by-side.ts and the table of docs/tests.md says the
 * same class; the e2e sequencer puts the `alone` files in one block after the `shared` ones;
 * the lock of the e2e files (test/e2e/files-lock.ts) lets shared holders in together and an
 * exclusive one alone, and says who waits for whom. No cluster: the lock is a file of a
 * temporary directory.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { takeFilesLock, type FilesLock } from '../../e2e/files-lock.ts';
import { releaseFileSlot, setFileSlot, takeRunSlot, withoutRunSlot } from '../../e2e/run-slots.ts';
import AloneLastSequencer from '../../e2e/sequencer.ts';
import { aloneLast, ALONE, E2E_WORKERS, RUN_SLOTS, e2eName, E2E_DIR, EXPECTED_SECONDS, SHARED, shareOf, slowestFirst, type Share } from '../../e2e/side-by-side.ts';

const repo = resolve(import.meta.dirname, '../../..');

/** Every e2e file as the e2e project's include finds it (test/e2e/**\/*.test.ts), by its name under test/e2e/. */
async function e2eFiles(): Promise<string[]> {
  return (await readdir(E2E_DIR, { recursive: true })).filter((f) => f.endsWith('.test.ts')).map((f) => e2eName(join(E2E_DIR, f))!).sort();
}

/** The rows of the table under "## e2e files side by side" in docs/tests.md: file -> class. */
async function documentedClasses(): Promise<Map<string, string>> {
  const text = await readFile(join(repo, 'docs', 'tests.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('e2e files side by side'));
  expect(section, 'docs/tests.md has a section "## e2e files side by side"').toBeDefined();
  const rows = new Map<string, string>();
  for (const line of section!.split('\n')) {
    const m = /^\| `([^`]+\.test\.ts)`[^|]*\|[^|]*\| (\w+) \|/.exec(line);
    if (m) {
      expect(rows.has(m[1]!), `${m[1]} in two rows`).toBe(false);
      rows.set(m[1]!, m[2]!);
    }
  }
  return rows;
}

describe('the classes of the e2e files (test/e2e/side-by-side.ts)', () => {
  it('GIVEN every e2e file THEN each is in exactly one list, and every listed file exists', async () => {
    const files = await e2eFiles();
    expect(files.length).toBeGreaterThan(30);
    const listed = [...ALONE, ...SHARED];
    expect(listed.filter((f, i) => listed.indexOf(f) !== i), 'listed twice').toEqual([]);
    expect(files.filter((f) => !listed.includes(f)), 'e2e files in neither list: classify them (they run alone until then)').toEqual([]);
    expect(listed.filter((f) => !existsSync(join(E2E_DIR, f))), 'listed files that are not there').toEqual([]);
  });

  it('GIVEN every e2e file THEN it has a time of the last full run to be ordered by on a fresh clone (EXPECTED_SECONDS), and no other name has one', async () => {
    const files = await e2eFiles();
    expect(files.filter((f) => !(EXPECTED_SECONDS[f]! > 0)), 'e2e files without a positive figure').toEqual([]);
    expect(Object.keys(EXPECTED_SECONDS).filter((f) => !files.includes(f)), 'figures for files that are not there').toEqual([]);
  });

  it('GIVEN the table of docs/tests.md THEN it has one row per e2e file, with the class of the lists', async () => {
    const documented = await documentedClasses();
    const files = await e2eFiles();
    expect([...documented.keys()].sort()).toEqual(files);
    for (const f of files) expect(documented.get(f), f).toBe(shareOf(f));
  });

  it('GIVEN a path THEN its class is read by its name under test/e2e/; a file elsewhere has none', () => {
    expect(shareOf(join(E2E_DIR, 'cluster.test.ts'))).toBe('alone');
    expect(shareOf('deploy-us1.test.ts')).toBe('shared');
    expect(shareOf(join(E2E_DIR, 'no-such.test.ts'))).toBeUndefined();
    expect(shareOf(join(repo, 'test', 'unit', 'cluster.test.ts'))).toBeUndefined();
  });
});

describe('the order: the alone files in one block after the shared ones', () => {
  it('GIVEN a mixed order THEN the classified items keep their places, shared first, each group in its order', () => {
    const classes: Record<string, Share | undefined> = { a1: 'alone', s1: 'shared', a2: 'alone', s2: 'shared', s3: 'shared' };
    const order = aloneLast(['u1', 'a1', 's1', 'a2', 's2', 's3', 'u2'], (i) => classes[i]);
    expect(order).toEqual(['u1', 's1', 's2', 's3', 'a1', 'a2', 'u2']);
  });

  it("GIVEN vitest's order (the slowest first) THEN the sequencer keeps it but moves the e2e project's alone files after its shared ones, and an unclassified e2e file with them", async () => {
    const spec = (project: string, file: string, duration: number) =>
      ({ moduleId: join(repo, file), project: { name: project, config: { sequence: { groupOrder: project === 'e2e' ? 1 : 0 }, isolate: true } }, duration }) as unknown as TestSpecification & { duration: number };
    const specs = [
      spec('e2e', 'test/e2e/deploy-us1.test.ts', 30),
      spec('e2e', 'test/e2e/deploy-deadline.test.ts', 95),
      spec('unit', 'test/unit/cluster.test.ts', 5),
      spec('e2e', 'test/e2e/deploy-hand-edits.test.ts', 330),
      spec('e2e', 'test/e2e/cluster.test.ts', 40),
      spec('e2e', 'test/e2e/new-file.test.ts', 1),
    ];
    const ctx = { cache: { getTestSpecificationResult: (s: { duration: number }) => ({ failed: false, duration: s.duration }) } } as unknown as Vitest;
    const sorted = await new AloneLastSequencer(ctx).sort(specs);
    expect(sorted.map((s) => s.moduleId.slice(repo.length + 1))).toEqual([
      'test/unit/cluster.test.ts',
      'test/e2e/deploy-hand-edits.test.ts',
      'test/e2e/deploy-us1.test.ts',
      'test/e2e/deploy-deadline.test.ts',
      'test/e2e/cluster.test.ts',
      'test/e2e/new-file.test.ts',
    ]);
  });
});

describe('the order on a machine without results: the slowest first by the last full run', () => {
  it('GIVEN items in scope with and without figures THEN failed first, then those without a figure, then the slowest; the others keep their places', () => {
    const secs: Record<string, number | undefined> = { a: 10, b: 300, c: undefined, d: 50, e: 50 };
    const order = slowestFirst(['u', 'a', 'b', 'c', 'd', 'e', 'v'], (i) => !'uv'.includes(i), (i) => secs[i], (i) => i === 'a');
    expect(order).toEqual(['u', 'a', 'c', 'b', 'd', 'e', 'v']);
  });

  it('GIVEN no results of a run before (a fresh clone) THEN the sequencer orders the e2e files by EXPECTED_SECONDS, the alone ones still last', async () => {
    const spec = (project: string, file: string) =>
      ({ moduleId: join(repo, file), project: { name: project, config: { sequence: { groupOrder: project === 'e2e' ? 1 : 0 }, isolate: true } } }) as unknown as TestSpecification;
    const names = ['deploy-us1.test.ts', 'deploy-soak.test.ts', 'deploy-hand-edits.test.ts', 'cluster.test.ts', 'deploy-spire.test.ts', 'rollout.test.ts'];
    const specs = names.map((n) => spec('e2e', `test/e2e/${n}`));
    const ctx = { cache: { getTestSpecificationResult: () => undefined } } as unknown as Vitest;
    const sorted = (await new AloneLastSequencer(ctx).sort(specs)).map((s) => e2eName(s.moduleId)!);
    const shared = names.filter((n) => shareOf(n) === 'shared').sort((a, b) => EXPECTED_SECONDS[b]! - EXPECTED_SECONDS[a]!);
    const alone = names.filter((n) => shareOf(n) === 'alone').sort((a, b) => EXPECTED_SECONDS[b]! - EXPECTED_SECONDS[a]!);
    expect(sorted).toEqual([...shared, ...alone]);
  });
});

describe('the lock of the e2e files (test/e2e/files-lock.ts)', () => {
  let dir = '';
  const held: FilesLock[] = [];
  afterAll(async () => {
    for (const l of held) await l.release();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN two shared holders THEN both hold it at once; an alone file waits for both, saying for whom, and a shared file waits for the alone one', async () => {
    dir = await mkdtemp(join(tmpdir(), 'e2e-files-lock-'));
    const lockFile = join(dir, 'cluster.e2e-files.lock');
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    const a = await takeFilesLock('a.test.ts', 'shared', { lockFile, log });
    const b = await takeFilesLock('b.test.ts', 'shared', { lockFile, log });
    held.push(a, b);
    expect([a.waitedMs, b.waitedMs]).toEqual([0, 0]);
    expect(lines).toEqual([]);

    let aloneGot = false;
    const alone = takeFilesLock('c.test.ts', 'alone', { lockFile, log }).then((l) => ((aloneGot = true), held.push(l), l));
    await until(() => lines.length > 0);
    expect(lines[0]).toMatch(/^\[e2e side by side\] c\.test\.ts \(alone\) waits until no other e2e file runs; running now: a\.test\.ts \(shared, since [\d:]+\), b\.test\.ts \(shared, since [\d:]+\)$/);
    await a.release();
    await new Promise((r) => setTimeout(r, 300));
    expect(aloneGot, 'the alone file got the lock while a shared one held it').toBe(false);
    await b.release();
    const c = await alone;
    expect(c.waitedMs).toBeGreaterThan(0);
    expect(lines[1]).toMatch(/^\[e2e side by side\] c\.test\.ts \(alone\) got the lock after [\d.]+ s of waiting$/);

    const shared = takeFilesLock('d.test.ts', 'shared', { lockFile, log }).then((l) => (held.push(l), l));
    await until(() => lines.length > 2);
    expect(lines[2]).toMatch(/^\[e2e side by side\] d\.test\.ts \(shared\) waits while a file runs alone: c\.test\.ts \(alone, since [\d:]+\)$/);
    await c.release();
    await shared;
    expect(lines[3]).toMatch(/^\[e2e side by side\] d\.test\.ts \(shared\) got the lock after/);
    // the holders' notes go with their locks
    expect((await readdir(`${lockFile}.holders`)).length).toBe(1);
  });
});

describe('the run slots of the e2e files (test/e2e/run-slots.ts)', () => {
  let dir = '';
  const held: { release(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const l of held) await l.release();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN the e2e project THEN it has one worker more than the slots, and two slots (the cores)', () => {
    expect([RUN_SLOTS, E2E_WORKERS]).toEqual([2, 3]);
  });

  it('GIVEN two slots held THEN a third file waits, saying so, and gets the slot the first one lets go', async () => {
    dir = await mkdtemp(join(tmpdir(), 'e2e-run-slots-'));
    const lines: string[] = [];
    const opts = { dir, slots: 2, log: (l: string) => lines.push(l) };
    const a = await takeRunSlot('a.test.ts', opts);
    const b = await takeRunSlot('b.test.ts', opts);
    held.push(a, b);
    expect([a.waitedMs, b.waitedMs, [a.detail, b.detail].sort()]).toEqual([0, 0, ['0', '1']]);
    let got = false;
    const third = takeRunSlot('c.test.ts', opts).then((l) => ((got = true), held.push(l), l));
    await until(() => lines.length > 0);
    expect(lines[0]).toBe('[e2e side by side] c.test.ts waits for a run slot: 2 files already work on the cluster');
    await new Promise((r) => setTimeout(r, 1200));
    expect(got, 'a third file got a slot while both were held').toBe(false);
    await b.release();
    const c = await third;
    expect(c.detail).toBe(b.detail);
    expect(c.waitedMs).toBeGreaterThan(0);
    expect(lines[1]).toMatch(new RegExp(`^\\[e2e side by side\\] c\\.test\\.ts got run slot ${b.detail} after [\\d.]+ s of waiting$`));
  });

  it('GIVEN files waiting for a slot THEN a freed slot goes to the one expected to take longest, whenever it came; a file that started with its peers waits its grace first', async () => {
    const sdir = await mkdtemp(join(tmpdir(), 'e2e-run-slots-'));
    const lines: string[] = [];
    const opts = { dir: sdir, slots: 1, log: (l: string) => lines.push(l) };
    const holder = await takeRunSlot('holder.test.ts', { ...opts, seconds: 50 });
    const order: string[] = [];
    const short = takeRunSlot('short.test.ts', { ...opts, seconds: 10 }).then((l) => (order.push('short'), l));
    await until(() => lines.length === 1);
    const long = takeRunSlot('long.test.ts', { ...opts, seconds: 600 }).then((l) => (order.push('long'), l));
    await until(() => lines.length === 2);
    await holder.release();
    const got = await long;
    expect(order).toEqual(['long']);
    await got.release();
    await (await short).release();
    expect(order).toEqual(['long', 'short']);
    // the grace: a file of most seconds that arrives while a lesser one waits out its grace goes first
    const graced = takeRunSlot('peer.test.ts', { ...opts, seconds: 10, graceMs: 1500 }).then((l) => (order.push('peer'), l));
    await new Promise((r) => setTimeout(r, 300));
    const first = takeRunSlot('first.test.ts', { ...opts, seconds: 600, graceMs: 1500 }).then((l) => (order.push('first'), l));
    await (await first).release();
    await (await graced).release();
    expect(order.slice(2)).toEqual(['first', 'peer']);
    expect(await readdir(join(sdir, 'waiting')), 'the tickets go with their takers').toEqual([]);
    await rm(sdir, { recursive: true, force: true });
  });

  it('GIVEN a file that gives its only slot back for a wait THEN another file takes it at once meanwhile, and the file holds it again after', async () => {
    const sdir = await mkdtemp(join(tmpdir(), 'e2e-run-slots-'));
    const lines: string[] = [];
    const opts = { dir: sdir, slots: 1, log: (l: string) => lines.push(l) };
    setFileSlot('spire.test.ts', await takeRunSlot('spire.test.ts', opts), opts);
    const result = await withoutRunSlot('waits for kubelet', async () => {
      const other = await takeRunSlot('other.test.ts', opts);
      expect([other.detail, other.waitedMs]).toEqual(['0', 0]);
      await other.release();
      return 'waited';
    });
    expect(result).toBe('waited');
    expect(lines).toEqual(['[e2e side by side] spire.test.ts gives back run slot 0 while it waits for kubelet']);
    // held again: a third file now waits
    const third = await takeRunSlot('third.test.ts', { ...opts, waitSeconds: 1 }).then(
      () => 'got it',
      (err: Error) => err.message,
    );
    expect(third).toMatch(/^third\.test\.ts: no run slot of .* within 1 s; the slots are .*\/0\.\.0, the files waiting for one: .*\/waiting$/);
    await releaseFileSlot();
    await rm(sdir, { recursive: true, force: true });
  });

  it('GIVEN no e2e setup file ran THEN withoutRunSlot refuses, naming it', async () => {
    await vi.resetModules();
    const fresh = await import('../../e2e/run-slots.ts');
    await expect(fresh.withoutRunSlot('waits', async () => 1)).rejects.toThrow(/no e2e file's slot is known here \(cluster-share\.ts/);
  });

  it('GIVEN the file keeps its slot while another holds the only one THEN its wait for a slot after withoutRunSlot ends when the other lets go', async () => {
    const sdir = await mkdtemp(join(tmpdir(), 'e2e-run-slots-'));
    const lines: string[] = [];
    const opts = { dir: sdir, slots: 1, log: (l: string) => lines.push(l) };
    setFileSlot('spire.test.ts', await takeRunSlot('spire.test.ts', opts), opts);
    let other: { release(): Promise<void> } | undefined;
    let back = false;
    const done = withoutRunSlot('waits', async () => {
      other = await takeRunSlot('other.test.ts', opts);
    }).then(() => (back = true));
    await until(() => other !== undefined);
    await until(() => lines.some((l) => l.startsWith('[e2e side by side] spire.test.ts waits for a run slot')));
    expect(back, 'the file went on without a slot while the other held the only one').toBe(false);
    await other!.release();
    await done;
    expect(lines.at(-1)).toMatch(/^\[e2e side by side\] spire\.test\.ts got run slot 0 after/);
    await releaseFileSlot();
    await rm(sdir, { recursive: true, force: true });
  });
});

async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
