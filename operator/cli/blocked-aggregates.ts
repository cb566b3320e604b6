/**
 * `fence list`: every aggregate an ordered subscriber is held up in (docs/ORDERED-DELIVERY.md, "Operating"), from its
 * dead-letter queue (planned against its fences, as a redrive would be) and, when given, the outbox's head items (the
 * last sequence each aggregate committed). An aggregate is listed when its next event is in the dead-letter queue,
 * when the dead-letter queue holds a later event but not the next (a gap), or when the outbox committed more than the
 * fence shows applied and no dead letter explains it (in flight, or lost); each with what to do.
 */
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import type { OrderedRedrivePlan } from '../ordered/redrive-plan';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanItems } from './scan-items';
import { unreadGapAdvice } from './dead-letters/ordered-sends';

/** One aggregate the subscriber is held up in. */
export interface BlockedAggregate {
  readonly aggregateId: string;
  /** The last sequence applied (0: none). */
  readonly appliedSequence: number;
  /** The last sequence the outbox committed, when the outbox was read. */
  readonly committedSequence?: number;
  /**
   * `dead-lettered`: the next event is in the dead-letter queue; `gap`: a later one is, the next is not (in flight, or
   * lost); `behind`: the outbox committed more, no dead letter of it (in flight, or lost).
   */
  readonly state: 'dead-lettered' | 'gap' | 'behind';
  /** Sequences of its dead letters after the fence. */
  readonly deadLetterSequences: readonly number[];
  /** Sequences after the fence no dead letter holds, before the highest one that does. */
  readonly missing: readonly number[];
  /** What to do. */
  readonly action: string;
}

/** The last committed sequence of each aggregate: the ordered outbox's head items (a Scan). */
export async function committedSequences(client: DynamoDBDocumentClient, outboxTable: string): Promise<Map<string, number>> {
  const heads = new Map<string, number>();
  const items = await scanItems(client, {
    TableName: outboxTable,
    // a head carried over by `outbox heads` (a restored or new table) holds the committed sequence too
    FilterExpression: '#type IN (:head, :carried)',
    ExpressionAttributeNames: { '#type': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE },
    ExpressionAttributeValues: { ':head': ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE, ':carried': ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE },
  });
  for (const item of items) heads.set(String(item[ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE]), Number(item[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]));
  return heads;
}

/**
 * What to do first about an aggregate held in an inbox table that was restored or copied and whose fences were not
 * carried: the events above its fence may have been applied in the table before (a replay would apply them twice, a
 * skip would drop them).
 */
export const UNCARRIED_INBOX_ADVICE =
  "the inbox table was restored or copied and its fences were not carried: first 'fence carry --from-table <the table it was restored from>' " +
  "(the subscriber may have applied these events there), or, when that table is gone, 'fence skip' each fence to what the subscriber's own state shows applied " +
  "and 'fence carry --accept-fences-as-applied --reason <text>'; then list again";

/**
 * The aggregates held up, by aggregate id: from the dead letters' plan, the fences read (`applied`, for every aggregate
 * of the plan and of `committed`) and the committed sequences (when the outbox was read). `unread`: letters of the
 * dead-letter queue the read did not read (a gap's sequence may be among them). @default 0
 * `uncarried`: the inbox table was restored or copied and its fences not carried: a gap or an aggregate behind is
 * advised {@link UNCARRIED_INBOX_ADVICE} first. @default false
 */
export function blockedAggregates(plan: OrderedRedrivePlan, applied: ReadonlyMap<string, number>, committed?: ReadonlyMap<string, number>, unread = 0, uncarried = false): BlockedAggregate[] {
  const aggregates = new Set([...plan.redrive.map((letter) => letter.aggregateId), ...(committed?.keys() ?? [])]);
  const blocked: BlockedAggregate[] = [];
  for (const aggregateId of [...aggregates].sort()) {
    const appliedSequence = applied.get(aggregateId) ?? 0;
    const committedSequence = committed?.get(aggregateId);
    const deadLetterSequences = [...new Set(plan.redrive.filter((letter) => letter.aggregateId === aggregateId).map((letter) => letter.sequence))];
    const missing = plan.gaps[aggregateId] ?? [];
    const shared = { aggregateId, appliedSequence, ...(committedSequence === undefined ? {} : { committedSequence }), deadLetterSequences, missing };
    if (deadLetterSequences.includes(appliedSequence + 1)) {
      blocked.push({ ...shared, state: 'dead-lettered', action: "fix the cause, then 'dlq redrive' (sends the run after the fence, in sequence)" });
    } else if (deadLetterSequences.length > 0) {
      // while letters were not read, the missing sequence may be among them: never advise the skip (review ro13, RO13-8)
      const action = uncarried
        ? `${UNCARRIED_INBOX_ADVICE} (sequence ${missing.join(', ')} missing)`
        : unread > 0
          ? unreadGapAdvice(missing, unread)
          : `sequence ${missing.join(', ')} in flight, or lost: 'fence replay' from the outbox history, or 'fence skip' if lost for good`;
      blocked.push({ ...shared, state: 'gap', action });
    } else if (committedSequence !== undefined && committedSequence > appliedSequence) {
      if (uncarried) blocked.push({ ...shared, state: 'behind', action: `${UNCARRIED_INBOX_ADVICE} (${committedSequence - appliedSequence} committed event(s) not applied here)` });
      else blocked.push({ ...shared, state: 'behind', action: `${committedSequence - appliedSequence} committed event(s) not applied and none dead-lettered: in flight (wait), or lost ('fence replay', which refuses while the inbox table may have been restored: applied in the table before, they would apply twice)` });
    }
  }
  return blocked;
}
