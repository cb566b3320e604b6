/**
 * The per-message pipeline every processing mode shares: parse the envelope, check the payload against the
 * subscriber's schema, run the mode, and turn the result or the error into an outcome (dead-lettering what no retry
 * can cure). The mode itself is a {@link MessageExecutor}.
 */
import { parseEnvelope, type EventEnvelope } from '../envelope';
import { MessageBlockedError, PayloadMismatchError, PayloadUnavailableError, PermanentError, SchemaValidationError } from '../errors';
import { CONSUMER_METRICS } from '../contract/metric-names';
import { SequenceGapError } from '../ordered/ordered-errors';
import type { ClaimCheckConfig } from '../claim-check/claim-check-config';
import type { PayloadReader } from '../claim-check/payload-store';
import { READ_COPIES, sharedReadBudget } from '../claim-check/read-budget';
import { isMissingObject, isOffloaded, resolvePayload, withData } from '../claim-check/resolve-payload';
import { eventFingerprint, isLegacyFingerprintOf } from '../fingerprint';
import { redactedMessage, redactValues } from '../redact';
import { traceLogFields } from '../trace-context';
import type { LogContext, Logger } from '../logger';
import type { RecordOutcome } from './batch';
import type { DeadLetterPublisher } from './dead-letter';
import { ContentionRetry, type ContentionRetryCall } from '../transaction/contention-retry';
import type { RecordClock } from '../transaction/invocation-budget';
import { ItemLocks } from './item-locks';
import { orderedSequenceOf, type KnownRecords } from './known-records';
import type { SQSRecord } from './sqs';

/** What every mode's handler gets besides the envelope. */
export interface HandlerContext {
  /** The SQS record that carried the event. */
  readonly sqsRecord: SQSRecord;
  /** The Lambda context, when the runtime passed one. */
  readonly lambdaContext?: unknown;
  /** A logger whose lines carry the subscriber, event id, event type and SQS message id. */
  readonly logger: Logger;
}

/** What a mode's executor gets: the handler context plus the payload fingerprint and the batch's item locks. */
export interface MessageContext<TData = unknown> extends HandlerContext {
  /**
   * A new copy of the event, parsed again from the message body (and checked again by `parse`), for each run of the
   * user's code: a handler, `apply` or step that changes its event in place must not see that change again when it
   * runs again in the same delivery (a transaction conflict, a lost version race, the next step). Executors pass this
   * to user code and keep the envelope they were given for themselves.
   */
  readonly freshEnvelope: () => EventEnvelope<TData>;
  /** The payload fingerprint of the envelope as delivered (see fingerprint.ts). */
  readonly fingerprint: string;
  /** The batch's locks on the items its records commit (see item-locks.ts): one per invocation, shared by its records. */
  readonly itemLocks: ItemLocks;
  /**
   * What a record of the batch left for the next record of its lane, by lane key (aggregate mode: the aggregate as it
   * wrote it, so the next message to it needs no read). One per invocation, shared by its records.
   */
  readonly handOff: Map<string, unknown>;
  /**
   * Runs `attempt` again while it fails for contention alone (see transaction/contention-retry.ts), within this
   * invocation's remaining time; the last error is thrown when time runs out. Every write of a message's exactly-once
   * path goes through it (the commit, the claim, the take-over, a step's success write, a block, the aggregate's write);
   * the lease and multi-step release after a failed step keeps its own bounded retry (step-engine.ts), and dead letters
   * are SQS sends, not DynamoDB writes.
   */
  readonly retryOnContention: <T>(attempt: () => Promise<T>, call?: Omit<ContentionRetryCall, 'lambdaContext' | 'clock'>) => Promise<{ readonly value: T; readonly attempts: number }>;
}

/** What a mode did with a message it did not throw on. */
export interface ExecutionResult {
  /**
   * `processed`: applied now; `duplicate`: recognised as already applied, nothing done; `already-blocked`: another
   * delivery blocked the message for an operator and dead-lettered it, nothing done.
   */
  readonly outcome: 'processed' | 'duplicate' | 'already-blocked';
  /** Extra fields for the outcome's log line (e.g. `stagedWrites`). */
  readonly fields?: LogContext;
  /** Metrics besides the outcome to count once each (e.g. `EvictedRedelivery`). @default none */
  readonly metrics?: readonly string[];
}

/**
 * One processing mode: applies the message (exactly once, in its own way) or throws.
 * - a {@link PermanentError} (or a subclass, or another name in {@link PERMANENT_ERROR_NAMES}): dead-lettered now;
 * - {@link MessageBlockedError}: dead-lettered now as `blocked`, the record waits for an operator;
 * - anything else: `failed`, so SQS delivers the message again.
 */
export type MessageExecutor<TData> = (envelope: EventEnvelope<TData>, context: MessageContext<TData>) => Promise<ExecutionResult>;

/** What a mode learns when the dead letter of a message it blocked was sent (the send confirmed). */
export interface BlockedDeadLetter {
  readonly eventId: string;
  /** The SQS message id of the delivery whose dead letter holds the message. */
  readonly sqsMessageId: string;
  /** The version of the processing record the block was decided on (see `MessageBlockedError.recordVersion`). */
  readonly recordVersion?: number;
}

/**
 * Checks and types an event's data, e.g. `(data) => OrderPlacedSchema.parse(data)` with zod. A throw means the
 * payload is invalid: the message is dead-lettered at once as a {@link SchemaValidationError}.
 */
export type PayloadParser<TData> = (data: unknown, envelope: EventEnvelope<unknown>) => TData;

/** What {@link processMessage} works with. */
export interface MessageDependencies<TData> {
  readonly execute: MessageExecutor<TData>;
  /** @default the data is passed on unchecked */
  readonly parse?: PayloadParser<TData>;
  readonly subscriberName: string;
  /** Absent when no dead-letter queue is configured: permanent failures are then left to SQS redrive. */
  readonly deadLetter?: DeadLetterPublisher;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly lambdaContext?: unknown;
  /** Counts a metric an executor names in its result's `metrics`, for this invocation. @default not counted */
  readonly countMetric?: (name: string) => void;
  /**
   * What this batch knows to be applied already (the batch read): a message it recognises is a duplicate without
   * running `parse`, the handler or any write. @default nothing known: every message goes the mode's path
   */
  readonly knownRecords?: KnownRecords;
  /** The batch's item locks, shared by its records. @default locks of this record alone (nothing to wait for) */
  readonly itemLocks?: ItemLocks;
  /** The batch's hand-offs between records of one lane (see `MessageContext.handOff`). @default this record's alone */
  readonly handOff?: Map<string, unknown>;
  /** The consumer's contention retry (see `MessageContext.retryOnContention`). @default the default policy */
  readonly contention?: ContentionRetry;
  /**
   * Called once the dead letter of a blocked message was sent, so the mode can record that the message is kept (lease
   * and multi-step modes: a later copy is then acknowledged as already-blocked). A throw is logged; the message is
   * acknowledged all the same, as its dead letter holds it. @default nothing recorded
   */
  readonly onBlockedDeadLetter?: (deadLetter: BlockedDeadLetter) => Promise<void>;
  /**
   * How offloaded events (claim-check, docs/LARGE-EVENTS.md) are read: `reader` is called for the first one (so a
   * consumer that never meets one creates no S3 client); `expected` is the flow's bucket and prefix, when configured,
   * and a reference elsewhere is refused; without `expected` no reference is followed. @default none: an offloaded event is dead-lettered (PayloadUnavailableError)
   */
  readonly claimCheck?: ClaimCheckReading;
  /**
   * Whether the mode's record shows `envelope` applied with `fingerprint` (`duplicate`), asked only when an offloaded
   * event's object is missing, before the message is dead-lettered for it: a late copy of an applied event whose object
   * expired is then acknowledged, not dead-lettered (R7-3). A throw fails the message (retried).
   * @throws PayloadMismatchError when the record shows the id applied with another fingerprint
   * @default not asked: a missing object dead-letters the message
   */
  readonly appliedLookup?: AppliedLookup;
  /**
   * Keep payload values in error messages (a schema error's echo of the refused value, the start of a body that is not
   * JSON) in the logs and the dead-letter attributes, for debugging.
   * @default false - they are redacted (`redactValues`): the error name and a bounded message without the values
   */
  readonly logPayloadValues?: boolean;
}

/**
 * See `MessageDependencies.appliedLookup`. `orderedSequence`: the sequence the delivered message carries, asked only
 * when the record found is an ordered subscriber's (a record of the event at another sequence is no answer: R8b-8).
 */
export type AppliedLookup = (envelope: EventEnvelope<unknown>, fingerprint: string, orderedSequence?: () => number | undefined) => Promise<'duplicate' | undefined>;

/** How a consumer reads offloaded events' data (see `MessageDependencies.claimCheck`). */
export interface ClaimCheckReading {
  readonly reader: () => PayloadReader;
  readonly expected?: Pick<ClaimCheckConfig, 'bucketName' | 'keyPrefix'>;
}

/**
 * An offloaded envelope made whole (fetched, size and SHA-256 checked), or the envelope itself when it travelled
 * inline; `dataJson` is the fetched data's text, to parse fresh copies from.
 */
async function inlineEnvelope(raw: EventEnvelope<unknown>, claimCheck: ClaimCheckReading | undefined): Promise<{ envelope: EventEnvelope<unknown>; dataJson?: string }> {
  if (!isOffloaded(raw)) return { envelope: raw };
  // no bucket configured (IEF_PAYLOAD_BUCKET_NAME unset): no reference is followed, into whatever bucket the role can read
  if (claimCheck?.expected === undefined) {
    throw new PayloadUnavailableError(
      `event '${raw.id}' (${raw.type}) is offloaded to ${raw.dataref}, but this consumer has no payload bucket configured (IEF_PAYLOAD_BUCKET_NAME), ` +
        'so it follows no reference (deploy it on a flow with offloadLargeEvents, or set IEF_PAYLOAD_BUCKET_NAME and IEF_PAYLOAD_KEY_PREFIX to the flow\'s bucket)',
      raw.dataref,
    );
  }
  return resolvePayload(raw, claimCheck.reader(), claimCheck.expected);
}

/**
 * Names of errors that no retry can cure. Checked by name as well as by class, so an error from a second bundled
 * copy of this runtime still counts.
 */
const PERMANENT_ERROR_NAMES: ReadonlySet<string> = new Set([
  'PermanentError',
  'SchemaValidationError',
  'PayloadMismatchError',
  'TransactionLimitError',
  'InvalidWriteError',
  'EventTooLargeError',
  'InvalidEventError',
  'ProcessingContextError',
  'PayloadUnavailableError',
]);

/** The contention retry of a pipeline given none. */
const DEFAULT_CONTENTION_RETRY = new ContentionRetry();

/** Errors that mean "another delivery is on it, or took it over": retried quietly, not alarming. */
const CONTENDED_ERROR_NAMES: ReadonlySet<string> = new Set(['MessageInProgressError', 'LeaseLostError', 'ConcurrentModificationError']);

/** True for the {@link PermanentError} family: by class, or by one of {@link PERMANENT_ERROR_NAMES}. */
export function isPermanent(error: unknown): error is Error {
  return error instanceof PermanentError || (error instanceof Error && PERMANENT_ERROR_NAMES.has(error.name));
}

function isBlocked(error: unknown): error is Error {
  return error instanceof MessageBlockedError || (error instanceof Error && error.name === 'MessageBlockedError');
}

function receiveCount(record: SQSRecord): number | undefined {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : undefined;
}

/**
 * Sends the record to the dead-letter queue and returns `outcome`; returns `failed` (so SQS keeps the message and
 * redrives it eventually) when there is no dead-letter queue or the send fails.
 */
async function deadLetter<TData>(
  record: SQSRecord,
  error: Error,
  outcome: 'dead-lettered' | 'blocked',
  deps: MessageDependencies<TData>,
  log: Logger,
  fields: LogContext,
  eventId?: string,
): Promise<RecordOutcome> {
  if (deps.deadLetter === undefined) {
    log.warn('failed', { ...fields, outcome: 'failed', error, detail: `${outcome}, but no dead-letter queue is configured; left for SQS redrive` });
    return 'failed';
  }
  try {
    await deps.deadLetter.publish({
      body: record.body,
      errorName: error.name,
      errorMessage: deps.logPayloadValues === true ? error.message : redactedMessage(error),
      subscriber: deps.subscriberName,
      sourceMessageId: record.messageId,
      approximateReceiveCount: receiveCount(record),
      eventId,
      messageGroupId: record.attributes?.MessageGroupId,
      receiptHandle: record.receiptHandle,
    });
  } catch (publishError) {
    log.error('failed', { ...fields, outcome: 'failed', error, publishError, detail: 'dead-letter send failed; left for SQS redrive' });
    return 'failed';
  }
  if (outcome === 'blocked' && eventId !== undefined && deps.onBlockedDeadLetter !== undefined) {
    const recordVersion = (error as { recordVersion?: unknown }).recordVersion;
    try {
      await deps.onBlockedDeadLetter({ eventId, sqsMessageId: record.messageId, ...(typeof recordVersion === 'number' ? { recordVersion } : {}) });
    } catch (recordError) {
      // the dead letter holds the message; a later copy is dead-lettered too instead of acknowledged, which is safe
      log.warn('dead letter sent but not recorded', { ...fields, error: recordError, detail: 'a later copy of this message is dead-lettered too' });
    }
  }
  log.error(outcome, { ...fields, outcome, error });
  return outcome;
}

/** What a throw of something other than an Error said: a string as it is, anything else as JSON where it can be. */
function describeThrown(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined && json !== '{}') return json;
  } catch {
    // a cycle or a bigint: fall through
  }
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value); // an object without prototype has no toString
  }
}

function parsePayload<TData>(envelope: EventEnvelope<unknown>, parse: PayloadParser<TData> | undefined, logPayloadValues: boolean): EventEnvelope<TData> {
  if (parse === undefined) return envelope as EventEnvelope<TData>;
  try {
    return { ...envelope, data: parse(envelope.data, envelope) };
  } catch (error) {
    if (isPermanent(error)) throw error;
    const thrown = error instanceof Error ? error.message : describeThrown(error);
    const what = `event '${envelope.id}' (${envelope.type}) failed the subscriber's schema`;
    // a schema library may echo the value it refused: redacted, and the original not attached as the cause
    if (logPayloadValues) throw new SchemaValidationError(`${what}: ${thrown}`, { cause: error });
    throw new SchemaValidationError(`${what}: ${redactValues(thrown)}`);
  }
}

/** A record's body parsed into an envelope, or why it could not be. */
export type ParsedBody = { readonly envelope: EventEnvelope<unknown> } | { readonly error: Error };

/** Parses a record's body once (the batch reads the ids before processing); never throws. */
export function parseRecordBody(record: SQSRecord, logPayloadValues: boolean): ParsedBody {
  try {
    return { envelope: parseEnvelope<unknown>(record.body, { logPayloadValues }) };
  } catch (error) {
    return { error: error as Error };
  }
}

/**
 * Processes one record and returns its outcome; never throws. Logs one line per outcome: DEBUG for `processed` and
 * `duplicate` (the batch's summary line counts them at INFO), WARN or ERROR otherwise. `parsed` is the record's
 * body as {@link parseRecordBody} read it, when the batch already did; `clock` is the record's clock in the
 * invocation's budget (the batch's), which its contention retries consult.
 */
export async function processMessage<TData>(
  record: SQSRecord,
  deps: MessageDependencies<TData>,
  parsed: ParsedBody = parseRecordBody(record, deps.logPayloadValues === true),
  clock?: RecordClock,
): Promise<RecordOutcome> {
  const startedAt = deps.now().getTime();
  const elapsed = (): LogContext => ({ durationMilliseconds: deps.now().getTime() - startedAt });
  let log = deps.logger.child({ sqsMessageId: record.messageId });
  if ('error' in parsed) return deadLetter(record, parsed.error, 'dead-lettered', deps, log, elapsed());
  const delivered = parsed.envelope;
  log = log.child({ eventId: delivered.id, eventType: delivered.type, ...traceLogFields(delivered) });
  const raw = delivered;
  let releaseMemory: (() => void) | undefined;
  try {
    // an offloaded event's fingerprint needs no data (the producer's `ieffingerprint`, or for an envelope written before
    // it, its digest and size: fingerprint.ts `eventFingerprint`): a copy the batch read knows applied is a
    // duplicate before any S3 read; else its data is fetched and verified, and from there on it is an inline event.
    // An object found missing dead-letters the message only if the mode's record does not show the event applied (R7-3).
    // (an inline event takes no extra step: not even an await, so its path is main's, tick for tick)
    let whole = delivered;
    let dataJson: string | undefined;
    let fingerprint: string;
    if (isOffloaded(delivered)) {
      fingerprint = eventFingerprint(delivered);
      if (deps.knownRecords?.recognise(raw.id, fingerprint, () => orderedSequenceOf(record.body)) === 'duplicate') {
        log.debug('duplicate', { ...elapsed(), outcome: 'duplicate', detail: 'recognised by the batch read: no handler run, nothing written, no S3 read' });
        return 'duplicate';
      }
      releaseMemory = await reserveMemory(delivered);
      try {
        ({ envelope: whole, dataJson } = await inlineEnvelope(delivered, deps.claimCheck));
      } catch (error) {
        if (!isMissingObject(error) || deps.appliedLookup === undefined) throw error;
        // one strongly consistent read of the mode's record, on this path only; its own failure is retried
        if ((await deps.appliedLookup(raw, fingerprint, () => orderedSequenceOf(record.body))) !== 'duplicate') throw error;
        log.info('duplicate', { ...elapsed(), outcome: 'duplicate', detail: `its offloaded data is gone (${raw.dataref}), but the event was applied: a late copy, acknowledged` });
        deps.knownRecords?.remember(raw.id, fingerprint, () => orderedSequenceOf(record.body));
        return 'duplicate';
      }
    } else {
      fingerprint = eventFingerprint(delivered);
      if (deps.knownRecords?.recognise(raw.id, fingerprint, () => orderedSequenceOf(record.body)) === 'duplicate') {
        log.debug('duplicate', { ...elapsed(), outcome: 'duplicate', detail: 'recognised by the batch read: no handler run, nothing written' });
        return 'duplicate';
      }
    }
    const logPayloadValues = deps.logPayloadValues === true;
    const envelope = parsePayload(whole, deps.parse, logPayloadValues);
    // parsed again for each run of user code: what one run changes in place never reaches the next
    const reparsed = (): EventEnvelope<unknown> => {
      const again = parseEnvelope<unknown>(record.body, { logPayloadValues });
      return dataJson === undefined ? again : withData(again, JSON.parse(dataJson));
    };
    const freshEnvelope = (): EventEnvelope<TData> => parsePayload(reparsed(), deps.parse, logPayloadValues);
    const context: MessageContext<TData> = {
      sqsRecord: record,
      lambdaContext: deps.lambdaContext,
      logger: log,
      fingerprint,
      itemLocks: deps.itemLocks ?? new ItemLocks(),
      handOff: deps.handOff ?? new Map(),
      freshEnvelope,
      retryOnContention: (attempt, call) => (deps.contention ?? DEFAULT_CONTENTION_RETRY).run(attempt, { ...call, lambdaContext: deps.lambdaContext, ...(clock === undefined ? {} : { clock }) }),
    };
    const result = await deps.execute(envelope, context);
    for (const name of result.metrics ?? []) deps.countMetric?.(name);
    // a later copy of this event in the batch is then a duplicate without a write (a blocked one is not applied)
    if (result.outcome !== 'already-blocked') deps.knownRecords?.remember(raw.id, fingerprint, () => orderedSequenceOf(record.body));
    // DEBUG for an applied message or a duplicate: at volume a line each is a cost (CloudWatch Logs ingestion), and the
    // batch has a summary line; a copy of a blocked message stays worth a line at INFO
    const fields = { ...elapsed(), outcome: result.outcome, ...result.fields };
    if (result.outcome === 'already-blocked') log.info(result.outcome, fields);
    else log.debug(result.outcome, fields);
    return result.outcome;
  } catch (error) {
    // the event committed again (R8b-6) whose first commit, offloaded before `ieffingerprint` existed, was applied and
    // recorded with that envelope's fingerprint: the same event (nothing of this delivery was committed: every mode
    // checks the fingerprint before or in the write that would apply it)
    if (error instanceof PayloadMismatchError && isLegacyFingerprintOf(error.storedFingerprint, raw)) {
      log.info('duplicate', { ...elapsed(), outcome: 'duplicate', detail: 'the same event committed again; its first commit (an envelope without ieffingerprint) was applied' });
      return 'duplicate';
    }
    if (isPermanent(error)) return deadLetter(record, error, 'dead-lettered', deps, log, elapsed(), raw.id);
    if (isBlocked(error)) return deadLetter(record, error, 'blocked', deps, log, elapsed(), raw.id);
    // the fence holds the aggregate behind a gap (review ro13, RO13-6): what the ordered subscriber's HeldAggregate alarm counts
    if (error instanceof SequenceGapError) deps.countMetric?.(CONSUMER_METRICS.SEQUENCE_GAPS);
    if (error instanceof Error && CONTENDED_ERROR_NAMES.has(error.name)) {
      log.info('failed', { ...elapsed(), outcome: 'failed', error, detail: 'retried later' });
    } else {
      log.warn('failed', { ...elapsed(), outcome: 'failed', error });
    }
    return 'failed';
  } finally {
    releaseMemory?.();
  }
}

/**
 * Takes the memory an offloaded event's data needs from the execution environment's budget (read-budget.ts), waiting
 * for other records of the batch to finish when they hold it; refuses, before any fetch, an event that alone needs more
 * than the function has (its message fails alone, with the reason, instead of the invocation running out of memory).
 */
async function reserveMemory(envelope: EventEnvelope<unknown>): Promise<(() => void) | undefined> {
  const size = Number(envelope.iefdatasize);
  if (!Number.isFinite(size) || size <= 0) return undefined; // resolvePayload refuses a missing or bad size itself
  const budget = sharedReadBudget();
  const cost = size * READ_COPIES;
  if (!budget.fits(cost)) {
    const mib = (bytes: number) => Math.ceil(bytes / (1024 * 1024));
    throw new PayloadUnavailableError(
      `event '${envelope.id}' (${envelope.type}) has ${size} bytes of offloaded data, which needs about ${mib(cost)} MiB to read and verify ` +
        `(${READ_COPIES} copies), more than this function's ${mib(budget.totalBytes)} MiB: give the subscriber more memory (memorySize) and redrive its dead letter`,
      envelope.dataref,
    );
  }
  return budget.acquire(cost);
}
