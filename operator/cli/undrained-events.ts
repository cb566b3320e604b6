/**
 * What `outbox heads --from-fences` can see of the old table's events still in flight (docs/ORDERED-DELIVERY.md,
 * "Restoring the outbox table"): the events an outbox table committed past the head a carry from the fences leaves
 * their aggregate at. The fences know only what was applied, so such an event is in the old table's stream, a
 * subscriber queue or a dead-letter queue (or was lost), and the carry would hand its sequence out again: it and the
 * new event that takes its sequence race ({@link UNDRAINED_RACE_TEXT}). The runbook's precondition is that nothing is
 * in flight.
 */
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';

/** An ordered event an outbox table committed (past the head its aggregate is left at, when undrained). */
export interface UndrainedEvent {
  /** The outbox table that holds its item. */
  readonly table: string;
  readonly aggregateId: string;
  readonly sequence: number;
  /** @default undefined when the item has no event id */
  readonly eventId?: string;
}

/** An ordered event an outbox table committed, with the head's generation it was written on. */
export interface CommittedOrderedEvent extends UndrainedEvent {
  /** The generation its item holds (`ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE`); 0 when absent. */
  readonly generation: number;
}

/**
 * What becomes of an event a carry from the fences hands its sequence out again (`--allow-undrained`), as
 * docs/ORDERED-DELIVERY.md's known limits say: the warning and the usage build on it.
 */
export const UNDRAINED_RACE_TEXT =
  'each sequence is handed out again and races: a subscriber applies the one it receives first and dead-letters the other (SequenceReusedError), to be written again (step 5); ' +
  'with two or more ordered subscribers each may apply a different one, and their histories diverge';

/** Whether a DynamoDB error says the table does not exist. */
export function isMissingTable(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ResourceNotFoundException';
}

/**
 * The ordered events `table` holds (its history items, and its heads that hold an event), by aggregate and sequence,
 * one per event id. Strongly consistent.
 */
export async function committedOrderedEvents(client: DynamoDBDocumentClient, table: string): Promise<CommittedOrderedEvent[]> {
  const found = new Map<string, CommittedOrderedEvent>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        FilterExpression: '#type IN (:history, :head)',
        ExpressionAttributeNames: { '#type': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE },
        ExpressionAttributeValues: { ':history': ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE, ':head': ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    for (const item of page.Items ?? []) {
      const [aggregateId, sequence, eventId] = [item[ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE], item[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE], item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]];
      if (typeof aggregateId !== 'string' || typeof sequence !== 'number' || !Number.isSafeInteger(sequence)) continue;
      const id = typeof eventId === 'string' ? eventId : undefined;
      const generation = item[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE];
      found.set(`${aggregateId}\u0000${sequence}\u0000${id ?? ''}`, {
        table,
        aggregateId,
        sequence,
        ...(id === undefined ? {} : { eventId: id }),
        generation: typeof generation === 'number' && Number.isSafeInteger(generation) ? generation : 0,
      });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return [...found.values()].sort((a, b) => (a.aggregateId === b.aggregateId ? a.sequence - b.sequence : a.aggregateId < b.aggregateId ? -1 : 1));
}

/** How many undrained events a refusal names one by one (the rest are counted). */
const NAMED = 10;

/**
 * The refusal (or, with `--allow-undrained`, the warning) of `outbox heads --from-fences` when `events` are in flight:
 * what the carry waits for, and the ways on. Each event is named with its table: `outboxTable` (the one the carry
 * writes) is "this table", any other the old one. The ordered model and the tests build their expectation from it.
 */
export function undrainedText(events: readonly UndrainedEvent[], allowed: boolean, outboxTable: string): string {
  const named = events
    .slice(0, NAMED)
    .map((event) => `${event.aggregateId} #${event.sequence}${event.eventId === undefined ? '' : ` (${event.eventId})`} in ${event.table === outboxTable ? `this table ${event.table}` : `the old table ${event.table}`}`);
  const more = events.length > NAMED ? `, and ${events.length - NAMED} more` : '';
  const what = `${events.length} event(s) committed past the head a carry from the fences leaves their aggregate at, which no named fence has applied: ${named.join(', ')}${more}`;
  if (allowed) return `warning: --allow-undrained: carried with ${what}. ${UNDRAINED_RACE_TEXT.charAt(0).toUpperCase()}${UNDRAINED_RACE_TEXT.slice(1)}`;
  return (
    `refused: not drained: ${what}. They are in their table's stream, a subscriber queue or a dead-letter queue (or lost), and a carry from the fences ` +
    'would hand their sequences out again. Wait until the subscribers applied them (the queues drained, the dead letters redriven or written again), ' +
    'or carry from that table\'s history (--from-history --history-table <table>, with the subscribers named), or pass --allow-undrained to carry anyway'
  );
}
