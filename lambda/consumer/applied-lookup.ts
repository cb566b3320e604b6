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
 * The look-up answers undefined (not applied) for an ordered subscriber's record of the event at another sequence
 * than the delivered one (R8b-8).
 *
 * @throws PayloadMismatchError (from the look-up) when the record holds another fingerprint (the id was reused)
 */
export function appliedRecordLookup(source: KnownRecordsSource, now: () => Date, read: ItemRead): AppliedLookup {
  return async (envelope, fingerprint, orderedSequence) => {
    const key = { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(source.subscriberName, envelope.id) };
    const item = await readItemConsistently(source.client, source.tableName, key, read, `the record of event '${envelope.id}'`);
    if (item === undefined) return undefined;
    const record = appliedRecordOf(item, source.accepts, Math.floor(now().getTime() / 1000));
    if (record === undefined) return undefined;
    // as the batch read (known-records.ts `recognise`): an ordered subscriber's record of the event at another sequence
    // (written again further on, after an outbox restore: R38-9) is left to the fence, which must pass this one (R8b-8)
    if (record.orderedSequence !== undefined && orderedSequence !== undefined && record.orderedSequence !== orderedSequence()) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint: record.fingerprint, receivedFingerprint: fingerprint, subscriber: source.subscriberName });
    }
    return 'duplicate';
  };
}
