/** Rule: no producer command failed every attempt (../producer-failures.ts). */
import { checkProducerFailures } from '../producer-failures';
import type { RunWideCheck } from '../run-check';

export const producerFailuresRule: RunWideCheck = {
  name: 'producer-failed',
  checks: 'no producer command failed every attempt',
  scope: 'run',
  check: (facts) => checkProducerFailures(facts.producer.figures, facts.producer.attempts, facts.producer.attemptEvents),
};
