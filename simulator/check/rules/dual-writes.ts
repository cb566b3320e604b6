/** Rule: each producer's business changes and its outbox events match (../dual-writes.ts), from the scenario's producer probes. */
import { checkDualWrites } from '../dual-writes';
import type { RunWideCheck } from '../run-check';

export const dualWritesRule: RunWideCheck = {
  name: 'dual-write',
  checks: "every business change a producer probe reports has its outbox event, and every outbox event its change",
  scope: 'run',
  check: (facts) =>
    facts.producer.probes.flatMap((probe) =>
      'error' in probe
        ? [{ kind: 'probe-failed' as const, detail: `the producer probe of ${probe.producer} threw: ${probe.error}` }]
        : checkDualWrites(probe.producer, probe.changes, probe.inOutbox, probe.producerEventIds, facts.committed.eventsById),
    ),
};
