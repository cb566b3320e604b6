/**
 * The processing record's writes: the claim on delivery, the takeover of a released or expired record, and the
 * owner-fenced writes of the holder (advance, release, block). Every write increments `version` and stamps
 * `lastWrite` = `<owner>:<version>`, so a writer whose response was lost recognises its own applied write.
 */
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS, type ProcessingModeName } from '../contract/environment';
import { assertInboxKeyFits, claimCondition } from '../consumer/inbox';
import type { SQSRecord } from '../consumer/sqs';
import type { EventEnvelope } from '../envelope';
import { LeaseLostError, MessageInProgressError } from '../errors';
import { isConditionalCheckFailed } from '../transaction/cancellation';
import { INBOX_ITEM, PROCESSING_RECORD as A, RECORD_STATUS, recordKey, STEP_STATUS, TABLE_SCHEMA } from '../contract/wire-format';
import type { ClaimResult, HeldRecord } from './held-record';
import { parseProcessingRecord, type ProcessingRecordView, type StepState } from './processing-record';
import { blockedAttributes, blockedRemovals } from './blocked-attributes';
import {
  describeRecord,
  HELD_BY_ME,
  isItemTooLarge,
  unchangedInProgressAndLeaseOver,
  sendConditionalWrite,
  updateParts,
  type Item,
  type Write,
  type WriteResult,
} from './record-writes';

export { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS };

/** Options of {@link ProcessingRecordStore}. */
export interface ProcessingRecordStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly subscriberName: string;
  readonly deduplicationWindowSeconds: number;
  readonly leaseDurationSeconds: number;
  /**
   * How far apart the clocks of two instances may be: a lease counts as live until its expiry plus this allowance.
   * @default DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS (5)
   */
  readonly clockSkewAllowanceSeconds?: number;
  /** Whether a blocked message's body is kept on its record. @default false */
  readonly keepBlockedBody?: boolean;
  readonly mode: ProcessingModeName;
  readonly now: () => Date;
}

/** Reads and writes the processing records of one subscriber. */
export class ProcessingRecordStore {
  private readonly skewAllowanceMilliseconds: number;

  public constructor(private readonly options: ProcessingRecordStoreOptions) {
    this.skewAllowanceMilliseconds = (options.clockSkewAllowanceSeconds ?? DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS) * 1000;
  }

  /**
   * Whether `record`'s lease is live at this instance's now: until its expiry plus the clock-skew allowance, since the
   * holder's clock may be behind this one's.
   */
  public isLeaseLive(record: ProcessingRecordView): boolean {
    return record.leaseExpiresAtEpochMilliseconds + this.skewAllowanceMilliseconds > this.options.now().getTime();
  }

  /** The clock-skew allowance, in seconds. */
  public get clockSkewAllowanceSeconds(): number {
    return this.skewAllowanceMilliseconds / 1000;
  }

  /** The partition key value of an event's record. */
  public key(eventId: string): string {
    return recordKey(this.options.subscriberName, eventId);
  }

  /** A consistent read of an event's record. */
  public async read(key: string): Promise<ProcessingRecordView | undefined> {
    const response = await this.options.client.send(
      new GetCommand({ TableName: this.options.tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: key }, ConsistentRead: true }),
    );
    return response.Item === undefined ? undefined : parseProcessingRecord(response.Item);
  }

  /**
   * Claims the message: one conditional PutItem that creates the record IN_PROGRESS, owned by `owner` under a fresh
   * lease, with the first step already PROCESSING. Fails (returning the existing record) when a live record exists.
   */
  public async claim(envelope: EventEnvelope<unknown>, fingerprint: string, owner: string, stepOrder: readonly string[]): Promise<ClaimResult> {
    const now = this.options.now();
    const updatedAt = now.toISOString();
    const key = this.key(envelope.id);
    // DynamoDB would refuse every claim (and the read after it): no retry can help, so dead-letter it with the reason
    assertInboxKeyFits(this.options.subscriberName, envelope.id, key);
    const [first] = stepOrder;
    const steps: Record<string, StepState> = {};
    for (const name of stepOrder) {
      steps[name] = name === first ? { status: STEP_STATUS.PROCESSING, attempts: 1, updatedAt } : { status: STEP_STATUS.PENDING, attempts: 0, updatedAt };
    }
    const leaseExpiresAtEpochMilliseconds = this.leaseFrom(now);
    const lastWrite = `${owner}:1`;
    const item: Item = {
      [TABLE_SCHEMA.PARTITION_KEY]: key,
      [A.RECORD_TYPE_ATTRIBUTE]: A.RECORD_TYPE_VALUE,
      [A.MODE_ATTRIBUTE]: this.options.mode,
      [INBOX_ITEM.EVENT_ID_ATTRIBUTE]: envelope.id,
      [INBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: envelope.type,
      [INBOX_ITEM.SUBSCRIBER_ATTRIBUTE]: this.options.subscriberName,
      [INBOX_ITEM.FINGERPRINT_ATTRIBUTE]: fingerprint,
      [A.STATUS_ATTRIBUTE]: RECORD_STATUS.IN_PROGRESS,
      [A.OWNER_ATTRIBUTE]: owner,
      [A.LEASE_EXPIRES_AT_ATTRIBUTE]: leaseExpiresAtEpochMilliseconds,
      [A.ACTIVE_STEP_ATTRIBUTE]: first,
      [A.STEP_ORDER_ATTRIBUTE]: [...stepOrder],
      [A.STEPS_ATTRIBUTE]: steps,
      [A.CONTEXT_ATTRIBUTE]: {},
      [A.VERSION_ATTRIBUTE]: 1,
      [A.LAST_WRITE_ATTRIBUTE]: lastWrite,
      [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: this.expiresAtFrom(now, leaseExpiresAtEpochMilliseconds),
      [A.DEDUPLICATION_WINDOW_SECONDS_ATTRIBUTE]: this.options.deduplicationWindowSeconds,
      [A.CREATED_AT_ATTRIBUTE]: updatedAt,
      [A.UPDATED_AT_ATTRIBUTE]: updatedAt,
    };
    const result = await sendConditionalWrite(
      this.options.client,
      new PutCommand({
        TableName: this.options.tableName,
        Item: item,
        // the inbox record's claim: a live record of either kind (a blocked record has no TTL) makes it fail
        ...claimCondition(now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      lastWrite,
      () => this.read(key),
    );
    if (!result.applied) return { claimed: false, ...(result.current !== undefined ? { existing: result.current } : {}) };
    return {
      claimed: true,
      held: { key, eventId: envelope.id, owner, version: 1, stepOrder, steps, context: {}, activeStep: first, leaseExpiresAtEpochMilliseconds },
    };
  }

  /**
   * Takes over an IN_PROGRESS record whose lease is over: new owner and lease, and the next step that is not SUCCESS
   * (or, with `rerunActiveStep`, the step that was PROCESSING) marked PROCESSING. Conditioned on the version and last
   * write read, so of two deliveries only one takes over, and none takes over a record claimed afresh since. When no
   * step remains, the record is completed instead.
   *
   * The record keeps the step list it was claimed with (`existing.stepOrder`), whatever the deployed handler's steps
   * are now: a step added by a later deploy does not run for a message in flight, and a step it removed is not
   * skipped (the engine blocks the message when it reaches a step it does not have).
   *
   * @throws MessageInProgressError when another writer changed the record first
   */
  public async takeOver(existing: ProcessingRecordView, owner: string, rerunActiveStep: boolean): Promise<HeldRecord> {
    const { stepOrder } = existing;
    const now = this.options.now();
    const updatedAt = now.toISOString();
    const steps: Record<string, StepState> = {};
    for (const name of stepOrder) steps[name] = existing.steps[name] ?? { status: STEP_STATUS.PENDING, attempts: 0, updatedAt };
    const rerun = rerunActiveStep && existing.activeStep !== undefined && stepOrder.includes(existing.activeStep) ? existing.activeStep : undefined;
    const next = rerun ?? stepOrder.find((name) => steps[name]?.status !== STEP_STATUS.SUCCESS);
    const version = existing.version + 1;
    const lastWrite = `${owner}:${version}`;
    const leaseExpiresAtEpochMilliseconds = this.leaseFrom(now);
    const common: Item = {
      // written back as read: a record from a writer that kept no list gets the one derived from its steps
      [A.STEP_ORDER_ATTRIBUTE]: [...stepOrder],
      [A.VERSION_ATTRIBUTE]: version,
      [A.LAST_WRITE_ATTRIBUTE]: lastWrite,
      [A.UPDATED_AT_ATTRIBUTE]: updatedAt,
      [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: this.expiresAtFrom(now, next === undefined ? 0 : leaseExpiresAtEpochMilliseconds),
    };
    let write: Write;
    if (next === undefined) {
      write = {
        set: { ...common, [A.STEPS_ATTRIBUTE]: steps, [A.STATUS_ATTRIBUTE]: RECORD_STATUS.COMPLETED },
        remove: [A.OWNER_ATTRIBUTE, A.ACTIVE_STEP_ATTRIBUTE, A.LEASE_EXPIRES_AT_ATTRIBUTE],
        ...unchangedInProgressAndLeaseOver(existing, this.leaseOverBy(now)),
      };
    } else {
      const previous = steps[next] as StepState;
      steps[next] = { status: STEP_STATUS.PROCESSING, attempts: previous.attempts + 1, updatedAt };
      write = {
        set: {
          ...common,
          [A.STEPS_ATTRIBUTE]: steps,
          [A.OWNER_ATTRIBUTE]: owner,
          [A.LEASE_EXPIRES_AT_ATTRIBUTE]: leaseExpiresAtEpochMilliseconds,
          [A.ACTIVE_STEP_ATTRIBUTE]: next,
        },
        remove: [],
        ...unchangedInProgressAndLeaseOver(existing, this.leaseOverBy(now)),
      };
    }
    const result = await this.update(existing.key, write, lastWrite);
    if (!result.applied) {
      throw new MessageInProgressError(
        `event '${existing.eventId}' could not be taken over: another delivery changed it first, or its lease is still live ` +
          `(clock-skew allowance included) (${describeRecord(result.current)})`,
        {
        eventId: existing.eventId,
          leaseExpiresAtEpochMilliseconds: result.current?.leaseExpiresAtEpochMilliseconds ?? 0,
        },
      );
    }
    return {
      key: existing.key,
      eventId: existing.eventId,
      owner,
      version,
      stepOrder,
      steps,
      context: existing.context,
      ...(next !== undefined ? { activeStep: next } : {}),
      leaseExpiresAtEpochMilliseconds,
    };
  }

  /**
   * The holder's one write after step `step` succeeded: the step becomes SUCCESS and `context` is stored; then either
   * `next` becomes PROCESSING under a renewed lease, or (no `next`) the record is COMPLETED, its owner, active step and
   * lease removed and its TTL refreshed.
   *
   * @throws LeaseLostError when this delivery no longer holds the record
   */
  public async advance(held: HeldRecord, step: string, context: Readonly<Record<string, unknown>>, next: string | undefined): Promise<HeldRecord> {
    const now = this.options.now();
    const updatedAt = now.toISOString();
    const steps: Record<string, StepState> = { ...held.steps };
    const done = steps[step] ?? { status: STEP_STATUS.PROCESSING, attempts: 1, updatedAt };
    steps[step] = { ...done, status: STEP_STATUS.SUCCESS, updatedAt };
    const leaseExpiresAtEpochMilliseconds = next === undefined ? 0 : this.leaseFrom(now);
    const set: Item = {
      [A.STEPS_ATTRIBUTE]: steps,
      [A.CONTEXT_ATTRIBUTE]: context,
      [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: this.expiresAtFrom(now, leaseExpiresAtEpochMilliseconds),
    };
    let remove: string[] = [];
    if (next === undefined) {
      set[A.STATUS_ATTRIBUTE] = RECORD_STATUS.COMPLETED;
      // a body an operator's resolve kept (the message's only copy, maybe) has done its job once the record completes
      remove = [A.OWNER_ATTRIBUTE, A.ACTIVE_STEP_ATTRIBUTE, A.LEASE_EXPIRES_AT_ATTRIBUTE, A.BLOCKED_BODY_ATTRIBUTE];
    } else {
      const previous = steps[next] ?? { status: STEP_STATUS.PENDING, attempts: 0, updatedAt };
      steps[next] = { status: STEP_STATUS.PROCESSING, attempts: previous.attempts + 1, updatedAt };
      set[A.ACTIVE_STEP_ATTRIBUTE] = next;
      set[A.LEASE_EXPIRES_AT_ATTRIBUTE] = leaseExpiresAtEpochMilliseconds;
    }
    const version = await this.fencedUpdate(held, set, remove, `recording the success of step '${step}'`);
    const { activeStep: _previousStep, ...rest } = held;
    return { ...rest, version, steps, context, ...(next !== undefined ? { activeStep: next } : {}), leaseExpiresAtEpochMilliseconds };
  }

  /**
   * The holder gives the record up after step `step` failed without taking effect: the step becomes TRY_AGAIN, the
   * active step and owner are removed and the lease ends now, so the next delivery proceeds at once.
   *
   * @throws LeaseLostError when this delivery no longer holds the record
   */
  public async release(held: HeldRecord, step: string): Promise<void> {
    const updatedAt = this.options.now().toISOString();
    const steps: Record<string, StepState> = { ...held.steps };
    const failed = steps[step] ?? { status: STEP_STATUS.PROCESSING, attempts: 1, updatedAt };
    steps[step] = { ...failed, status: STEP_STATUS.TRY_AGAIN, updatedAt };
    await this.fencedUpdate(
      held,
      { [A.STEPS_ATTRIBUTE]: steps, [A.LEASE_EXPIRES_AT_ATTRIBUTE]: 0 },
      [A.OWNER_ATTRIBUTE, A.ACTIVE_STEP_ATTRIBUTE],
      `releasing the lease after step '${step}' failed`,
    );
  }

  /**
   * The holder blocks the record for an operator: step `step` stays PROCESSING (its outcome is unknown), the record
   * becomes BLOCKED with the reason, the delivery's SQS message id and (if kept) its body, and its TTL is removed so it
   * can never expire unseen. When the body would take the record over DynamoDB's item limit, the record is blocked
   * without it. Returns the record's new version.
   *
   * @throws LeaseLostError when this delivery no longer holds the record
   */
  public async blockHeld(held: HeldRecord, reason: string, delivery: SQSRecord): Promise<number> {
    return this.withoutBodyIfTooLarge((keepBody) =>
      this.fencedUpdate(held, blockedAttributes(this.options.subscriberName, this.options.now().toISOString(), reason, delivery, keepBody), blockedRemovals(delivery.body, keepBody), 'blocking the message'),
    );
  }

  /**
   * Blocks a record whose holder's lease expired in the middle of a step, on behalf of delivery `owner`. Conditioned
   * on the version and last write read, and on the lease being over (clock-skew allowance included). When the body would take the record over DynamoDB's item limit, the record is
   * blocked without it.
   *
   * @returns false when another writer changed the record first (nothing written)
   */
  public async blockExpired(existing: ProcessingRecordView, owner: string, reason: string, delivery: SQSRecord): Promise<boolean> {
    const version = existing.version + 1;
    const lastWrite = `${owner}:${version}`;
    const result = await this.withoutBodyIfTooLarge((keepBody) =>
      this.update(
        existing.key,
        {
          set: { ...blockedAttributes(this.options.subscriberName, this.options.now().toISOString(), reason, delivery, keepBody), [A.VERSION_ATTRIBUTE]: version, [A.LAST_WRITE_ATTRIBUTE]: lastWrite },
          remove: blockedRemovals(delivery.body, keepBody),
          ...unchangedInProgressAndLeaseOver(existing, this.leaseOverBy(this.options.now())),
        },
        lastWrite,
      ),
    );
    return result.applied;
  }

  /**
   * Records that the dead letter of the blocked message was sent by delivery `sqsMessageId` (the send succeeded), so a
   * later copy of the message can be acknowledged as already-blocked: the dead-letter queue holds the message. Written
   * only while the record is still BLOCKED at `recordVersion` (the version the block was decided on), so it never
   * lands on a record an operator resolved (and maybe blocked again) since. Neither the version nor the last write
   * changes: this is a note on the block, not a change of state, and an operator's resolve of the version they saw
   * still goes through.
   *
   * @returns false when the record is no longer that block (nothing written)
   */
  public async recordBlockedDeadLetter(eventId: string, sqsMessageId: string, recordVersion?: number): Promise<boolean> {
    const versionCondition = recordVersion === undefined ? '' : ' AND #version = :version';
    try {
      await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { [TABLE_SCHEMA.PARTITION_KEY]: this.key(eventId) },
          UpdateExpression: 'SET #deadLetter = :sqsMessageId, #deadLetterAt = :at',
          ConditionExpression: `#status = :blocked${versionCondition}`,
          ExpressionAttributeNames: {
            '#deadLetter': A.BLOCKED_DEAD_LETTER_SQS_MESSAGE_ID_ATTRIBUTE,
            '#deadLetterAt': A.BLOCKED_DEAD_LETTER_AT_ATTRIBUTE,
            '#status': A.STATUS_ATTRIBUTE,
            ...(recordVersion === undefined ? {} : { '#version': A.VERSION_ATTRIBUTE }),
          },
          ExpressionAttributeValues: {
            ':sqsMessageId': sqsMessageId,
            ':at': this.options.now().toISOString(),
            ':blocked': RECORD_STATUS.BLOCKED,
            ...(recordVersion === undefined ? {} : { ':version': recordVersion }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * Runs a block write with the body kept; if DynamoDB refuses it because the record would exceed the item limit
   * (nothing written), runs it again without the body (the dead-letter queue has the message anyway).
   */
  private async withoutBodyIfTooLarge<T>(write: (keepBody: boolean) => Promise<T>): Promise<T> {
    // kept only by explicit choice: by default the dead-letter queue is the one place the payload is
    if (this.options.keepBlockedBody !== true) return write(false);
    try {
      return await write(true);
    } catch (error) {
      if (!isItemTooLarge(error)) throw error;
      return write(false);
    }
  }

  /** A write of the holder, conditioned on its ownership and the version it last wrote; returns the new version. */
  private async fencedUpdate(held: HeldRecord, set: Item, remove: readonly string[], what: string): Promise<number> {
    const version = held.version + 1;
    const lastWrite = `${held.owner}:${version}`;
    const result = await this.update(
      held.key,
      {
        set: { ...set, [A.VERSION_ATTRIBUTE]: version, [A.LAST_WRITE_ATTRIBUTE]: lastWrite, [A.UPDATED_AT_ATTRIBUTE]: this.options.now().toISOString() },
        remove,
        condition: HELD_BY_ME,
        conditionValues: { ':owner': held.owner, ':observedVersion': held.version },
      },
      lastWrite,
    );
    if (!result.applied) {
      throw new LeaseLostError(
        `${what} failed: event '${held.eventId}' is no longer held by this delivery (expected version ${held.version} owned by '${held.owner}', ` +
          `but ${describeRecord(result.current)}); this delivery stops without writing`,
        { eventId: held.eventId },
      );
    }
    return version;
  }

  private update(key: string, write: Write, expectedLastWrite: string): Promise<WriteResult> {
    return sendConditionalWrite(
      this.options.client,
      new UpdateCommand({
        TableName: this.options.tableName,
        Key: { [TABLE_SCHEMA.PARTITION_KEY]: key },
        ConditionExpression: write.condition,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...updateParts(write),
      }),
      expectedLastWrite,
      () => this.read(key),
    );
  }

  /** The latest lease expiry that is over at `now`, clock-skew allowance included (epoch milliseconds). */
  private leaseOverBy(now: Date): number {
    return now.getTime() - this.skewAllowanceMilliseconds;
  }

  private leaseFrom(now: Date): number {
    return now.getTime() + this.options.leaseDurationSeconds * 1000;
  }

  /**
   * The TTL (epoch seconds) of a write at `now`: the deduplication window from now, but never before the lease the
   * write grants ends, clock-skew allowance included (`leaseExpiresAtEpochMilliseconds`, 0 for none). A record whose
   * lease is live must not read as expired, or a concurrent delivery's claim would replace it and run the step in parallel.
   */
  private expiresAtFrom(now: Date, leaseExpiresAtEpochMilliseconds: number): number {
    const leaseOver = leaseExpiresAtEpochMilliseconds === 0 ? 0 : leaseExpiresAtEpochMilliseconds + this.skewAllowanceMilliseconds;
    return Math.max(Math.floor(now.getTime() / 1000) + this.options.deduplicationWindowSeconds, Math.ceil(leaseOver / 1000));
  }
}
