import { fileURLToPath } from 'node:url';

/**
 * The real `deploy` command for the tests that start it as a process: bin/deploy over dist/
 * (`npm ci` and `npm run build` make it). DEPLOY_TEST_BIN names another build's bin/deploy,
 * e.g. one built apart while dist/ is in use.
 */
export const DEPLOY_BIN = process.env.DEPLOY_TEST_BIN || fileURLToPath(new URL('../../bin/deploy', import.meta.url));
