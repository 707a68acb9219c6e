/** Loads a recorded (or hand-written, see its `_source`) API-object fixture as a snapshot. */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClaimSchema, DeploymentSchema, EventSchema, PodSchema, ReplicaSetSchema } from '../../../src/kube/api-objects.js';
import type { RolloutSnapshot } from '../../../src/rollout/snapshot.js';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface Expectation {
  kind: 'ready' | 'waiting' | 'failed';
  reason?: string;
  phase?: string;
  systemdState?: string;
  failedUnits?: string[];
  previous?: null;
}

export interface Fixture {
  name: string;
  scenario: string;
  expect: Expectation;
  raw: { deployment: unknown; replicaSets: unknown[]; pods: unknown[]; events: unknown[]; claims: unknown[] };
  snapshot: RolloutSnapshot;
}

export function fixtureNames(): string[] {
  return readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')).sort();
}

export function loadFixture(name: string): Fixture {
  const doc = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
  return {
    name,
    scenario: doc._scenario,
    expect: doc.expect,
    raw: doc,
    snapshot: {
      deployment: doc.deployment ? DeploymentSchema.parse(doc.deployment) : undefined,
      replicaSets: doc.replicaSets.map((x: unknown) => ReplicaSetSchema.parse(x)),
      pods: doc.pods.map((x: unknown) => PodSchema.parse(x)),
      events: doc.events.map((x: unknown) => EventSchema.parse(x)),
      claims: doc.claims.map((x: unknown) => ClaimSchema.parse(x)),
    },
  };
}
