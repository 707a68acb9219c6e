/**
 * The environment variable through which a run hands the graph's skopeo steps the registry's
 * CA (K8S_REGISTRY_CA_FILE): a directory of the run's own holding `ca.crt`, the layout
 * skopeo's --cert-dir takes (containers-certs.d(5): *.crt are CA certificates; *.cert and
 * *.key, client certificates, are never put there). Its path is the run's, so it stays out of
 * the graph: the graph names the variable only.
 */
export const REGISTRY_CERT_DIR_ENV = 'DEPLOY_REGISTRY_CERT_DIR';

/** The CA's name inside that directory. */
export const REGISTRY_CA_NAME = 'ca.crt';
