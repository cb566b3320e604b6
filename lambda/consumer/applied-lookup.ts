/**
 * The look-up a consumer makes when an offloaded event's object is missing (process-message.ts,
 * `MessageDependencies.appliedLookup`): one strongly consistent read of the event's inbox or processing record, read
 * as the batch read reads it (known-records.ts), with the action the mode's role is granted on its table
 * (lib/consumer/inbox-table.ts): BatchGetItem for transactional and ordered consumers, GetItem for lease and multi-step. A live record with the same fingerprint means the event was applied and
 * this is a late copy: acknowledged, not dead-lettered for data it no longer needs (R7-3). Never on the hot path.
 */
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { recordKey, TABLE_SCHEMA } from '../contract/wire-format';
import { PayloadMismatchError } from '../errors';
import { appliedRecordOf, type KnownRecordsSource } from './known-records';
import type { AppliedLookup } from './process-message';

/** The read a mode's role is granted on its records' table: `batch-get` (BatchGetItem) or `get` (GetItem). */
export type RecordRead = 'batch-get' | 'get';

/** One item by BatchGetItem, strongly consistent; an unprocessed key (throttled) throws, retried with the message. */
async function batchGetOne(source: KnownRecordsSource, key: Record<string, string>): Promise<Record<string, unknown> | undefined> {
  const response = await source.client.send(new BatchGetCommand({ RequestItems: { [source.tableName]: { Keys: [key], ConsistentRead: true } } }));
  if (Object.keys(response.UnprocessedKeys ?? {}).length > 0) throw new Error(`the look-up of the record of event key ${key[TABLE_SCHEMA.PARTITION_KEY]} was not processed (throttled): retried with the message`);
  return response.Responses?.[source.tableName]?.[0];
}

/**
 * The {@link AppliedLookup} of a mode whose records are in `source`'s table (transactional and ordered: an inbox record
 * or a COMPLETED processing record; lease and multi-step: a COMPLETED processing record).
 *
 * @throws PayloadMismatchError (from the look-up) when the record holds another fingerprint (the id was reused)
 */
export function appliedRecordLookup(source: KnownRecordsSource, now: () => Date, read: RecordRead): AppliedLookup {
  return async (envelope, fingerprint) => {
    const key = { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(source.subscriberName, envelope.id) };
    const item = read === 'batch-get' ? await batchGetOne(source, key) : (await source.client.send(new GetCommand({ TableName: source.tableName, Key: key, ConsistentRead: true }))).Item;
    if (item === undefined) return undefined;
    const record = appliedRecordOf(item, source.accepts, Math.floor(now().getTime() / 1000));
    if (record === undefined) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint: record.fingerprint, receivedFingerprint: fingerprint, subscriber: source.subscriberName });
    }
    return 'duplicate';
  };
}
