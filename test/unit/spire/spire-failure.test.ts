/** A tofu failure of the SPIRE steps, reported as what the step printed (src/spire/spire-failure.ts). */
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { formatStepLine } from '../../../src/contract/step-lines.js';
import { spireFailure, spireStepOutput } from '../../../src/spire/spire-failure.js';

// the step's typed line (stacks/spire-scripts.ts), then ssh's own complaint
const unreachable = (what: string) =>
  `${formatStepLine({ deployStep: 'spire', event: 'failed', node: 'spire.example.org', message: `the spire node spire.example.org is not reachable over ssh as deploy (${what}); check K8S_SPIRE_NODE, the node, the host key in SSH_NODES and SSH_PRIVATE_KEY_FILE` })}\nssh: connect to host spire.example.org port 22: Connection refused\n`;
// the external data source's diagnostic (terraform-provider-external, data_source.go)
const external = (what: string) => ({
  severity: 'error',
  summary: 'External Program Execution Failed',
  detail: `The data source received an unexpected error while attempting to execute the program.\n\nProgram: /bin/sh\nError Message: ${unreachable(what)}\nState: exit status 1`,
});
// local-exec's: the whole script first, with our message text in it, then its output
const localExec = {
  severity: 'error',
  summary: 'local-exec provisioner error',
  detail: `Error running command 'set -eu\nunreachable() { deploy_line spire failed 'spire.example.org' "the spire node spire.example.org is not reachable over ssh as deploy ($1)"; }\ndeploy_line() { printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\\n' "$1" "$2" "$3" "$4" >&2; }\n': exit status 1. Output: ${unreachable('handing off the kubeconfig')}`,
};

describe('spireFailure', () => {
  it('GIVEN the two plan-time reads failed THEN one message names the node, with each line once', () => {
    const err = Object.assign(new Error('tofu plan failed'), { diagnostics: [external('reading /etc/machine-id'), external('reading the trust bundle')] });
    const e = spireFailure(err, 'plan -destroy', 'spire.example.org');
    expect(e).toBeInstanceOf(ToolError);
    expect(e!.message.split('\n')).toEqual([
      'tofu plan -destroy failed at the SPIRE steps with the spire node spire.example.org:',
      expect.stringContaining('  deploy: the spire node spire.example.org is not reachable over ssh as deploy (reading /etc/machine-id)'),
      '  ssh: connect to host spire.example.org port 22: Connection refused',
      expect.stringContaining('(reading the trust bundle)'),
    ]);
    expect(e!.hint).toContain('SSH_NODES');
    expect(e!.cause).toBe(err);
  });

  it('GIVEN a failed hand-off THEN only its output is kept, not the script', () => {
    expect(spireStepOutput(localExec.detail)).toEqual({
      lines: [expect.stringMatching(/^deploy: the spire node spire\.example\.org .*\(handing off the kubeconfig\)/), 'ssh: connect to host spire.example.org port 22: Connection refused'],
      node: 'spire.example.org',
    });
    // without coordinates (a hand-off retired after SPIRE was turned off) the node comes from the line
    expect(spireFailure({ diagnostics: [localExec] }, 'apply', undefined)!.message).toContain('with the spire node spire.example.org:');
  });

  it('GIVEN a typed line naming another spire node than its words THEN the node is the typed one (no words are read for it)', () => {
    const line = formatStepLine({ deployStep: 'spire', event: 'failed', node: 'spire-b.example.org', message: 'the spire node spire-a.example.org says so' });
    const e = spireFailure({ diagnostics: [{ severity: 'error', detail: `Error Message: ${line}\nState: exit status 1` }] }, 'plan', undefined);
    expect(e!.message.split('\n')).toEqual(['tofu plan failed at the SPIRE steps with the spire node spire-b.example.org:', '  deploy: the spire node spire-a.example.org says so']);
  });

  it('GIVEN words that look like ours, or a typed line of the push THEN they are not the SPIRE steps', () => {
    const words = 'Error Message: deploy: the spire node spire.example.org is not reachable over ssh as deploy (x)\nState: exit status 1';
    const push = `Error Message: ${formatStepLine({ deployStep: 'push', event: 'failed', node: 'web', message: 'the spire node x' })}\nState: exit status 1`;
    expect(spireFailure({ diagnostics: [{ severity: 'error', detail: words }, { severity: 'error', detail: push }] }, 'plan', 'x')).toBeUndefined();
  });

  it('GIVEN errors that are not the SPIRE steps THEN it leaves them to tofu', () => {
    expect(spireFailure({ diagnostics: [{ severity: 'error', detail: 'Error Message: skopeo: manifest unknown\nState: exit status 1' }] }, 'plan', 'x')).toBeUndefined();
    expect(spireFailure(new Error('plain'), 'plan', 'x')).toBeUndefined();
  });
});
