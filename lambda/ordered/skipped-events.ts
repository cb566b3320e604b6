/**
 * What an operator's accepted `fence skip` dropped, kept beside the fence (issue 38): written by
 * `SequenceFences.skipGap` before the fence moves, read by the ordered consumer only when an event at or below the
 * fence has no inbox record although it is younger than the deduplication window (else a `SequenceReusedError`).
 */
import { BatchGetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contract/wire-format';
import { SEQUENCE_FENCE, SKIPPED_EVENTS, skippedEventsKey } from '../contract/ordered-wire-format';
import type { OrderedPosition } from './ordered-position';

/** One event a skip drops: its sequence, and its id when the outbox history still held it. */
export interface DroppedEvent {
  readonly sequence: number;
  readonly eventId?: string;
}

/** One skip as kept: the sequences (from, to] dropped, when, why, and the events it named. */
export interface SkipEntry {
  readonly from: number;
  readonly to: number;
  readonly at: string;
  readonly reason: string;
  readonly dropped: readonly DroppedEvent[];
  /** The generation the fence took at `to` (the outbox head's), when the skip passed a generation's base. */
  readonly generation?: number;
}

/** Appends `entry` to the subscriber's skip record of `aggregateId` (created on the first skip; it never expires). */
export async function recordSkip(client: DynamoDBDocumentClient, tableName: string, subscriberName: string, aggregateId: string, entry: SkipEntry): Promise<void> {
  await client.send(
    new UpdateCommand({
      TableName: tableName,
      Key: { [TABLE_SCHEMA.PARTITION_KEY]: skippedEventsKey(subscriberName, aggregateId) },
      UpdateExpression: 'SET #type = :type, #subscriber = :subscriber, #aggregate = :aggregate, #skips = list_append(if_not_exists(#skips, :none), :entry)',
      ExpressionAttributeNames: {
        '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE,
        '#subscriber': SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE,
        '#aggregate': SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE,
        '#skips': SKIPPED_EVENTS.SKIPS_ATTRIBUTE,
      },
      ExpressionAttributeValues: {
        ':type': SKIPPED_EVENTS.RECORD_TYPE_VALUE,
        ':subscriber': subscriberName,
        ':aggregate': aggregateId,
        ':none': [],
        ':entry': [{ ...entry, dropped: entry.dropped.map((drop) => ({ ...drop })) }],
      },
    }),
  );
}

/**
 * The skip that dropped this event, if one did: a skip whose range holds its sequence and that named this event id
 * there; or, where the skip could not name the event (its history item had expired), one made after the runtime wrote
 * the event (`writtenAt`, the envelope's `iefwrittenat`; a skip is refused past the outbox's head, so what it dropped
 * was written before it). Never by the producer-given `time`, which a producer may backdate (review r38, R38-4); an
 * event without a write time matches no unnamed sequence (dead-lettered, not lost). An event a skip named by another
 * id is a new event under that sequence (the heads went back after the skip): undefined.
 */
export async function findSkip(
  client: DynamoDBDocumentClient,
  tableName: string,
  subscriberName: string,
  position: OrderedPosition,
  eventId: string,
  writtenAt: number | undefined,
): Promise<SkipEntry | undefined> {
  const key = { [TABLE_SCHEMA.PARTITION_KEY]: skippedEventsKey(subscriberName, position.aggregateId) };
  // BatchGetItem: the permission a transactional consumer has on its inbox table (its batch read)
  const response = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: [key], ConsistentRead: true } } }));
  const skips = (response.Responses?.[tableName]?.[0]?.[SKIPPED_EVENTS.SKIPS_ATTRIBUTE] as SkipEntry[] | undefined) ?? [];
  return skips.find((skip) => {
    if (!(Number(skip.from) < position.sequence && position.sequence <= Number(skip.to))) return false;
    const named = (skip.dropped ?? []).find((drop) => Number(drop.sequence) === position.sequence)?.eventId;
    if (named !== undefined) return named === eventId;
    return writtenAt !== undefined && writtenAt <= Date.parse(skip.at);
  });
}
