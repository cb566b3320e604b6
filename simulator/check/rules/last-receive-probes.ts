/** Rule: no last-receive probe's event, failed by the run at every receive, was acknowledged without a dead letter (../last-receive-probes.ts). */
import { checkLastReceiveProbes } from '../last-receive-probes';
import type { RunWideCheck } from '../run-check';

export const lastReceiveProbesRule: RunWideCheck = {
  name: 'last-receive-probe',
  checks: "the event the run failed at every receive, its last included, was dead-lettered by SQS, not acknowledged by its consumer",
  scope: 'run',
  check: (facts) => checkLastReceiveProbes(facts.lastReceiveProbes ?? []),
};
