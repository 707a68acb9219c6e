/**
 * The registry's CA (K8S_REGISTRY_CA_FILE) as the graph's skopeo steps take it: a directory of
 * the run's own (under DEPLOY_RUN_DIR, removed with it) holding only `ca.crt`, handed to tofu
 * as DEPLOY_REGISTRY_CERT_DIR (src/contract/registry-cert-dir.ts).
 *
 * Why a copy, not the CA file's own directory: skopeo's --cert-dir reads every *.crt there as a
 * CA and every *.cert/*.key pair as a client certificate, so whatever else lies beside the
 * operator's file would change what skopeo trusts or presents. Only the PEM certificates of
 * the file are copied (a private key kept in the same file stays behind).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../errors.js';
import { readRegistryCa, REGISTRY_CA_ENV } from '../../config/registry-ca.js';
import { REGISTRY_CA_NAME, REGISTRY_CERT_DIR_ENV } from '../../contract/registry-cert-dir.js';

/** Over tofu's environment: DEPLOY_REGISTRY_CERT_DIR when the target has a CA, else nothing. */
export async function stageRegistryCa(caFile: string | undefined, runDir: string): Promise<Record<string, string>> {
  if (caFile === undefined) return {};
  // read again: the file may have changed since the coordinates were checked
  const read = readRegistryCa(caFile);
  if (!read.ok) {
    throw new ConfigError("the registry's CA cannot be used", [{ where: REGISTRY_CA_ENV, message: `${caFile} ${read.problem}` }], {
      hint: `point ${REGISTRY_CA_ENV} at the PEM file of the CA that signed the registry's certificate; nothing was changed`,
    });
  }
  const dir = join(runDir, 'registry-certs');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, REGISTRY_CA_NAME), read.pem, { mode: 0o644 });
  return { [REGISTRY_CERT_DIR_ENV]: dir };
}
