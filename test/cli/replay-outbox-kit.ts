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
import { startOperatorServices, type OperatorServices } from './operator-services';

/** A day, in milliseconds. */
export const DAY_MS = 86_400_000;
/** The outbox table of the running test (set before each test by {@link useReplayOutbox}). */
export let outbox: ProducerConfig;
let services: OperatorServices | undefined;

/** Stops the services the running test started ({@link startServices}) after each test of the calling file. */
export function useServicesPerTest(): void {
  afterEach(async () => {
    await services?.stop();
    services = undefined;
  });
}

/** Starts the operator services (queue, topic, endpoint: operator-services.ts) named `prefix`, stopped after the test. */
export async function startServices(prefix: string): Promise<OperatorServices> {
  services = await startOperatorServices(prefix);
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
    if (attribute !== undefined) await localClient().send(new UpdateTimeToLiveCommand({ TableName: outbox.outboxTableName, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } }));
  });
  useServicesPerTest();
}

/**
 * An item of the runtime (written and dated `writtenAtMs`) in {@link outbox}, kept `retentionDays` under the TTL
 * attribute `attribute`, of record type `recordType`.
 * @default attribute 'ttl' (a user's table); recordType: an item of the standard path
 */
export async function outboxItem(id: string, writtenAtMs: number, retentionDays: number, attribute = 'ttl', recordType?: string): Promise<void> {
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
