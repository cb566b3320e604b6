/** Why each dead letter is there, as the run's ledger explains it. */
import { describe, expect, test } from 'vitest';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { checkDeliveries } from '../../../simulator/check/invariants';
import { FaultPlan, NO_FAULTS, type FaultKind } from '../../../simulator/faults/fault-plan';
import { SimulatedEventSourceMapping } from '../../../simulator/lambda/event-source-mapping';
import { subscriberKit } from './check-kit';

/** Faults of one kind only, on every decision. */
class AlwaysFaults extends FaultPlan {
  public constructor(private readonly kind: FaultKind) {
    super('always', { ...NO_FAULTS, duplicate: 1 });
  }

  public override happens(_rate: number, kind: FaultKind): boolean {
    return kind === this.kind;
  }
}

describe('explaining dead letters', () => {
  test('a message SQS moved after receives that all succeeded but whose deletes were lost is explained, not a violation', async () => {
    // GIVEN a consumer that handles every message, and every delete of the mapping lost
    const kit = subscriberKit({ maxReceiveCount: 2 });
    const mapping = new SimulatedEventSourceMapping({
      model: { key: 'Stack/Mapping', stackName: 'Stack', logicalId: 'Mapping', queue: kit.queue.model.key, function: 'Stack/Consumer', batchSize: 10, reportBatchItemFailures: true, enabled: true },
      queue: kit.queue,
      runner: { invoke: async () => ({ kind: 'returned', response: { batchItemFailures: [] } }) },
      faults: new AlwaysFaults('lost-delete'),
      region: 'us-east-1',
      observer: kit.ledger,
    });
    kit.deliver('event-1');

    // WHEN it is received maxReceiveCount times, then SQS moves it
    for (let round = 0; round < 3; round += 1) {
      await mapping.runRound(1);
      kit.clock.advanceBy(31_000);
    }
    await mapping.runRound(1);

    // THEN the dead letter says why it is there
    const findings = readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger);
    expect(findings).toEqual([expect.objectContaining({ eventId: 'event-1', explanation: expect.stringMatching(/moved by SQS after 2 receives; last failure: .*delete.*lost/) })]);
    expect(checkDeliveries(kit.subscriber, findings, kit.ledger)).toEqual([]);
  });
});
