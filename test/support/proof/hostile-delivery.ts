/**
 * One proof run in a hostile world, and the checks every proof makes of it. Not a test file.
 *
 * The at-least-once harness delivers the messages (duplicates, concurrent duplicates, redrive), a
 * {@link CrashInjector} crashes invocations, and the fault proxy loses DynamoDB responses and throttles requests at
 * seeded positions. The proof builds its consumer over the client it is given, then asserts from the real tables what
 * became of every message.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expect } from 'vitest';
import type { DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import type { Logger } from '../../../lambda/logger';
import { deliverAtLeastOnce, seededRandom, type DeliveryOptions, type DeliveryReport } from '../at-least-once';
import { localClient } from '../dynamodb-client';
import type { FaultProxy } from '../fault-proxy';
import type { CrashInjector } from './crash-injector';
import { RecordingDeadLetterPublisher, recordingLogger } from './recorders';
import { injectSeededFaults, type OperationFaults } from './seeded-faults';

/** What the consumer under test is built from. */
export interface ConsumerDependencies {
  /** A client through the fault proxy, on which the crash injector is installed. */
  readonly client: DynamoDBClient;
  /** Records dead letters; a crashed invocation can not send. */
  readonly deadLetter: DeadLetterPublisher;
  readonly logger: Logger;
}

/** Options of {@link deliverHostile}. */
export interface HostileDeliveryOptions {
  /** The message bodies; message `i` gets the SQS message id `m-<i>`. */
  readonly bodies: readonly string[];
  /** Seed of the delivery; the DynamoDB faults are placed with `seed + 2`. */
  readonly seed: number;
  /** The fault proxy to inject the faults into and to send through. */
  readonly proxy: FaultProxy;
  readonly faults: readonly OperationFaults[];
  /** Crashes the invocations. */
  readonly injector: CrashInjector;
  /** How often the SDK tries a request (a lost response is then sometimes retried, sometimes surfaces). @default the SDK's default */
  readonly maxAttempts?: number;
  /** Builds the consumer under test. */
  readonly consumer: (dependencies: ConsumerDependencies) => SqsBatchHandler;
  /** The delivery's duplicates, batches and redrive. */
  readonly delivery: Omit<DeliveryOptions, 'bodies' | 'handler' | 'seed'>;
}

/** What a hostile run left behind, besides the tables. */
export interface HostileDelivery {
  readonly report: DeliveryReport;
  readonly deadLetters: RecordingDeadLetterPublisher;
  readonly lines: Array<Record<string, unknown>>;
  /** The consumer, as built (crash-free once the injector is disabled), e.g. for an operator's redrive. */
  readonly consumer: SqsBatchHandler;
  /** How many of the injected DynamoDB faults fired. */
  faultsFired(): number;
}

/** Delivers the messages at least once through crashes and DynamoDB faults; returns what happened. */
export async function deliverHostile(options: HostileDeliveryOptions): Promise<HostileDelivery> {
  const faults = injectSeededFaults(options.proxy, seededRandom(options.seed + 2), options.faults);
  const client = localClient({ endpoint: options.proxy.endpoint, ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}) });
  options.injector.instrument(client);
  const deadLetters = new RecordingDeadLetterPublisher();
  const { logger, lines } = recordingLogger();
  const consumer = options.consumer({ client, deadLetter: options.injector.guard(deadLetters), logger });
  const report = await deliverAtLeastOnce({ ...options.delivery, bodies: options.bodies, seed: options.seed, handler: options.injector.wrap(consumer) });
  return { report, deadLetters, lines, consumer, faultsFired: faults.fired };
}

/** How hostile a run must at least have been. */
export interface Hostility {
  /** More duplicate deliveries than this. */
  readonly duplicatesAbove: number;
  /** More crashed invocations than this. @default not checked beyond every crash point firing */
  readonly crashedInvocationsAbove?: number;
}

/**
 * Asserts that the run did exercise what the proof claims: no message left in the queue, the duplicates, every crash
 * point of `injector` fired, and more than 5 DynamoDB faults.
 */
export function expectHostile(run: HostileDelivery, injector: CrashInjector, hostility: Hostility): void {
  expect(run.report.stuck.size).toBe(0);
  if (hostility.crashedInvocationsAbove !== undefined) expect(run.report.crashedInvocations).toBeGreaterThan(hostility.crashedInvocationsAbove);
  expect(run.report.duplicatesDelivered).toBeGreaterThan(hostility.duplicatesAbove);
  for (const point of injector.points) expect(injector.fired.get(point) ?? 0, `crash point ${point}`).toBeGreaterThan(0);
  expect(run.faultsFired()).toBeGreaterThan(5);
}

/** Asserts that no message was lost: every one acknowledged (processed, duplicate or dead-lettered), none redriven or stuck. */
export function expectAllAcknowledged(run: HostileDelivery, messages: number): void {
  expect(run.report.stuck.size).toBe(0);
  expect(run.report.redriven.size).toBe(0);
  expect(run.report.acknowledged.size).toBe(messages);
}

/**
 * Asserts, for the lease and multi-step modes (`statuses[i]` is message i's processing record status), that no message
 * was lost: each is COMPLETED or in the dead-letter queue (ours, with a reason, or SQS redrive); a BLOCKED one always is.
 */
export function expectCompletedOrDeadLettered(run: HostileDelivery, messages: ReadonlyArray<{ readonly id: string }>, statuses: ReadonlyArray<string | undefined>): void {
  messages.forEach((message, index) => {
    const inDeadLetterQueue = run.deadLetters.has(message.id) || run.report.redriven.has(index);
    expect(statuses[index] === 'COMPLETED' || inDeadLetterQueue, `message ${index} is ${statuses[index]} and not in the DLQ`).toBe(true);
    if (statuses[index] === 'BLOCKED') expect(inDeadLetterQueue, `blocked message ${index} is in the DLQ`).toBe(true);
  });
}
