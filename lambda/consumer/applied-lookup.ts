/**
 * The look-up a consumer makes when an offloaded event's object is missing (process-message.ts,
 * `MessageDependencies.appliedLookup`): one strongly consistent GetItem of the event's inbox or processing record, read
 * as the batch read reads it (known-records.ts). A live record with the same fingerprint means the event was applied and
 * this is a late copy: acknowledged, not dead-lettered for data it no longer needs (R7-3). Never on the hot path.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { recordKey, TABLE_SCHEMA } from '../contract/wire-format';
import { PayloadMismatchError } from '../errors';
import { appliedRecordOf, type KnownRecordsSource } from './known-records';
import type { AppliedLookup } from './process-message';

/**
 * The {@link AppliedLookup} of a mode whose records are in `source`'s table (transactional and ordered: an inbox record
 * or a COMPLETED processing record; lease and multi-step: a COMPLETED processing record).
 *
 * @throws PayloadMismatchError (from the look-up) when the record holds another fingerprint (the id was reused)
 */
export function appliedRecordLookup(source: KnownRecordsSource, now: () => Date): AppliedLookup {
  return async (envelope, fingerprint) => {
    const response = await source.client.send(
      new GetCommand({ TableName: source.tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(source.subscriberName, envelope.id) }, ConsistentRead: true }),
    );
    if (response.Item === undefined) return undefined;
    const record = appliedRecordOf(response.Item, source.accepts, Math.floor(now().getTime() / 1000));
    if (record === undefined) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint: record.fingerprint, receivedFingerprint: fingerprint, subscriber: source.subscriberName });
    }
    return 'duplicate';
  };
}
