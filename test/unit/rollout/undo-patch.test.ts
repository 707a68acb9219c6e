import { describe, expect, it } from 'vitest';
import { templateImage } from '../../../src/kube/api-objects.js';
import { previousReplicaSet } from '../../../src/rollout/snapshot.js';
import { buildUndoPatch, undoTemplate } from '../../../src/rollout/undo-patch.js';
import { loadFixture } from './load-fixture.js';

describe('buildUndoPatch (kubectl rollout undo semantics)', () => {
  const fx = loadFixture('terminal-systemd-degraded');
  const prev = previousReplicaSet(fx.snapshot)!;

  it('picks the revision before the current one', () => {
    expect(prev.metadata.name).toBe('web-6d5f7c9b8');
    expect(templateImage(prev.spec.template)).toMatch(/@sha256:1f3c9a7e/);
  });

  it("sets the Deployment's template to the previous ReplicaSet's, without pod-template-hash", () => {
    const ops = buildUndoPatch(prev, 2);
    expect(ops[0]).toEqual({ op: 'test', path: '/metadata/generation', value: 2 });
    expect(ops[1]!.op).toBe('replace');
    expect(ops[1]!.path).toBe('/spec/template');
    const t = ops[1]!.value as any;
    expect(t.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/managed-by': 'deploy', 'deploy.fediversity/group': 'demo' });
    // the rest of the template is kept as the API server has it (probes, volumes, hostUsers)
    expect(t.spec.hostUsers).toBe(false);
    expect(t.spec.containers[0].readinessProbe.exec.command[2]).toContain('systemctl is-system-running');
    expect(t.spec.volumes[0]).toEqual({ name: 'state', persistentVolumeClaim: { claimName: 'web-state' } });
    // GIVEN the patch WHEN applied THEN the template equals the Deployment's own shape for that image
    const rawDep = structuredClone((fx.raw.deployment as any).spec.template);
    rawDep.spec.containers[0].image = t.spec.containers[0].image;
    expect(t).toEqual(rawDep);
  });

  it('does not touch the ReplicaSet object it read', () => {
    undoTemplate(prev);
    expect((prev.spec.template as any).metadata.labels['pod-template-hash']).toBe('6d5f7c9b8');
  });

  it('leaves the generation guard out when none is known', () => {
    expect(buildUndoPatch(prev).map((o) => o.op)).toEqual(['replace']);
  });
});

describe('previousReplicaSet', () => {
  it('is the newest ReplicaSet whose template differs from the Deployment, also before the new one exists', () => {
    expect(previousReplicaSet(loadFixture('slow-recreate-old-pod-stopping').snapshot)?.metadata.name).toBe('web-6d5f7c9b8');
    expect(previousReplicaSet(loadFixture('terminal-first-deploy-degraded').snapshot)).toBeUndefined();
  });
});
