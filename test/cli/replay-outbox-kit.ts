/**
 * What the `replay` tests of test/cli that write their outbox items by hand share: a new outbox table before each test
 * ({@link useReplayOutbox}, its TTL on under an attribute when asked), the operator services a test starts
 * ({@link startServices}; {@link useServicesPerTest} stops them after each test), and the two items the TTL tests
 * replay, one past its TTL and one within it ({@link expiredAndKept}).
 */
import { UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { localClient } from '../support/dynamodb-client';
import { putOutboxItem } from '../support/outbox-items';
import { createOutbox } from '../support/proof/tables';
import { frozenClock } from '../simulator/aws/queue-test-kit';
import { startOperatorServices, type OperatorServices } from './operator-services';

/** A day, in milliseconds. */
export const DAY_MS = 86_400_000;
/**
 * When the services' clock starts ({@link startServices}): 2100-01-01, far past the real clock. DynamoDB Local deletes
 * an item of a table whose TTL is on as soon as ITS clock, the real one, passes the item's TTL attribute (within
 * seconds: simulator/aws/tables.ts); items dated by a clock in the real past (the queue kit's 2023) were deleted
 * between their write and the replay's read, so a replay found `evt-kept` missing, the more often the more loaded the
 * machine. Every TTL these tests write (days after the start) stays in DynamoDB Local's future.
 */
export const REPLAY_KIT_START_MS = Date.UTC(2100, 0, 1);
/** The outbox table of the running test (set before each test by {@link useReplayOutbox}). */
export let outbox: ProducerConfig;
/** The attribute {@link outbox}'s TTL is on under (set by {@link useReplayOutbox}), if any. */
let timeToLiveOn: string | undefined;
let services: OperatorServices | undefined;

/** Stops the services the running test started ({@link startServices}) after each test of the calling file. */
export function useServicesPerTest(): void {
  afterEach(async () => {
    await services?.stop();
    services = undefined;
  });
}

/**
 * Starts the operator services (queue, topic, endpoint: operator-services.ts) named `prefix`, their clock at
 * {@link REPLAY_KIT_START_MS}, stopped after the test.
 */
export async function startServices(prefix: string): Promise<OperatorServices> {
  services = await startOperatorServices(prefix, frozenClock(REPLAY_KIT_START_MS));
  return services;
}

/** What the file's outbox table is like. */
export interface ReplayOutboxSettings {
  /**
   * The table's TTL turned on under this attribute (UpdateTimeToLive), as on a user's table.
   * @default none (the TTL off, as on a restored table)
   */
  readonly timeToLiveAttribute?: string;
}

/**
 * Creates a new outbox table ({@link outbox}, event source `urn:test:orders`) before each test of the calling file,
 * and stops the test's services after it ({@link useServicesPerTest}).
 */
export function useReplayOutbox(settings: ReplayOutboxSettings = {}): void {
  beforeEach(async () => {
    outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
    const attribute = settings.timeToLiveAttribute;
    timeToLiveOn = attribute;
    if (attribute !== undefined) await localClient().send(new UpdateTimeToLiveCommand({ TableName: outbox.outboxTableName, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } }));
  });
  useServicesPerTest();
}

/**
 * An item of the runtime (written and dated `writtenAtMs`) in {@link outbox}, kept `retentionDays` under the TTL
 * attribute `attribute`, of record type `recordType`. Throws when the table's TTL is on under `attribute` and the
 * item's TTL is not after the real clock: DynamoDB Local could delete the item before the test reads it
 * ({@link REPLAY_KIT_START_MS}).
 * @default attribute 'ttl' (a user's table); recordType: an item of the standard path
 */
export async function outboxItem(id: string, writtenAtMs: number, retentionDays: number, attribute = 'ttl', recordType?: string): Promise<void> {
  const expiresAtMs = writtenAtMs + retentionDays * DAY_MS;
  // DynamoDB Local would delete it by its own (real) clock while the test runs
  if (timeToLiveOn === attribute && expiresAtMs <= Date.now()) throw new Error(`outbox item ${id} would expire at ${new Date(expiresAtMs).toISOString()}, in DynamoDB Local's past: date it from the services' clock (REPLAY_KIT_START_MS)`);
  await putOutboxItem(outbox, { id, timeMs: writtenAtMs, writtenAtMs, expiry: { attribute, retentionDays }, ...(recordType === undefined ? {} : { recordType }) });
}

/** `evt-old`, written now and kept 7 days under `ttl`, and `evt-kept`, written 3 days on; then 9 days pass: evt-old is past its TTL, evt-kept within. Returns when evt-old was written. */
export async function expiredAndKept(s: OperatorServices): Promise<number> {
  const start = s.clock.now();
  await outboxItem('evt-old', start, 7);
  await outboxItem('evt-kept', start + 3 * DAY_MS, 7);
  s.clock.advanceBy(9 * DAY_MS);
  return start;
}

/** The ids of the events the services' queue was sent, in order. */
export const sentIds = (s: OperatorServices): string[] => s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id);
