// Lets a fixture program run under plain node import the TypeScript sources of src/ as they
// are (no build): `node --experimental-transform-types --import <this file> fixture.mjs`.
// The sources import each other as `./x.js` (what tsc emits); this resolves such an import
// to the `./x.ts` beside it. (Node strips or transforms the types itself; transform, not
// strip, because src/ has parameter properties.)
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      const ts = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
      if (existsSync(fileURLToPath(ts))) return next(ts.href, context);
    }
    return next(specifier, context);
  },
});
