/** Rule: the synth reported no error (an `aws:cdk:error` of the assembly makes `cdk deploy` refuse the app). */
import type { RunWideCheck } from '../run-check';

export const synthErrorsRule: RunWideCheck = {
  name: 'synth-error',
  checks: 'the synth reported no error in the simulated stacks',
  scope: 'run',
  check: (facts) =>
    facts.synthAnnotations.filter(({ level }) => level === 'error').map(({ path, message }) => ({ kind: 'synth-error' as const, detail: `the synth reported an error at ${path}: ${message}` })),
};
