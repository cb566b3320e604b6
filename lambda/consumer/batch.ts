/** Iterates an SQS batch and builds the partial batch response. Pure: no AWS SDK. */
import type { InvocationBudget, RecordClock } from '../transaction/invocation-budget';
import type { SQSBatchResponse, SQSRecord } from './sqs';

/** What became of one SQS record (see the outcome table in docs/DESIGN.md). */
export type RecordOutcome =
  /** The transaction committed: acknowledged. */
  | 'processed'
  /** The inbox already held the event id: acknowledged, nothing applied. */
  | 'duplicate'
  /** Sent to the dead-letter queue with its reason: acknowledged. */
  | 'dead-lettered'
  /**
   * A step's (or a lease-protected effect's) outcome is unknown: the record is blocked for an operator and the message
   * is in the dead-letter queue with the reason: acknowledged.
   */
  | 'blocked'
  /**
   * Lease/multi-step: the record was already blocked for an operator by another delivery, whose dead letter holds the
   * message: acknowledged with no dead letter and no write.
   */
  | 'already-blocked'
  /** A FIFO message not attempted because an earlier message of its group failed in this batch: reported for retry. */
  | 'skipped'
  /** Anything else: reported in `batchItemFailures`, so SQS delivers it again. */
  | 'failed';

/**
 * Processes one record and says what became of it; should not throw (a throw counts as `failed`). `clock` is the
 * record's clock in the invocation's budget, when the batch has one.
 */
export type RecordProcessor<TRecord extends SQSRecord> = (record: TRecord, clock?: RecordClock) => Promise<RecordOutcome>;

/**
 * Runs one record's processing inside a scope of the caller's: an `AsyncLocalStorage` context that carries the record's
 * message id to a logger, a tracer's subsegment, a test's per-record clock. It must call `process` once and resolve
 * with what `process` resolves with. The scope covers the record's whole turn: the start check against the
 * invocation's time, the processing and the end of its clock.
 */
export type RecordScope = <T>(record: SQSRecord, process: () => Promise<T>) => Promise<T>;

/** Options of {@link processBatch}. */
export interface BatchOptions<TRecord extends SQSRecord> {
  /** Told about a processor that threw instead of returning `failed`. @default ignored */
  readonly onUnexpectedError?: (record: TRecord, error: unknown) => void;
  /** Told about each record skipped after an earlier failure in its FIFO message group. @default ignored */
  readonly onSkipped?: (record: TRecord, groupId: string) => void;
  /**
   * The invocation's time, shared by the batch: a record is only started while the budget allows it (see
   * invocation-budget.ts); one it refuses is not attempted and is reported as `failed`. @default records always start
   */
  readonly budget?: InvocationBudget;
  /** Told about each record not started because too little of the invocation's time was left. @default ignored */
  readonly onNotStarted?: (record: TRecord) => void;
  /** Told the outcome of every record, skipped ones included (for metrics). @default ignored */
  readonly onOutcome?: (record: TRecord, outcome: RecordOutcome) => void;
  /** How many records are processed at once (a whole number, at least 1). @default 1 - one after another */
  readonly concurrency?: number;
  /**
   * Records with the same lane run one after another, in batch order (e.g. two copies of one event, or two messages of
   * one aggregate), never at the same time. A FIFO record's lane is always its message group. @default every record
   * of a standard queue is a lane of its own
   */
  readonly laneOf?: (record: TRecord) => string | undefined;
  /**
   * Each record's turn runs inside this scope. A scope that throws, or resolves without running `process`, fails
   * that record alone (reported to `onUnexpectedError`; SQS delivers it again). @default none
   */
  readonly recordScope?: RecordScope;
}

/** Outcomes that leave the message on the queue, reported as batch item failures. */
export const RETRIED_OUTCOMES: ReadonlySet<RecordOutcome> = new Set(['failed', 'skipped']);

/** Records that run one after another; `groupId` when they are a FIFO message group (a failure stops the rest). */
interface Lane<TRecord> {
  readonly groupId?: string;
  readonly records: Array<{ readonly record: TRecord; readonly index: number }>;
}

/** The batch's lanes, in the order of their first record. */
function lanesOf<TRecord extends SQSRecord>(records: readonly TRecord[], laneOf?: (record: TRecord) => string | undefined): Lane<TRecord>[] {
  const lanes: Lane<TRecord>[] = [];
  const byKey = new Map<string, Lane<TRecord>>();
  records.forEach((record, index) => {
    const groupId = record.attributes?.MessageGroupId;
    const laneKey = groupId === undefined ? laneOf?.(record) : undefined;
    const key = groupId !== undefined ? `group\u0000${groupId}` : laneKey !== undefined ? `lane\u0000${laneKey}` : undefined;
    let lane = key === undefined ? undefined : byKey.get(key);
    if (lane === undefined) {
      lane = { ...(groupId !== undefined ? { groupId } : {}), records: [] };
      lanes.push(lane);
      if (key !== undefined) byKey.set(key, lane);
    }
    lane.records.push({ record, index });
  });
  return lanes;
}

/**
 * The records that run behind an earlier record of the batch in their lane (FIFO group, or `laneOf`): each starts only
 * once the one before it in its lane is done. The first record of every lane is not among them.
 */
export function recordsBehindInLane<TRecord extends SQSRecord>(records: readonly TRecord[], laneOf?: (record: TRecord) => string | undefined): ReadonlySet<TRecord> {
  return new Set(lanesOf(records, laneOf).flatMap((lane) => lane.records.slice(1).map(({ record }) => record)));
}

/**
 * Processes the records, at most `concurrency` at once, and reports every record whose outcome is `failed` (or whose
 * processor threw) as a batch item failure, in batch order. On a standard queue one record's failure never affects the
 * others. With a `budget`, a record is started only while the invocation's time allows (invocation-budget.ts); one
 * not started is reported as a batch item failure, untouched.
 *
 * On a FIFO queue (records carry `MessageGroupId`), order within a group must hold: a group's records run one after
 * another, and after the first failure in a group its later records in the batch are not attempted and are reported
 * too (`skipped`), so they are retried in order after it. Other groups go on, concurrently.
 */
export async function processBatch<TRecord extends SQSRecord>(
  records: readonly TRecord[],
  processRecord: RecordProcessor<TRecord>,
  options: BatchOptions<TRecord> = {},
): Promise<SQSBatchResponse> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a whole number of at least 1, but was ${concurrency}`);
  const outcomes: RecordOutcome[] = new Array<RecordOutcome>(records.length);
  const lanes = lanesOf(records, options.laneOf);
  const runLane = async (lane: Lane<TRecord>): Promise<void> => {
    let failed = false;
    for (const { record, index } of lane.records) {
      const turn = async (): Promise<RecordOutcome> => {
        const budget = options.budget;
        const clock = failed && lane.groupId !== undefined ? budget?.skipRecord() : budget?.startRecord();
        if (failed && lane.groupId !== undefined) {
          options.onSkipped?.(record, lane.groupId);
          return 'skipped';
        }
        if (budget !== undefined && clock === undefined) {
          // too little of the invocation's time left to start it: returned untouched, SQS delivers it again
          options.onNotStarted?.(record);
          return 'failed';
        }
        try {
          return await processRecord(record, clock);
        } catch (error) {
          options.onUnexpectedError?.(record, error);
          return 'failed';
        } finally {
          clock?.end();
        }
      };
      let outcome: RecordOutcome;
      if (options.recordScope === undefined) {
        outcome = await turn();
      } else {
        let turned = false;
        try {
          outcome = await options.recordScope(record, () => {
            turned = true;
            return turn();
          });
          if (!turned) throw new Error('the record scope resolved without running the record');
        } catch (error) {
          options.onUnexpectedError?.(record, error);
          outcome = 'failed';
        }
      }
      options.onOutcome?.(record, outcome);
      outcomes[index] = outcome;
      if (RETRIED_OUTCOMES.has(outcome)) failed = true;
    }
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let lane = lanes[next++]; lane !== undefined; lane = lanes[next++]) await runLane(lane);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, lanes.length) }, worker));
  return {
    batchItemFailures: records.flatMap((record, index) => (RETRIED_OUTCOMES.has(outcomes[index] as RecordOutcome) ? [{ itemIdentifier: record.messageId }] : [])),
  };
}
