import { describe, expect, it } from 'vitest';
import { nameGraphParts, formatDiagnostic } from '../../../../src/tools/tofu/tofu-events.js';
import { tofuFailure, tofuInterrupted } from '../../../../src/tools/tofu/tofu-failure.js';
import { InterruptedError } from '../../../../src/errors.js';
import type { TofuDiagnostic } from '../../../../src/tools/tofu/tofu-events.js';
import { capturedRelay } from '../../../support/api-answers.js';

const run = { exitCode: 1, signal: undefined, tail: [] } as any;
const diag = (summary: string, detail: string, address?: string): TofuDiagnostic => ({ severity: 'error', summary, detail, ...(address ? { address } : {}) }) as TofuDiagnostic;
const facts = (d: TofuDiagnostic[]) => ({ verb: 'apply', dir: '/g', diagnostics: d, failed: [], interrupts: [], stateNotes: [] });

describe('tofu errors in deploy\'s words (issue 34)', () => {
  it('GIVEN a construct ID in the text THEN it is said as the node and part', () => {
    expect(nameGraphParts('When applying changes to kubernetes_manifest.node-mail_deployment_A2CE01B5, provider produced')).toBe('When applying changes to [mail: Deployment], provider produced');
    expect(nameGraphParts('data.external.image-web_digest_0A1B2C3D failed')).toBe('[web: image digest] failed');
    expect(nameGraphParts('nothing here_to_see')).toBe('nothing here_to_see');
  });

  it('GIVEN the provider\'s inconsistent result (a field another writer holds) THEN the message names the node and the hint says what to do', () => {
    // as tofu printed it for a `kubectl set env` made by hand (issue 34's table)
    const d = diag(
      'Provider produced inconsistent result after apply',
      'When applying changes to kubernetes_manifest.node-mail_deployment_A2CE01B5, provider "provider[\\"registry.opentofu.org/hashicorp/kubernetes\\"]" produced an unexpected new value: .object.spec.template.spec.containers[0].env: new element 2 has appeared.',
      'kubernetes_manifest.node-mail_deployment_A2CE01B5',
    );
    const err = tofuFailure(facts([d]), run);
    expect(err.message).toContain('at mail: Deployment');
    expect(err.message).toContain('When applying changes to [mail: Deployment]');
    expect(err.message).not.toContain('A2CE01B5');
    expect(err.hint).toContain('run `deploy plan`, which names each hand edit and its writer');
    expect(formatDiagnostic(d)).toMatch(/^Error \(mail: Deployment\): Provider produced inconsistent result after apply: /);
  });

  it.each([
    // the typed resources pass on the API server's message only: a 403 of the RBAC authorizer and the quota's are read from it (forbidden.ts, api-status.ts isQuotaRefusal)
    ['permission', 'Failed to create object', 'deployments.apps "mail" is forbidden: User "system:serviceaccount:ci:deployer" cannot patch resource "deployments" in API group "apps" in the namespace "other"', "the cluster refused deploy's identity"],
    ['quota', 'Failed to create object', 'pods "x" is forbidden: exceeded quota: compute, requested: limits.memory=2Gi', 'raise the quota the message names'],
    ['unreachable', 'Failed to construct REST client', 'Get "https://127.0.0.1:6443/api": dial tcp 127.0.0.1:6443: connect: connection refused', 'could not be reached'],
    ['image', 'local-exec provisioner error', 'skopeo copy failed: manifest unknown', 'image push or digest read failed'],
    ['registry certificate', 'External Program Execution Failed', 'Error Message: time="2026-12-03T07:10:00Z" level=fatal msg="Error parsing image name \\"docker://127.0.0.1:5001/ns/web:t1\\": pinging container registry 127.0.0.1:5001: Get \\"https://127.0.0.1:5001/v2/\\": x509: certificate signed by unknown authority"', 'set K8S_REGISTRY_CA_FILE to the PEM file of the CA'],
  ])('GIVEN a %s error THEN its own hint', (_name, summary, detail, hint) => {
    expect(tofuFailure(facts([diag(summary, detail)]), run).hint).toContain(hint);
  });

  it("GIVEN a local-exec step that failed THEN its output is kept and its script is not printed", async () => {
    const { withoutScript } = await import('../../../../src/tools/tofu/tofu-events.js');
    const detail = "Error running command 'set -eu\narchive='/x/web.tar'\nexec \"$DEPLOY_SKOPEO\" copy ...': exit status 3. Output: deploy push: node web: the archive /x/web.tar cannot be read\n";
    expect(withoutScript(detail)).toBe("the step's command failed (exit status 3); its output:\ndeploy push: node web: the archive /x/web.tar cannot be read");
    expect(formatDiagnostic(diag('local-exec provisioner error', detail, 'null_resource.image-web_push_0A1B2C3D'))).not.toContain('DEPLOY_SKOPEO');
    expect(withoutScript('other words')).toBe('other words');
  });

  it("GIVEN tofu's summary of a held state lock, or of a provider init could not install THEN their hints; a summary that only has their words does not", () => {
    const lock = "another run holds the state lock";
    expect(tofuFailure(facts([diag('Error acquiring the state lock', 'Lock Info: ID: 1')]), run).hint).toContain(lock);
    expect(tofuFailure(facts([diag('Inconsistent dependency lock file', 'provider x is not in the lock file')]), run).hint).not.toContain(lock);
    const mirror = 'the providers must come from the offline mirror';
    const init = (summary: string) => tofuFailure({ ...facts([diag(summary, 'registry.opentofu.org/hashicorp/null')]), verb: 'init' }, run).hint;
    expect(init('Failed to query available provider packages')).toContain(mirror);
    expect(init('Failed to install provider')).toContain(mirror);
    expect(init('Invalid provider configuration')).not.toContain(mirror);
  });

  it('GIVEN an error of no known class THEN the hint says to read the named errors, not a bare "fix what the errors above name"', () => {
    const hint = tofuFailure(facts([diag('Something odd', 'no words we know')]), run).hint ?? '';
    expect(hint).toContain('each names the node and the part of the graph');
  });
});

describe("the API server's answers the kubernetes provider relayed (issue 45; test/fixtures/api-answers/provider-relay.jsonl)", () => {
  const PERMISSION_ADVICE = /deploy rbac|refused deploy's identity|grant the verb/;
  const relayOf = (address: string) => capturedRelay().filter((d) => d.address === `kubernetes_manifest.${address}`);

  it("GIVEN tofu's diagnostics of the 422 of a Deployment with Recreate and rollingUpdate THEN one line names the field in the invalid class's words, and no permission is advised", () => {
    const err = tofuFailure(facts(relayOf('invalid')), run);
    expect(err.message).toContain("  - Error (kubernetes_manifest.invalid): the API server refused Deployment recreate as invalid (Invalid): spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'");
    // its three diagnostics are said in that one line
    expect(err.message).not.toContain('API response status');
    expect(err.message).not.toContain('Kubernetes API Error');
    expect(err.hint).toContain('the field named above is wrong as written');
    expect(err.hint).not.toMatch(PERMISSION_ADVICE);
    expect(err.diagnostics).toHaveLength(3);
  });

  it('GIVEN the same 422 as the typed resources pass it on (its message only, the word "Forbidden" in it) THEN no permission is advised either', () => {
    const text = relayOf('invalid')[0]!.detail;
    const err = tofuFailure(facts([diag('Failed to update deployment', text)]), run);
    expect(err.hint).not.toMatch(PERMISSION_ADVICE);
    expect(err.message).not.toContain("deploy's identity");
  });

  it.each([
    ['quota', 'quota', "the namespace's ResourceQuota refused pods over-quota (Forbidden): pods \"over-quota\" is forbidden: exceeded quota", 'raise the quota the message names'],
    ['webhook', 'server-error', 'the API server failed (InternalError): Internal error occurred: failed calling webhook', 'admission webhook'],
    ['exists', 'conflict', 'object taken exists already, and deploy did not create it (AlreadyExists): resource \"api-corpus/taken\" already exists', 'if it is a leftover, delete it'],
  ])("GIVEN tofu's diagnostics of the %s refusal THEN its class (%s) says it and what to do", (address, _cls, what, hint) => {
    const err = tofuFailure(facts(relayOf(address)), run);
    expect(err.message).toContain(`  - Error (kubernetes_manifest.${address}): ${what}`);
    expect(err.hint).toContain(hint);
    expect(err.hint).not.toMatch(PERMISSION_ADVICE);
  });

  it('GIVEN the four refusals of one apply THEN each is one line, and the hint is the first one\'s', () => {
    const all = capturedRelay();
    const err = tofuFailure(facts(all), run);
    expect(err.message.split('\n').filter((l) => l.startsWith('  - Error'))).toHaveLength(4);
    expect(err.diagnostics).toHaveLength(all.length);
    const first = all[0]!.address;
    expect(err.hint).toBe(tofuFailure(facts(all.filter((d) => d.address === first)), run).hint);
  });
});

describe('an interrupted tofu', () => {
  it("GIVEN the diagnostics the interrupt itself caused (a data source's program stopped by the signal, execution halted) THEN none is listed as a problem; another error is", () => {
    const stopped = diag('External Program Execution Failed', 'The data source received an unexpected error while attempting to execute the program.\n\nProgram: /bin/sh\nState: signal: interrupt');
    const other = diag('Invalid reference', 'A reference to a resource type must be followed by at least one attribute access');
    const err = tofuInterrupted({ ...facts([stopped, diag('execution halted', ''), other]), interrupts: ['Interrupt received.'] }, new InterruptedError('SIGINT'), undefined);
    expect(err.message).toContain('tofu apply was interrupted in /g: tofu stopped after the operations in flight (one interrupt); the state it reached is saved and the lock released.');
    expect(err.message).not.toContain('External Program');
    expect(err.message).not.toContain('execution halted');
    expect(err.message).toContain('Invalid reference');
  });

  it("GIVEN Ctrl-C while tofu started a provider (go-plugin's handshake cut short: 'not compiled for this architecture') THEN that is not listed as a problem", () => {
    const handshake = diag('Unrecognized remote plugin message: ', "Failed to read any lines from plugin's stdout\nThis usually means\n  the plugin was not compiled for this architecture,");
    const closed = diag('Plugin did not respond', 'The plugin encountered an error, and failed to respond to the plugin.(*GRPCProvider).ReadResource call.');
    const schema = diag('failed to read schema for [n1: image digest] in registry.opentofu.org/hashicorp/external: failed to instantiate provider to obtain schema: Unrecognized remote plugin message: ', "Failed to read any lines from plugin's stdout");
    const err = tofuInterrupted({ ...facts([handshake, closed, schema, diag('execution halted', '')]), verb: 'plan', interrupts: ['Interrupt received.'] }, new InterruptedError('SIGINT'), undefined);
    expect(err.message).toBe('tofu plan was interrupted in /g: tofu stopped after the operations in flight (one interrupt); a plan changes nothing, and the lock is released.');
    expect(err.hint).toBe('run the command again');
  });

  it('GIVEN the same handshake failure without an interrupt THEN it is the failure reported', () => {
    const handshake = diag('Unrecognized remote plugin message: ', "Failed to read any lines from plugin's stdout");
    expect(tofuFailure({ ...facts([handshake]), verb: 'plan' }, run).message).toContain('Unrecognized remote plugin message');
  });
});
