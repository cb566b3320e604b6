/** Rule: every committed event reached the topic, or is accounted for in the relay's dead-letter queue (../invariants.ts). */
import { checkRelayed } from '../invariants';
import type { RunWideCheck } from '../run-check';

export const relayedRule: RunWideCheck = {
  name: 'not-relayed',
  checks: "every committed event reached the topic, or its stream batch is in the relay's dead-letter queue",
  scope: 'run',
  check: (facts) => checkRelayed(facts.committed.eventIdsByRelay, facts.ledger),
};
