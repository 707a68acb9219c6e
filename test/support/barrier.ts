/**
 * Barriers for tests that need processes to overlap (issue 49), instead of a fake program that
 * sleeps for a time that is long enough on an idle machine and too short on a loaded one: the
 * fake blocks in `waitForReleaseShell` until the test creates the release file (`release`), and
 * the test does so only once it has seen (until.ts) the other processes reach the state it is
 * about: blocked on a lock (`lockWaiters`), or running a program (`childCommands`). The
 * fake's wait has a deadline of its own, so a test that fails before it releases (or forgets
 * to) never leaves a process behind for long; release in a `finally`.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';

/**
 * Shell (sh, one line, without single quotes: it fits inside `sh -c '...'`) that waits until
 * the release file exists, looking every 50 ms; after at least `seconds` without it, it says so
 * on stderr and exits 3. The file is a path, or `{ variable }`: the one the variable names when
 * the shell runs (a fake written once for several tests).
 */
export function waitForReleaseShell(file: string | { readonly variable: string }, seconds = 20): string {
  // the file as the inside of a double-quoted sh word
  let inner: string;
  if (typeof file === 'string') {
    if (/["'$`\\\n]/.test(file)) throw new Error(`waitForReleaseShell: the path ${JSON.stringify(file)} needs quoting this shell does not do`);
    inner = file;
  } else {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(file.variable)) throw new Error(`waitForReleaseShell: ${JSON.stringify(file.variable)} is no variable name`);
    inner = `\${${file.variable}:?the release file}`;
  }
  const looks = seconds * 20;
  return `i=0; while [ ! -e "${inner}" ]; do if [ "$i" -ge ${looks} ]; then echo "not released within ${seconds} s (no file ${inner})" >&2; exit 3; fi; i=$((i + 1)); sleep 0.05; done`;
}

/** Lets every fake waiting on `file` go on. */
export function release(file: string): void {
  writeFileSync(file, '');
}

/** The lines of /proc/locks about the file at `path` (its device and inode), for messages. */
export function locksOf(path: string): string[] {
  const st = statSync(path, { bigint: true });
  // glibc's encoding of st_dev; /proc/locks prints MAJOR:MINOR:inode, the first two in hex
  const major = ((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn);
  const minor = (st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn);
  const key = ` ${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino} `;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter((line) => line.includes(key));
}

/**
 * How many processes are blocked waiting for a lock on the file at `path` (flock or fcntl): the
 * kernel lists each under the lock it waits for, marked `->`, in /proc/locks.
 */
export function lockWaiters(path: string): number {
  return locksOf(path).filter((line) => /^\d+: -> /.test(line)).length;
}

/** The command names (/proc/<pid>/comm) of the processes whose parent is `pid`, now. */
export function childCommands(pid: number): string[] {
  const names: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // "<pid> (<comm>) <state> <ppid> ...": the name may hold spaces and parentheses
    const close = stat.lastIndexOf(')');
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    if (ppid === pid) names.push(stat.slice(stat.indexOf('(') + 1, close));
  }
  return names;
}
