/**
 * K8S_REGISTRY_CA_FILE: the PEM file of the CA that signed the registry's certificate, for a
 * registry whose CA the system does not trust (a private CA). The graph's skopeo steps (push
 * and digest read, through a copy staged for the run: src/workflow/target/registry-ca-dir.ts) and the
 * no-op check's in-process tag reads (src/tools/registry-digest.ts) trust it besides the
 * system's CAs; the cluster's nodes must trust it for their pulls, which is the cluster
 * operator's setting (docs/registry-tls.md).
 *
 * Checked with the other coordinates, before anything runs: a file that is missing,
 * unreadable or holds no PEM certificate is exit 2 naming the variable and the file. (Without
 * the check, a bad file is only found by skopeo in the middle of a plan, and by the no-op
 * check as "a registry this client cannot read".)
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const REGISTRY_CA_ENV = 'K8S_REGISTRY_CA_FILE';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The certificates of a CA file: its PEM text, or what is wrong with it in words (after the file's name). */
export function readRegistryCa(file: string): { ok: true; pem: string; count: number } | { ok: false; problem: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable (permission denied)' : code === 'EISDIR' ? 'is a directory, not a file' : `cannot be read (${code ?? String(err)})`;
    return { ok: false, problem: why };
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    return { ok: false, problem: 'holds no PEM certificate (no -----BEGIN CERTIFICATE----- block): give the CA certificate in PEM, e.g. `openssl x509 -inform der -in ca.der -out ca.pem`' };
  }
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return { ok: false, problem: `has a certificate that does not parse (block ${i + 1} of ${blocks.length}: ${(err as Error).message})` };
    }
  }
  return { ok: true, pem: blocks.join('\n') + '\n', count: blocks.length };
}
