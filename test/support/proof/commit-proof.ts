/**
 * A proof run of the transactional or aggregate mode: the deposits (and poison) it sends and what must become of each,
 * the hostile delivery, and the checks that every message came out right. Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expect, inject, onTestFinished } from 'vitest';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import { parseEnvelope } from '../../../lambda/envelope';
import { derivedEventId, payloadFingerprint } from '../../../lambda/fingerprint';
import { OUTBOX_ITEM } from '../../../lambda/contract/wire-format';
import { seededRandom } from '../at-least-once';
import { startFaultProxy } from '../fault-proxy';
import { COMMIT_CRASH_POINTS, CrashInjector } from './crash-injector';
import { deliverHostile, expectAllAcknowledged, expectHostile, type ConsumerDependencies, type HostileDelivery } from './hostile-delivery';
import type { RecordingDeadLetterPublisher } from './recorders';
import type { OperationFaults } from './seeded-faults';
import { scanItems } from './table-reads';

/** The data of a deposit message. */
export interface Deposit {
  readonly account: string;
  readonly amount: number;
  /** Whether applying it emits an event (aggregate proof). */
  readonly notify?: boolean;
}

/** A message a proof sends, and what must become of it. */
export interface PlannedMessage extends Partial<Deposit> {
  readonly body: string;
  /** The event id, when the body has one. */
  readonly id?: string;
  /**
   * `apply`: its effect must be applied exactly once; `reused-id`: the id of an `apply` message with another payload,
   * so exactly one of the two is applied and the other dead-lettered; otherwise the error name it must be dead-lettered with.
   */
  readonly expect: 'apply' | 'reused-id' | 'MalformedEnvelopeError' | 'SchemaValidationError' | 'PermanentError';
}

/** The payload fingerprint of a planned message's body, as the runtime records it. */
export function fingerprintOf(message: PlannedMessage): string {
  return payloadFingerprint(parseEnvelope(message.body));
}

/** What {@link deliverPlanned} needs. */
export interface PlannedDeliveryOptions {
  /** Seeds the delivery (`seed`), the crashes (`seed + 1`) and the DynamoDB faults (`seed + 2`). */
  readonly seed: number;
  readonly planned: readonly PlannedMessage[];
  /** Lost responses and throttling inside DynamoDB, at seeded positions. */
  readonly faults: readonly OperationFaults[];
  /** Builds the consumer under test. */
  readonly consumer: (dependencies: ConsumerDependencies) => SqsBatchHandler;
}

/**
 * Delivers the planned messages to the consumer in a hostile world: 20% of the invocations crash at their 1st to 3rd
 * commit, before it or after it (both kinds in every run), the DynamoDB `faults` (through a fault proxy that lives as
 * long as the test), one SDK retry (so a lost response is sometimes retried, sometimes surfaces), 30% duplicates, 20%
 * concurrent duplicates, 4 invocations of 5 messages at a time, redrive after 25 receives. Asserts that no message was
 * lost (each acknowledged) and that the run was as hostile as claimed (more than 20 duplicates, both crash points,
 * more than 5 DynamoDB faults).
 */
export async function deliverPlanned(options: PlannedDeliveryOptions): Promise<HostileDelivery> {
  const proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
  onTestFinished(() => proxy.stop());
  const injector = new CrashInjector(COMMIT_CRASH_POINTS, seededRandom(options.seed + 1), 0.2);
  const run = await deliverHostile({
    bodies: options.planned.map((message) => message.body),
    seed: options.seed,
    proxy,
    faults: options.faults,
    injector,
    maxAttempts: 2,
    consumer: options.consumer,
    delivery: { duplicateRate: 0.3, concurrentDuplicateRate: 0.2, concurrency: 4, batchSize: 5, maxReceiveCount: 25 },
  });
  expectAllAcknowledged(run, options.planned.length);
  expectHostile(run, injector, { duplicatesAbove: 20 });
  return run;
}

/**
 * Asserts that the dead letters are exactly the planned messages that were not applied, each with its reason: a
 * poison message with its error, the loser of a reused id with PayloadMismatchError.
 */
export function expectDeadLetters(deadLetters: RecordingDeadLetterPublisher, planned: readonly PlannedMessage[], applied: readonly PlannedMessage[]): void {
  const expected: Record<string, string[]> = {};
  planned.forEach((message, index) => {
    if (applied.includes(message)) return;
    expected[`m-${index}`] = [message.expect === 'apply' || message.expect === 'reused-id' ? 'PayloadMismatchError' : message.expect];
  });
  expect(deadLetters.errorNamesByMessage()).toEqual(expected);
}

/**
 * Asserts that the outbox table holds exactly one event per message of `emitting`, under the id derived from the
 * consumed message (index 0), carrying the deposit that was applied.
 */
export async function expectEmittedOnce(client: DynamoDBClient, outboxTableName: string, subscriber: string, emitting: readonly PlannedMessage[]): Promise<void> {
  const outbox = await scanItems(client, outboxTableName);
  const emitted = new Map(outbox.map((item) => [item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] as string, parseEnvelope(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE] as string)]));
  expect(outbox).toHaveLength(emitting.length);
  expect(emitted.size).toBe(emitting.length);
  for (const message of emitting) {
    expect(emitted.get(derivedEventId(subscriber, message.id as string, 0))?.data).toEqual({ account: message.account, amount: message.amount });
  }
}
