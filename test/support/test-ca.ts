/**
 * A CA of a test's own and a server certificate it signed for 127.0.0.1, made with openssl
 * (as test/cluster/registry.sh --tls makes the registry's): for the tests of a registry with a
 * private CA (K8S_REGISTRY_CA_FILE).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';

export interface TestCa {
  /** The CA's certificate (PEM). */
  readonly caFile: string;
  /** The server's certificate, signed by the CA, for IP 127.0.0.1 (PEM). */
  readonly certFile: string;
  readonly keyFile: string;
}

/** Writes `<name>-ca.crt`, `<name>-server.crt` and `<name>-server.key` into `dir`. */
export async function makeTestCa(dir: string, name = 'test'): Promise<TestCa> {
  const at = (f: string) => join(dir, `${name}-${f}`);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await execa('openssl', ['req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.crt'), '-days', '2', '-subj', `/CN=deploy ${name} CA`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await execa('openssl', ['req', ...ec, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1']);
  await writeFile(at('server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  await execa('openssl', ['x509', '-req', '-in', at('server.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('server.crt'), '-days', '2', '-extfile', at('server.ext')]);
  return { caFile: at('ca.crt'), certFile: at('server.crt'), keyFile: at('server.key') };
}
