/**
 * Outbox items written straight to an outbox table on DynamoDB Local, as the runtime's producer writes them (or another
 * producer, one that does not say when it wrote an item): what the operator's `replay` reads. Not a test file.
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ProducerConfig } from '../../lambda/config';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { envelopeObject } from '../lambda/helpers';
import { localClient } from './dynamodb-client';

/** When an outbox item expires: its TTL attribute and how long after the item's write it is kept. */
export interface OutboxItemExpiry {
  /** The item's TTL attribute (`expiresAt` as the runtime writes it, `ttl` on a user's table). */
  readonly attribute: string;
  /** The days the item is kept after it was written (the TTL, in epoch seconds, is the write time plus these). */
  readonly retentionDays: number;
}

/** The outbox item {@link putOutboxItem} writes. */
export interface OutboxItemSpec {
  /** The event id. */
  readonly id: string;
  /** The envelope's `time`, the producer's word (epoch milliseconds). */
  readonly timeMs: number;
  /** When the item says it was written (`iefWrittenAt`, epoch milliseconds); undefined: it does not say (an older runtime, another producer). */
  readonly writtenAtMs: number | undefined;
  /**
   * The event type.
   * @default 'OrderPlaced'
   */
  readonly type?: string;
  /**
   * The envelope's data.
   * @default the data of `envelopeObject` (test/lambda/helpers)
   */
  readonly data?: unknown;
  /**
   * The item's record type (an ordered history item's, say).
   * @default OUTBOX_ITEM.RECORD_TYPE_VALUE (an item of the standard path)
   */
  readonly recordType?: string;
  /**
   * The item's expiry, counted from `writtenAtMs` (or from `timeMs` when the item does not say when it was written).
   * @default none (no TTL attribute on the item)
   */
  readonly expiry?: OutboxItemExpiry;
}

/** Writes the item `spec` describes to `outbox` (its envelope a CloudEvent of `envelopeObject`); returns the envelope's body. */
export async function putOutboxItem(outbox: ProducerConfig, spec: OutboxItemSpec): Promise<string> {
  const type = spec.type ?? 'OrderPlaced';
  const body = JSON.stringify(envelopeObject({ id: spec.id, type, time: new Date(spec.timeMs).toISOString(), ...(spec.data === undefined ? {} : { data: spec.data }) }));
  const key = outboxKeyValue(spec.id);
  const expiryBaseMs = spec.writtenAtMs ?? spec.timeMs;
  await DynamoDBDocumentClient.from(localClient()).send(
    new PutCommand({
      TableName: outbox.outboxTableName,
      Item: {
        [outbox.partitionKeyName]: key,
        ...(outbox.sortKeyName === undefined ? {} : { [outbox.sortKeyName]: key }),
        [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: spec.recordType ?? OUTBOX_ITEM.RECORD_TYPE_VALUE,
        [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: body,
        [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: spec.id,
        [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: type,
        ...(spec.writtenAtMs === undefined ? {} : { [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: spec.writtenAtMs }),
        ...(spec.expiry === undefined ? {} : { [spec.expiry.attribute]: Math.floor(expiryBaseMs / 1000) + spec.expiry.retentionDays * 86_400 }),
      },
    }),
  );
  return body;
}
