/**
 * The file-system questions tool discovery and the process wrapper ask (is it a file or a
 * directory, may it run, what is in a directory), each answered without throwing: a missing or unreadable path is simply "no" (or no text).
 */
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';

/** The entries of `dir`, or none when it cannot be read. */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The text of the file `p`, or undefined when it cannot be read. */
export function readTextFile(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

export function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function isExecutableFile(p: string): boolean {
  if (!isFile(p)) return false;
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
