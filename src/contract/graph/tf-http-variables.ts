/**
 * The OpenTofu http-backend variables a run passes to tofu (never -backend-config, which
 * tofu writes into .terraform), and which the graph's image build does not get.
 * https://opentofu.org/docs/language/settings/backends/http/
 */
export const TF_HTTP_VARIABLES = [
  'TF_HTTP_ADDRESS',
  'TF_HTTP_UPDATE_METHOD',
  'TF_HTTP_LOCK_ADDRESS',
  'TF_HTTP_LOCK_METHOD',
  'TF_HTTP_UNLOCK_ADDRESS',
  'TF_HTTP_UNLOCK_METHOD',
  'TF_HTTP_USERNAME',
  'TF_HTTP_PASSWORD',
  'TF_HTTP_SKIP_CERT_VERIFICATION',
  'TF_HTTP_RETRY_MAX',
  'TF_HTTP_RETRY_WAIT_MIN',
  'TF_HTTP_RETRY_WAIT_MAX',
  'TF_HTTP_CLIENT_CA_CERTIFICATE_PEM',
  'TF_HTTP_CLIENT_CERTIFICATE_PEM',
  'TF_HTTP_CLIENT_PRIVATE_KEY_PEM',
] as const;
