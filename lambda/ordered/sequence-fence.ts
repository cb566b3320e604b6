/**
 * A subscriber's sequence fence: one record per subscriber and aggregate holding the last sequence applied, written
 * in the same transaction as the event's business writes and inbox record. The write is conditioned on the fence
 * standing just before the event (absent for sequence 1), so an event is applied only as its aggregate's next one.
 */
import { PutCommand, type DynamoDBDocumentClient, type TransactWritePut } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../transaction/cancellation';
import { readItemConsistently } from '../transaction/consistent-item-read';
import { TABLE_SCHEMA } from '../contract/wire-format';
import { SequenceGapError, SequenceReusedError } from './ordered-errors';
import type { OrderedPosition } from './ordered-position';
import { SEQUENCE_FENCE, sequenceFenceKey } from '../contract/ordered-wire-format';

/** Condition of the fence Put of sequence 1: this subscriber has applied nothing of the aggregate. */
const FENCE_ABSENT = 'attribute_not_exists(#pk)';

/**
 * The condition of the fence Put of an event (generation G, base B, sequence n):
 * - in its generation (n > B + 1): the fence stands at n - 1 of generation G;
 * - the first event of a generation (n = B + 1): the fence stands at B (absent for B = 0) of an older generation, or
 *   at n - 1 of G itself (generation 0, the first head, has base 0: sequence 1 needs the fence absent).
 * An event of a generation older than the fence's is never applied; a new generation is entered only at its base, so
 * events of two histories (a table's in-flight events and a carried head's new ones) never apply on top of each other.
 */
function fenceCondition(position: OrderedPosition): Pick<TransactWritePut, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
  const { sequence, generation, generationBase } = position;
  // only names the expression uses: DynamoDB refuses an unused one
  const names = { '#applied': SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE, '#generation': SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE };
  const inGeneration = generation === 0 ? '(#applied = :previous AND attribute_not_exists(#generation))' : '(#applied = :previous AND #generation = :generation)';
  if (sequence !== generationBase + 1) {
    return { ConditionExpression: inGeneration, ExpressionAttributeNames: names, ExpressionAttributeValues: { ':previous': sequence - 1, ...(generation === 0 ? {} : { ':generation': generation }) } };
  }
  if (generation === 0) return { ConditionExpression: FENCE_ABSENT, ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY } };
  const entered = generationBase === 0 ? FENCE_ABSENT : '(#applied = :previous AND (attribute_not_exists(#generation) OR #generation < :generation))';
  return { ConditionExpression: entered, ExpressionAttributeNames: generationBase === 0 ? { '#pk': TABLE_SCHEMA.PARTITION_KEY } : names, ExpressionAttributeValues: generationBase === 0 ? undefined : { ':previous': sequence - 1, ':generation': generation } };
}

/**
 * Whether the fence condition of {@link fencePut} admits the event at `position` with the fence standing at
 * `fence` (its sequence, 0 when absent, and its generation): the same rule as the Put's condition, for the operator's
 * commands that choose, among a history's items, those the fence will take (an outbox that went back holds two
 * generations, or two events under one sequence).
 */
export function fenceAdmits(fence: { readonly appliedSequence: number; readonly appliedGeneration?: number }, position: Pick<OrderedPosition, 'sequence' | 'generation' | 'generationBase'>): boolean {
  const applied = fence.appliedSequence;
  const fenceGeneration = fence.appliedGeneration ?? 0;
  const { sequence, generation, generationBase } = position;
  if (sequence !== generationBase + 1) return applied === sequence - 1 && fenceGeneration === generation;
  if (generation === 0 || generationBase === 0) return applied === 0;
  return applied === sequence - 1 && fenceGeneration < generation;
}

/** The conditional Put that moves `subscriberName`'s fence of the event's aggregate to its sequence (and generation). */
export function fencePut(tableName: string, subscriberName: string, position: OrderedPosition, eventId: string, now: Date): TransactWritePut {
  const { aggregateId, sequence } = position;
  const condition = fenceCondition(position);
  return {
    TableName: tableName,
    Item: {
      [TABLE_SCHEMA.PARTITION_KEY]: sequenceFenceKey(subscriberName, aggregateId),
      [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: SEQUENCE_FENCE.RECORD_TYPE_VALUE,
      [SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE]: subscriberName,
      [SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE]: aggregateId,
      [SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE]: sequence,
      [SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE]: eventId,
      [SEQUENCE_FENCE.APPLIED_AT_ATTRIBUTE]: now.toISOString(),
      ...(position.generation === 0 ? {} : { [SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE]: position.generation }),
    },
    ConditionExpression: condition.ConditionExpression,
    ExpressionAttributeNames: condition.ExpressionAttributeNames,
    ...(condition.ExpressionAttributeValues === undefined ? {} : { ExpressionAttributeValues: condition.ExpressionAttributeValues }),
    // the fence comes back with a failed condition: where it stands decides duplicate or gap without a read
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/** A number attribute of a returned item, in the wire format (`{ N: '3' }`) or translated (`3`). */
function storedNumber(item: Readonly<Record<string, unknown>> | undefined, attribute: string): number | undefined {
  const value = item?.[attribute];
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { N?: unknown }).N === 'string') return Number((value as { N: string }).N);
  return undefined;
}

/** A string attribute of a returned item, in either format. */
function storedText(item: Readonly<Record<string, unknown>> | undefined, attribute: string): string | undefined {
  const value = item?.[attribute];
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return undefined;
}

/**
 * What a failed fence condition means, from the fence as it stood (`stored`, undefined when absent): `duplicate` when
 * the subscriber already applied this sequence (or a later one) of the aggregate.
 *
 * `neverApplied`: the same transaction found no inbox record of this event, and the event is younger than the
 * deduplication window (its inbox record would still be live had it been applied), so it was not applied. Then only
 * the fence holding this very event id proves it applied (an inbox record an operator forgot); an event at or below
 * the fence otherwise is a new event under a sequence already passed: the outbox's head went back.
 *
 * @throws SequenceGapError when the fence stands before an earlier sequence: the event must wait
 * @throws SequenceReusedError when this sequence was applied as another event, or `neverApplied` and the fence does
 *   not hold this event (dead-lettered, never acknowledged unapplied)
 */
export function fenceRefusal(stored: Readonly<Record<string, unknown>> | undefined, position: OrderedPosition, eventId: string, neverApplied = false): 'duplicate' {
  const applied = storedNumber(stored, SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE) ?? 0;
  const fenceGeneration = storedNumber(stored, SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE) ?? 0;
  if (fenceGeneration < position.generation) {
    // the fence is in an older generation: the event's generation is entered only with the fence at its base
    const base = position.generationBase;
    if (applied <= base) throw new SequenceGapError(position.aggregateId, applied + 1, position.sequence);
    // the older generation went past the base (events in flight from the old table were applied): two histories
    throw new SequenceReusedError(position.aggregateId, position.sequence, undefined, eventId, applied);
  }
  if (fenceGeneration > position.generation) {
    // an event of a generation the fence has left: applied long ago (a late copy) or an old table's in-flight event
    if (position.sequence <= applied && !neverApplied) return 'duplicate';
    throw new SequenceReusedError(position.aggregateId, position.sequence, undefined, eventId, applied);
  }
  if (applied < position.sequence) throw new SequenceGapError(position.aggregateId, applied + 1, position.sequence);
  const appliedEventId = storedText(stored, SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE);
  if (applied === position.sequence && appliedEventId !== undefined && appliedEventId !== eventId) {
    throw new SequenceReusedError(position.aggregateId, position.sequence, appliedEventId, eventId);
  }
  const fenceHoldsIt = applied === position.sequence && appliedEventId === eventId;
  if (neverApplied && !fenceHoldsIt) throw new SequenceReusedError(position.aggregateId, position.sequence, undefined, eventId, applied);
  return 'duplicate';
}

/**
 * Moves the fence past an event its subscriber applied already under another sequence (its inbox record is live), when
 * the fence stands right before the event's position: one conditional PutItem of the fence alone, under the same
 * condition as an application's. true when it moved; false when the fence stood at or past it (a copy of an event it
 * passed). Throws {@link SequenceGapError} when the fence stands before a gap below the position (retried: review r8b).
 * Only a duplicate the batch read did not answer comes here (a record at another sequence is left to this path).
 */
export async function passedByFence(client: DynamoDBDocumentClient, tableName: string, subscriberName: string, position: OrderedPosition, eventId: string, now: Date): Promise<boolean> {
  const { ReturnValuesOnConditionCheckFailure: _old, ...put } = fencePut(tableName, subscriberName, position, eventId, now);
  try {
    await client.send(new PutCommand(put));
    return true;
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
  // not passed: where the fence stands decides (review r8b, R8b-1). At or past this position, the delivery is a copy
  // of an event the fence holds or passed: a duplicate. Before it (a gap: the old table's in-flight events not yet
  // applied), acknowledging it would leave its position empty for good: the fence's own rule refuses it
  // (SequenceGapError, retried), and it is passed once the fence reaches it. A strongly consistent read, on this path only.
  // BatchGetItem, not GetItem: the permission an ordered consumer already has on its inbox table (its batch read)
  const key = { [TABLE_SCHEMA.PARTITION_KEY]: sequenceFenceKey(subscriberName, position.aggregateId) };
  const stored = await readItemConsistently(client, tableName, key, 'batch-get', `the sequence fence of aggregate '${position.aggregateId}'`);
  try {
    fenceRefusal(stored, position, eventId);
  } catch (refusal) {
    // only a gap holds it back; another history at this position is the applied event's own past: a duplicate, as before
    if (refusal instanceof SequenceGapError) throw refusal;
  }
  return false;
}
