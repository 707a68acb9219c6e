/** A URL of the kubeconfig (a server, a proxy), read without throwing and shown without its password. */

/** The URL, or undefined when `text` is not one. */
export function tryUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** A URL without its password, for messages. */
export function redactUrl(text: string): string {
  const url = tryUrl(text);
  if (!url || url.password === '') return text;
  url.password = '***';
  return url.href;
}
