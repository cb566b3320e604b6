/**
 * The operator's view of blocked messages (lease and multi-step modes): list them from the sparse `BlockedMessages`
 * index, read one, and resolve its blocked step as SUCCESS or TRY_AGAIN. After resolving, redrive the message from the
 * dead-letter queue (SQS DLQ redrive); the next delivery resumes where the record says.
 */
import { GetCommand, QueryCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { EventFlowError } from '../../lambda/errors';
import { mergeContext } from '../../lambda/processing/processing-context';
import { parseProcessingRecord, type ProcessingRecordView, type Resolution, type StepState } from '../../lambda/processing/processing-record';
import { truncate } from '../../lambda/processing/blocked-attributes';
import { failedConditionRecord, isItemTooLarge, setRemoveExpression } from '../../lambda/processing/record-writes';
import { isConditionalCheckFailed } from '../../lambda/transaction/cancellation';
import { toDocumentClient, type DynamoDBClientLike } from '../../lambda/transaction/document-client';
import { PROCESSING_RECORD as A, RECORD_STATUS, recordKey, STEP_STATUS, TABLE_SCHEMA } from '../../lambda/contract/wire-format';

/** The deduplication window restored on a record that does not carry its own (written by an older runtime): 30 days. */
export const DEFAULT_DEDUPLICATION_WINDOW_SECONDS = 30 * 24 * 60 * 60;

/** How many operator resolutions a record keeps (the oldest are dropped). */
export const MAX_RESOLUTIONS = 20;

/** Longest reason (and `resolvedBy`) kept in an audit entry, in characters. */
export const MAX_RESOLUTION_TEXT_CHARACTERS = 1024;

/** How many blocked messages {@link BlockedMessages.list} returns when no limit is given. */
export const DEFAULT_LIST_LIMIT = 100;

/** One blocked message, as listed. */
export interface BlockedMessage {
  readonly subscriber: string;
  readonly eventId: string;
  readonly eventType?: string;
  /** The step whose outcome is unknown (`effect` in lease mode). */
  readonly step?: string;
  /** When it was blocked (ISO-8601). */
  readonly blockedAt: string;
  readonly reason: string;
  /** Pass as `expectedVersion` to resolve exactly what was seen. */
  readonly version: number;
  /** `lease` or `multi-step`. */
  readonly mode?: string;
}

/**
 * Whether resolving `step` of `record` as `status` leaves steps to run (the record becomes IN_PROGRESS and a delivery
 * must come to run them), or completes it.
 */
export function stepsRemainAfter(record: ProcessingRecordView, step: string, status: typeof STEP_STATUS.SUCCESS | typeof STEP_STATUS.TRY_AGAIN): boolean {
  return record.stepOrder.some((name) => (name === step ? status : record.steps[name]?.status) !== STEP_STATUS.SUCCESS);
}

/** Options of {@link BlockedMessages}. */
export interface BlockedMessagesOptions {
  readonly client: DynamoDBClientLike;
  /** The inbox table holding the processing records (it must have the `BlockedMessages` index). */
  readonly tableName: string;
  /** The clock for timestamps and the restored TTL. @default the system clock */
  readonly now?: () => Date;
}

/** What {@link BlockedMessages.list} lists. */
export interface ListBlockedMessagesOptions {
  /** Only this subscriber's blocked messages (a Query). @default every subscriber's (a Scan of the sparse index) */
  readonly subscriber?: string;
  /** @default 100 */
  readonly limit?: number;
}

/** An operator's decision on a blocked step. */
export interface ResolveBlockedMessageInput {
  readonly subscriber: string;
  readonly eventId: string;
  /** The blocked step (`effect` in lease mode). */
  readonly step: string;
  /** `SUCCESS`: it took effect, never run it again; `TRY_AGAIN`: it did not, run it on the next delivery. */
  readonly status: 'SUCCESS' | 'TRY_AGAIN';
  /** Merged into the record's context, e.g. the invoice id the step created. @default nothing merged */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Why, for the audit entry. @default no reason recorded */
  readonly reason?: string;
  /** Who, for the audit entry. @default 'operator' */
  readonly resolvedBy?: string;
  /** Refuse unless the record is at this version (as listed or shown). @default the version read just before */
  readonly expectedVersion?: number;
}

/** Why a resolution was refused. */
export type ResolveRefusal = 'not-found' | 'not-blocked' | 'wrong-step' | 'version-mismatch' | 'concurrent-change';

/** An operator command that was refused; nothing was written. */
export class ResolveRefusedError extends EventFlowError {
  public readonly refusal: ResolveRefusal;

  public constructor(message: string, refusal: ResolveRefusal) {
    super(message);
    this.name = 'ResolveRefusedError';
    this.refusal = refusal;
  }
}

function toBlockedMessage(record: ProcessingRecordView): BlockedMessage {
  return {
    subscriber: record.blocked?.subscriber ?? record.subscriber,
    eventId: record.eventId,
    blockedAt: record.blocked?.at ?? '',
    reason: record.blocked?.reason ?? '',
    version: record.version,
    ...(record.eventType !== undefined ? { eventType: record.eventType } : {}),
    ...(record.activeStep !== undefined ? { step: record.activeStep } : {}),
    ...(record.mode !== undefined ? { mode: record.mode } : {}),
  };
}

/** Lists, shows and resolves blocked messages in one inbox table. */
export class BlockedMessages {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly now: () => Date;

  public constructor(options: BlockedMessagesOptions) {
    this.client = toDocumentClient(options.client);
    this.tableName = options.tableName;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The blocked messages, oldest first. Reads the sparse `BlockedMessages` index, which is eventually consistent: a
   * message blocked a moment ago may show up a moment later.
   */
  public async list(options: ListBlockedMessagesOptions = {}): Promise<BlockedMessage[]> {
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit <= 0) throw new RangeError(`limit must be a positive whole number, but ${limit} was given`);
    const records: ProcessingRecordView[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page =
        options.subscriber === undefined
          ? await this.client.send(new ScanCommand({ TableName: this.tableName, IndexName: A.BLOCKED_INDEX_NAME, ExclusiveStartKey: startKey }))
          : await this.client.send(
              new QueryCommand({
                TableName: this.tableName,
                IndexName: A.BLOCKED_INDEX_NAME,
                KeyConditionExpression: '#blockedSubscriber = :subscriber',
                ExpressionAttributeNames: { '#blockedSubscriber': A.BLOCKED_SUBSCRIBER_ATTRIBUTE },
                ExpressionAttributeValues: { ':subscriber': options.subscriber },
                Limit: limit - records.length,
                ExclusiveStartKey: startKey,
              }),
            );
      for (const item of page.Items ?? []) records.push(parseProcessingRecord(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined && (options.subscriber === undefined || records.length < limit));
    return records
      .map(toBlockedMessage)
      .sort((a, b) => (a.blockedAt < b.blockedAt ? -1 : a.blockedAt > b.blockedAt ? 1 : a.eventId < b.eventId ? -1 : 1))
      .slice(0, limit);
  }

  /** One message's processing record (a consistent read), or undefined when there is none. */
  public async get(subscriber: string, eventId: string): Promise<ProcessingRecordView | undefined> {
    const response = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) }, ConsistentRead: true }),
    );
    return response.Item === undefined ? undefined : parseProcessingRecord(response.Item);
  }

  /**
   * Resolves a blocked step: sets it to `status`, merges `context`, unblocks the record (IN_PROGRESS, or COMPLETED
   * when no step remains), releases any lease, restores the TTL and appends an audit entry. Conditioned on the
   * record still being blocked at that step and unchanged since it was read (and at `expectedVersion`, if given).
   * A lost response is recognised (the record carries this call's own `lastWrite`): the resolution is then returned,
   * not refused. Then redrive the message from the dead-letter queue.
   *
   * @throws ResolveRefusedError when the record is missing, not blocked, blocked at another step, or changed
   * @throws ProcessingContextError when `context` is not a plain object, holds a value that can not be stored, or makes
   * the context too large
   */
  public async resolve(input: ResolveBlockedMessageInput): Promise<ProcessingRecordView> {
    if (input.status !== STEP_STATUS.SUCCESS && input.status !== STEP_STATUS.TRY_AGAIN) {
      throw new RangeError(`status must be SUCCESS or TRY_AGAIN, but '${String(input.status)}' was given`);
    }
    const what = `event '${input.eventId}' of subscriber '${input.subscriber}'`;
    const record = await this.get(input.subscriber, input.eventId);
    if (record === undefined) throw new ResolveRefusedError(`${what} has no processing record in table '${this.tableName}'`, 'not-found');
    if (record.status !== RECORD_STATUS.BLOCKED) {
      throw new ResolveRefusedError(`${what} is not blocked (it is ${record.status}); only a blocked message can be resolved`, 'not-blocked');
    }
    const current = Object.hasOwn(record.steps, input.step) ? record.steps[input.step] : undefined;
    if (current?.status !== STEP_STATUS.PROCESSING) {
      const state = current === undefined ? `has no step '${input.step}' (steps: ${record.stepOrder.join(', ')})` : `step '${input.step}' is ${current.status}`;
      throw new ResolveRefusedError(`${what} ${state}; the blocked step is '${record.activeStep ?? '(unknown)'}'`, 'wrong-step');
    }
    if (input.expectedVersion !== undefined && input.expectedVersion !== record.version) {
      throw new ResolveRefusedError(`${what} is at version ${record.version}, not the expected ${input.expectedVersion}; look at it again`, 'version-mismatch');
    }
    const context = mergeContext(record.context, input.context, 'the operator context');
    const now = this.now();
    const at = now.toISOString();
    const steps: Record<string, StepState> = { ...record.steps, [input.step]: { ...current, status: input.status, updatedAt: at } };
    const remaining = stepsRemainAfter(record, input.step, input.status);
    const resolution: Resolution = {
      at,
      by: truncate(input.resolvedBy ?? 'operator', MAX_RESOLUTION_TEXT_CHARACTERS),
      step: input.step,
      status: input.status,
      ...(input.reason !== undefined ? { reason: truncate(input.reason, MAX_RESOLUTION_TEXT_CHARACTERS) } : {}),
    };
    const version = record.version + 1;
    // unique to this call, so a lost response is recognised as our own write and never as another operator's
    const lastWrite = `operator-${randomUUID()}:${version}`;
    const window = record.deduplicationWindowSeconds ?? DEFAULT_DEDUPLICATION_WINDOW_SECONDS;
    const set: Record<string, unknown> = {
      [A.STATUS_ATTRIBUTE]: remaining ? RECORD_STATUS.IN_PROGRESS : RECORD_STATUS.COMPLETED,
      [A.STEPS_ATTRIBUTE]: steps,
      [A.CONTEXT_ATTRIBUTE]: context,
      [A.VERSION_ATTRIBUTE]: version,
      [A.LAST_WRITE_ATTRIBUTE]: lastWrite,
      [A.UPDATED_AT_ATTRIBUTE]: at,
      [A.RESOLUTIONS_ATTRIBUTE]: [...record.resolutions, resolution].slice(-MAX_RESOLUTIONS),
      [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + window,
    };
    // IN_PROGRESS with an ended lease and no active step: the next delivery takes over at once
    if (remaining) set[A.LEASE_EXPIRES_AT_ATTRIBUTE] = 0;
    // a kept body stays while steps remain: it may be the message's only copy (its dead-letter send failed, or the
    // dead letter expired), and the next delivery needs one; the completing delivery removes it (issue 28, finding 1).
    // Should the record then exceed DynamoDB's item limit (a long audit list beside a large body), it is resolved
    // without the body, and the caller sends the copy it read (`record.blocked.body`): see the CLI's `blocked resolve`.
    const remove = (keepBody: boolean): string[] => [
      A.BLOCKED_SUBSCRIBER_ATTRIBUTE,
      A.BLOCKED_AT_ATTRIBUTE,
      A.BLOCKED_REASON_ATTRIBUTE,
      ...(keepBody ? [] : [A.BLOCKED_BODY_ATTRIBUTE]),
      A.BLOCKED_SQS_MESSAGE_ID_ATTRIBUTE,
      A.BLOCKED_DEAD_LETTER_SQS_MESSAGE_ID_ATTRIBUTE,
      A.BLOCKED_DEAD_LETTER_AT_ATTRIBUTE,
      A.OWNER_ATTRIBUTE,
      A.ACTIVE_STEP_ATTRIBUTE,
      ...(remaining ? [] : [A.LEASE_EXPIRES_AT_ATTRIBUTE]),
    ];
    const conditionNames: Record<string, string> = {
      '#status': A.STATUS_ATTRIBUTE,
      '#steps': A.STEPS_ATTRIBUTE,
      '#step': input.step,
      '#stepStatus': 'status',
      '#version': A.VERSION_ATTRIBUTE,
    };
    const conditionValues: Record<string, unknown> = { ':blocked': RECORD_STATUS.BLOCKED, ':processing': STEP_STATUS.PROCESSING, ':observedVersion': record.version };
    const write = async (keepBody: boolean): Promise<ProcessingRecordView> => {
      const update = setRemoveExpression(set, remove(keepBody));
      const response = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE_SCHEMA.PARTITION_KEY]: record.key },
          UpdateExpression: update.UpdateExpression,
          ConditionExpression: '#status = :blocked AND #steps.#step.#stepStatus = :processing AND #version = :observedVersion',
          ExpressionAttributeNames: { ...conditionNames, ...update.ExpressionAttributeNames },
          ExpressionAttributeValues: { ...conditionValues, ...update.ExpressionAttributeValues },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return parseProcessingRecord(response.Attributes ?? {});
    };
    const keepsBody = remaining && record.blocked?.body !== undefined;
    try {
      try {
        return await write(keepsBody);
      } catch (error) {
        if (!keepsBody || !isItemTooLarge(error)) throw error;
        return await write(false);
      }
    } catch (error) {
      // the response of an applied write may be lost (and the SDK's retry then fail the condition): recognise our own write
      const applied = await this.ownWrite(error, input, lastWrite);
      if (applied !== undefined) return applied;
      if (!isConditionalCheckFailed(error)) throw error;
      throw new ResolveRefusedError(`${what} changed while it was being resolved (it was at version ${record.version}); look at it again`, 'concurrent-change');
    }
  }

  /**
   * The record as our resolution wrote it, when the failed call was in fact applied: the item that failed the
   * condition (or, after any other error, the record read again) carries our `lastWrite`. Undefined otherwise.
   */
  private async ownWrite(error: unknown, input: ResolveBlockedMessageInput, lastWrite: string): Promise<ProcessingRecordView | undefined> {
    if (isConditionalCheckFailed(error)) {
      const current = failedConditionRecord(error);
      if (current !== undefined) return current.lastWrite === lastWrite ? current : undefined;
    }
    let current: ProcessingRecordView | undefined;
    try {
      current = await this.get(input.subscriber, input.eventId);
    } catch {
      return undefined;
    }
    return current?.lastWrite === lastWrite ? current : undefined;
  }
}
