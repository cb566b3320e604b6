/** The operator's view of a subscriber's sequence fences (docs/ORDERED-DELIVERY.md, "Operating"). */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toDocumentClient, type DynamoDBClientLike } from '../../lambda/transaction/document-client';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { SEQUENCE_FENCE, sequenceFenceKey } from '../../lambda/contract/ordered-wire-format';
import { recordSkip, type DroppedEvent } from '../../lambda/ordered/skipped-events';

/** Where a subscriber stands in one aggregate. */
export interface SequenceFenceState {
  readonly aggregateId: string;
  /** The last sequence applied (0: none yet). */
  readonly appliedSequence: number;
  readonly appliedEventId?: string;
  readonly appliedAt?: string;
  /** Set when an operator moved the fence past a gap on purpose. */
  readonly skippedReason?: string;
  /** The generation of the event applied (absent: 0), see `ORDERED_ENVELOPE.GENERATION_ATTRIBUTE`. */
  readonly appliedGeneration?: number;
}

/** Options of {@link SequenceFences}. */
export interface SequenceFencesOptions {
  readonly client: DynamoDBClientLike;
  /** The subscriber's inbox table, where its fences are. */
  readonly tableName: string;
  readonly subscriberName: string;
  /** @default the system clock */
  readonly now?: () => Date;
}

/** Reads a subscriber's fences, and moves one past a gap that an operator knows can never be filled. */
export class SequenceFences {
  private readonly client: DynamoDBDocumentClient;

  public constructor(private readonly options: SequenceFencesOptions) {
    this.client = toDocumentClient(options.client);
  }

  /** Where the subscriber stands in `aggregateId` (a strongly consistent read). */
  public async get(aggregateId: string): Promise<SequenceFenceState> {
    const item = (
      await this.client.send(
        new GetCommand({ TableName: this.options.tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: sequenceFenceKey(this.options.subscriberName, aggregateId) }, ConsistentRead: true }),
      )
    ).Item;
    const text = (attribute: string): string | undefined => (typeof item?.[attribute] === 'string' ? (item[attribute] as string) : undefined);
    const appliedEventId = text(SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE);
    const appliedAt = text(SEQUENCE_FENCE.APPLIED_AT_ATTRIBUTE);
    const skippedReason = text(SEQUENCE_FENCE.SKIPPED_REASON_ATTRIBUTE);
    return {
      aggregateId,
      appliedSequence: typeof item?.[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE] === 'number' ? (item[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE] as number) : 0,
      ...(appliedEventId === undefined ? {} : { appliedEventId }),
      ...(appliedAt === undefined ? {} : { appliedAt }),
      ...(skippedReason === undefined ? {} : { skippedReason }),
      ...(typeof item?.[SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE] === 'number' ? { appliedGeneration: item[SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE] as number } : {}),
    };
  }

  /**
   * Moves the fence of `aggregateId` from `fromSequence` (where the operator saw it) to `toSequence`, so the event after
   * `toSequence` applies next: for events that are lost for good (past every retention), decided by a person, with the
   * reason kept on the fence. Nothing of the skipped events is applied. Conditioned on the fence still standing at
   * `fromSequence`, so a fence that moved meanwhile is not skipped over. What it drops is kept first, beside the fence
   * (`<subscriber>@skipped#<aggregateId>`, with `dropped`: the events by id where known): such an event arriving later is
   * acknowledged unapplied with a WARN line naming this skip, not dead-lettered as a new event under a passed sequence.
   *
   * `generation`: the generation of the event at `toSequence` (the outbox head's, when `toSequence` is past its base),
   * written on the fence so the next event of that generation applies (review r38, R38-1); absent: the fence keeps its own.
   *
   * @throws RangeError unless fromSequence < toSequence are whole numbers and the reason is not empty
   * @throws ConditionalCheckFailedException (the SDK's) when the fence no longer stands at `fromSequence`
   */
  public async skipGap(aggregateId: string, fromSequence: number, toSequence: number, reason: string, dropped: readonly DroppedEvent[] = [], generation?: number): Promise<void> {
    if (!Number.isSafeInteger(fromSequence) || !Number.isSafeInteger(toSequence) || fromSequence < 0 || toSequence <= fromSequence) {
      throw new RangeError(`skipGap: fromSequence must be a whole number >= 0 and toSequence greater, but they were ${fromSequence} and ${toSequence}`);
    }
    if (reason.trim() === '') throw new RangeError('skipGap: a reason is required (it stays on the fence for the audit)');
    const now = (this.options.now ?? (() => new Date()))();
    const recorded = `skipped ${fromSequence + 1}..${toSequence}: ${reason}`;
    // kept before the fence moves: a skip record of a fence that did not move names events that will still apply, harmless
    await recordSkip(this.client, this.options.tableName, this.options.subscriberName, aggregateId, { from: fromSequence, to: toSequence, at: now.toISOString(), reason: recorded, dropped, ...(generation === undefined ? {} : { generation }) });
    await this.client.send(
      new UpdateCommand({
        TableName: this.options.tableName,
        Key: { [TABLE_SCHEMA.PARTITION_KEY]: sequenceFenceKey(this.options.subscriberName, aggregateId) },
        UpdateExpression: `SET #applied = :to, #type = :type, #subscriber = :subscriber, #aggregate = :aggregate, #at = :at, #reason = :reason${generation === undefined ? '' : ', #generation = :generation'} REMOVE #eventId`,
        ConditionExpression: fromSequence === 0 ? 'attribute_not_exists(#applied)' : '#applied = :from',
        ExpressionAttributeNames: {
          '#applied': SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE,
          '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE,
          '#subscriber': SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE,
          '#aggregate': SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE,
          '#at': SEQUENCE_FENCE.APPLIED_AT_ATTRIBUTE,
          '#reason': SEQUENCE_FENCE.SKIPPED_REASON_ATTRIBUTE,
          '#eventId': SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE,
          ...(generation === undefined ? {} : { '#generation': SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE }),
        },
        ExpressionAttributeValues: {
          ':to': toSequence,
          ':type': SEQUENCE_FENCE.RECORD_TYPE_VALUE,
          ':subscriber': this.options.subscriberName,
          ':aggregate': aggregateId,
          ':at': now.toISOString(),
          ':reason': recorded,
          ...(fromSequence === 0 ? {} : { ':from': fromSequence }),
          ...(generation === undefined ? {} : { ':generation': generation }),
        },
      }),
    );
  }
}
