/** `npm run test:drift`: the generated drift test with a new seed each run (the search; test/drift/generator.ts). */
import { defineDriftRounds } from './generator.js';

defineDriftRounds({ seed: Math.floor(Date.now() % 1_000_000_007), rounds: 200 });
