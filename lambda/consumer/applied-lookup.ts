/**
 * The look-up a consumer makes when an offloaded event's object is missing (process-message.ts,
 * `MessageDependencies.appliedLookup`): one strongly consistent read of the event's inbox or processing record, read
 * as the batch read reads it (known-records.ts), with the action the mode's role is granted on its table
 * (lib/consumer/inbox-table.ts): BatchGetItem for transactional and ordered consumers, GetItem for lease and multi-step. A live record with the same fingerprint means the event was applied and
 * this is a late copy: acknowledged, not dead-lettered for data it no longer needs (R7-3). Never on the hot path.
 */
import { recordKey, TABLE_SCHEMA } from '../contract/wire-format';
import { PayloadMismatchError } from '../errors';
import { readItemConsistently, type ItemRead } from '../transaction/consistent-item-read';
import { appliedRecordOf, type KnownRecordsSource } from './known-records';
import type { AppliedLookup } from './process-message';

/**
 * The {@link AppliedLookup} of a mode whose records are in `source`'s table (transactional and ordered: an inbox record
 * or a COMPLETED processing record; lease and multi-step: a COMPLETED processing record).
 *
 * @throws PayloadMismatchError (from the look-up) when the record holds another fingerprint (the id was reused)
 */
export function appliedRecordLookup(source: KnownRecordsSource, now: () => Date, read: ItemRead): AppliedLookup {
  return async (envelope, fingerprint) => {
    const key = { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(source.subscriberName, envelope.id) };
    const item = await readItemConsistently(source.client, source.tableName, key, read, `the record of event '${envelope.id}'`);
    if (item === undefined) return undefined;
    const record = appliedRecordOf(item, source.accepts, Math.floor(now().getTime() / 1000));
    if (record === undefined) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint: record.fingerprint, receivedFingerprint: fingerprint, subscriber: source.subscriberName });
    }
    return 'duplicate';
  };
}
