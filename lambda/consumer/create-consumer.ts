/** The wiring every processing mode's factory shares: logger, dead letters, metrics and the batch loop. */
import { ConfigurationError, type ConsumerBaseConfig } from '../config';
import { type ProcessingModeName } from '../contract/environment';
import { createLogger, redactingLogger, type Logger } from '../logger';
import { metricLogLevel } from '../metric-log-level';
import { ConsumerMetrics } from '../metrics';
import { ContentionRetry, type ContentionRetryOptions } from '../transaction/contention-retry';
import type { DynamoDBClientLike } from '../transaction/document-client';
import { unpairedSurrogate } from '../unicode';
import { INBOX_ITEM } from '../contract/wire-format';
import type { EventEnvelope } from '../envelope';
import { processBatch, recordsBehindInLane, type RecordOutcome, type RecordScope } from './batch';
import { batchReadPolicy, type BatchReadSetting } from './batch-read-policy';
import { SqsDeadLetterPublisher, type DeadLetterPublisher } from './dead-letter';
import { ItemLocks } from './item-locks';
import { assertNotBehindOrderedQueue } from './ordered-queue-guard';
import { KnownRecords, type KnownRecordsSource } from './known-records';
import { parseRecordBody, processMessage, type MessageDependencies, type MessageExecutor, type ParsedBody, type PayloadParser } from './process-message';
import type { SQSBatchResponse, SQSEvent } from './sqs';
import { loadClaimCheckConfig } from '../claim-check/claim-check-config';
import { S3PayloadStore, type PayloadReader } from '../claim-check/payload-store';
import type { ClaimCheckReading } from './process-message';

/** Options every consumer factory accepts. */
export interface ConsumerOptions<TData> {
  /**
   * The DynamoDB client; a low-level client is wrapped in a DocumentClient that removes undefined attribute values,
   * unless it was already wrapped with `DynamoDBDocumentClient.from` (the SDK shares those options with it; they then apply).
   * @default a client from the Lambda environment
   */
  readonly client?: DynamoDBClientLike;
  /**
   * Checks and types each event's data before the handler runs, e.g. `(data) => schema.parse(data)`. A throw
   * dead-letters the message at once as a `SchemaValidationError`.
   * @default the data is passed on unchecked
   */
  readonly parse?: PayloadParser<TData>;
  /**
   * Keep payload values in error messages (what a `parse` error echoes of the refused value, what `JSON.parse` quotes
   * of a body that is not JSON, what the handler's errors and their `cause` chains say) in the logs, the dead-letter
   * attributes and a blocked step's reason. For debugging only: `parse` functions and handlers should not put values
   * in errors in the first place.
   * @default false - redacted: quoted values and numbers replaced, the message bounded
   */
  readonly logPayloadValues?: boolean;
  /** Where permanent failures and blocked messages go. @default SQS SendMessage to the configured dead-letter queue URL; none when it is unset */
  readonly deadLetter?: DeadLetterPublisher;
  /** The clock for TTLs, leases and timestamps. @default the system clock */
  readonly now?: () => Date;
  /** Where outcome lines go; the subscriber name is added to every line. @default JSON lines on standard output */
  readonly logger?: Logger;
  /** Receives one CloudWatch EMF line per batch with the outcome counts. @default standard output (Lambda turns it into metrics) */
  readonly metricsSink?: (line: string) => void;
  /**
   * How many records of a batch are processed at once, 1 to {@link MAX_CONCURRENCY}. Records of one FIFO message group
   * always run one after another in order (groups run concurrently), and so do copies of one event, and (aggregate
   * mode) messages of one aggregate. Lower it when the handler's effects must not run in parallel.
   * @default 10
   */
  readonly maxConcurrency?: number;
  /**
   * The retry of a write refused for contention alone (`TransactionConflict`, throttling): full-jitter back-off inside
   * the invocation while its remaining time allows, then a batch item failure (docs/PROCESSING-MODES.md, "Contention").
   * `random` is the jitter's random source (a simulator seeds it).
   * @default 25 ms base, 1 s cap, 1 s kept back for the batch and the response, `Math.random`
   */
  readonly contentionRetry?: ContentionRetryOptions;
  /**
   * Where offloaded events' data is read from (claim-check, docs/LARGE-EVENTS.md); any `PayloadReader`, e.g. an
   * `S3PayloadStore` over your own S3 client.
   * @default an `S3PayloadStore` with a client from the Lambda environment, created when the first offloaded event arrives
   */
  readonly payloadReader?: PayloadReader;
  /**
   * Runs each record's turn (its start check, its processing, its end) inside a scope of yours, e.g. an
   * `AsyncLocalStorage` context that carries the record's message id to your logger, or a tracer's subsegment. Call
   * `process` once and resolve with what it resolves with; a scope that throws fails that record alone (SQS delivers
   * it again).
   * @default none
   */
  readonly recordScope?: RecordScope;
}

/** The default of `maxConcurrency`. */
export const DEFAULT_CONCURRENCY = 10;

/**
 * The fewest parsed records a batch needs for the batch read (where the mode has one). With one record the read only
 * adds a round trip: the record's own conditional write recognises a redelivery too (measured in docs/BENCHMARKS.md,
 * "Batch read at batch size 1").
 */
export const MIN_RECORDS_FOR_BATCH_READ = 2;
/** The largest `maxConcurrency` (the DynamoDB client's default socket pool is 50; each record holds one at a time). */
export const MAX_CONCURRENCY = 50;

/** A Lambda handler for an SQS event source mapping with `ReportBatchItemFailures`. */
export type SqsBatchHandler = (event: SQSEvent, context?: unknown) => Promise<SQSBatchResponse>;

/** What a factory passes to {@link createBatchHandler}. */
export interface BatchHandlerSetup<TData> {
  readonly config: ConsumerBaseConfig;
  readonly processingMode: ProcessingModeName;
  readonly options: ConsumerOptions<TData>;
  /** The logger with the subscriber (and mode) in its context; see {@link consumerLogger}. */
  readonly logger: Logger;
  readonly now: () => Date;
  readonly execute: MessageExecutor<TData>;
  /** Metrics the mode's executor counts besides the outcomes (see `ExecutionResult.metrics`). @default none */
  readonly additionalMetrics?: readonly string[];
  /**
   * Where the batch read finds the records that prove a message applied. A batch of one record skips the read: its
   * own write (the inbox Put, the claim) answers a redelivery in the same round trip the read would cost.
   * @default no batch read (aggregate mode)
   */
  readonly knownRecordsSource?: KnownRecordsSource;
  /**
   * Which batches read from {@link BatchHandlerSetup.knownRecordsSource}: every one, or decided per batch (see
   * batch-read-policy.ts). A batch that does not read still recognises a later copy of an event from an earlier record
   * of the batch. @default true
   */
  readonly batchRead?: Exclude<BatchReadSetting, false>;
  /** See `MessageDependencies.appliedLookup` (asked only for an offloaded event whose object is missing). @default not asked */
  readonly appliedLookup?: MessageDependencies<TData>['appliedLookup'];
  /** See `MessageDependencies.onBlockedDeadLetter`. @default nothing recorded */
  readonly onBlockedDeadLetter?: MessageDependencies<TData>['onBlockedDeadLetter'];
  /**
   * Messages with the same lane run one after another, never at once (besides FIFO groups and copies of one event).
   * @default the event id
   */
  readonly laneOf?: (envelope: EventEnvelope<unknown>) => string | undefined;
  /** Set by the ordered path's factory: records of an ordered subscriber's FIFO queue are refused otherwise (ordered-queue-guard.ts). @default false */
  readonly ordered?: boolean;
}

/** The logger of a consumer: the caller's, or JSON lines on standard output, with subscriber and mode on every line. */
export function consumerLogger(config: ConsumerBaseConfig, processingMode: ProcessingModeName, logger?: Logger): Logger {
  return (logger ?? createLogger()).child({ subscriber: config.subscriberName, processingMode });
}

/**
 * How a consumer reads offloaded events: the given reader, or an S3 store made on first use; the flow's bucket and
 * prefix from the environment (`IEF_PAYLOAD_BUCKET_NAME`, `IEF_PAYLOAD_KEY_PREFIX`) when set.
 */
function claimCheckReading(payloadReader: PayloadReader | undefined): ClaimCheckReading {
  const expected = loadClaimCheckConfig();
  let reader = payloadReader;
  return {
    reader: () => (reader ??= S3PayloadStore.fromEnvironment()),
    ...(expected === undefined ? {} : { expected }),
  };
}

/** The dead-letter publisher of a consumer: the caller's, or SQS to the configured URL, or none. */
function deadLetterPublisher(config: ConsumerBaseConfig, deadLetter?: DeadLetterPublisher): DeadLetterPublisher | undefined {
  if (deadLetter !== undefined) return deadLetter;
  return config.deadLetterQueueUrl === undefined ? undefined : new SqsDeadLetterPublisher({ queueUrl: config.deadLetterQueueUrl });
}

/**
 * Throws {@link ConfigurationError} for a subscriber name that cannot be part of a record key: one with the key
 * separator `#` (`billing#x` and event `y` would share a key with `billing` and event `x#y`), or not well-formed
 * Unicode (see unicode.ts). The constructs only deploy names of `A-Z a-z 0-9 _ . -`; a `config` given by hand is
 * checked here.
 */
function assertSubscriberNameUsable(subscriberName: string): void {
  const problem = unpairedSurrogate(subscriberName);
  if (problem !== undefined) throw new ConfigurationError(`the subscriber name must be well-formed Unicode, but has ${problem}`);
  if (subscriberName.includes(INBOX_ITEM.KEY_SEPARATOR)) {
    throw new ConfigurationError(`the subscriber name must not contain '${INBOX_ITEM.KEY_SEPARATOR}', the record keys' separator, but was '${subscriberName}'`);
  }
}

/**
 * Builds the Lambda handler: each record goes through the shared pipeline (`processMessage`) with the mode's
 * executor; failures are reported per record (FIFO groups stop at their first failure); one EMF line per batch.
 */
export function createBatchHandler<TData>(setup: BatchHandlerSetup<TData>): SqsBatchHandler {
  const { config, now } = setup;
  // a handler's error may carry payload values: redacted in every line unless asked for (lambda/redact.ts)
  const logger = setup.options.logPayloadValues === true ? setup.logger : redactingLogger(setup.logger);
  assertSubscriberNameUsable(config.subscriberName);
  const concurrency = setup.options.maxConcurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw new ConfigurationError(`maxConcurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, but ${String(concurrency)} was given`);
  }
  const logPayloadValues = setup.options.logPayloadValues === true;
  const laneOfEnvelope = (envelope: EventEnvelope<unknown>): string | undefined => {
    try {
      return setup.laneOf?.(envelope) ?? envelope.id;
    } catch {
      return envelope.id; // the mode's own path reports what is wrong with the message
    }
  };
  const deadLetter = deadLetterPublisher(config, setup.options.deadLetter);
  const claimCheck = claimCheckReading(setup.options.payloadReader);
  const contention = new ContentionRetry(setup.options.contentionRetry);
  // one per consumer: an adaptive read learns from every invocation of this execution environment
  const readPolicy = setup.knownRecordsSource === undefined ? undefined : batchReadPolicy(setup.batchRead ?? true);
  const metricsOptions = {
    subscriberName: config.subscriberName,
    processingMode: setup.processingMode,
    functionName: config.functionName,
    sink: setup.options.metricsSink,
    now,
    additionalMetrics: setup.additionalMetrics,
    logLevel: metricLogLevel(), // once per environment, not per invocation
  };
  // Everything below is per invocation: Lambda Managed Instances run several invocations at once in one execution
  // environment, and a batch's metrics (or anything else keyed by "the current batch") must not take in another's.
  return async (event, lambdaContext) => {
    if (setup.ordered !== true) assertNotBehindOrderedQueue(config, event.Records);
    const metrics = new ConsumerMetrics(metricsOptions);
    const startedAt = now().getTime();
    const outcomes: Partial<Record<RecordOutcome, number>> = {};
    const parsed = new Map<object, ParsedBody>(event.Records.map((record) => [record, parseRecordBody(record, logPayloadValues)]));
    const idOf = (record: object): string[] => {
      const body = parsed.get(record);
      return body !== undefined && 'envelope' in body ? [body.envelope.id] : [];
    };
    const eventIds = event.Records.flatMap(idOf);
    const laneOf = (record: SQSEvent['Records'][number]): string | undefined => {
      const body = parsed.get(record);
      return body !== undefined && 'envelope' in body ? laneOfEnvelope(body.envelope) : undefined;
    };
    // a one-record batch pays the read and then its own write anyway, which answers a redelivery by itself: no read
    const source = setup.knownRecordsSource;
    const readOn = source !== undefined && readPolicy?.shouldRead() === true && eventIds.length >= MIN_RECORDS_FOR_BATCH_READ;
    // `batchRead: true` reads before any record starts; otherwise the read is off the first commits' path: a record
    // first in its lane commits at once (its write's condition answers a redelivery), and the read goes out beside
    // those commits for the records behind another in their lane, which find its answer when their turn comes
    const readFirst = readPolicy?.readsBeforeRecords === true;
    const behind = readFirst ? undefined : recordsBehindInLane(event.Records, laneOf);
    const readIds = behind === undefined ? eventIds : event.Records.filter((record) => behind.has(record)).flatMap(idOf);
    const reads = readOn && readIds.length > 0;
    const knownRecords =
      source === undefined
        ? undefined
        : !reads
          ? KnownRecords.none(source.subscriberName)
          : readFirst
            ? await KnownRecords.read(source, readIds, now(), logger)
            : KnownRecords.reading(source, readIds, now(), logger);
    const deps: MessageDependencies<TData> = {
      execute: setup.execute,
      parse: setup.options.parse,
      subscriberName: config.subscriberName,
      deadLetter,
      logger,
      now,
      lambdaContext,
      logPayloadValues,
      countMetric: (name) => metrics.countMetric(name),
      knownRecords,
      itemLocks: new ItemLocks(),
      handOff: new Map(),
      onBlockedDeadLetter: setup.onBlockedDeadLetter,
      contention,
      claimCheck,
      appliedLookup: setup.appliedLookup,
    };
    try {
      return await processBatch(
        event.Records,
        async (record, clock) => {
          if (behind?.has(record) === true) await knownRecords?.settled();
          return processMessage(record, deps, parsed.get(record), clock);
        },
        {
          concurrency,
          // the invocation's time, shared by the batch's starts and its contention retries
          budget: contention.budget(lambdaContext, event.Records.length),
          onNotStarted: (record) =>
            logger.info('failed', { sqsMessageId: record.messageId, outcome: 'failed', detail: "not started: too little of the invocation's time left; retried later" }),
          laneOf,
          ...(setup.options.recordScope === undefined ? {} : { recordScope: setup.options.recordScope }),
          onUnexpectedError: (record, error) => logger.error('failed', { sqsMessageId: record.messageId, outcome: 'failed', error }),
          onSkipped: (record, groupId) =>
            logger.info('skipped', { sqsMessageId: record.messageId, outcome: 'skipped', messageGroupId: groupId, detail: 'an earlier message of this FIFO group failed' }),
          onOutcome: (record, outcome) => {
            metrics.count(outcome, parsed.get(record));
            outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          },
        },
      );
    } finally {
      // a read no record waited for (every record behind another was skipped) is not left running past the response
      await knownRecords?.settled();
      // the redeliveries a read would have answered: those the read or their own write found applied
      readPolicy?.observe(eventIds.length, (outcomes.duplicate ?? 0) - (knownRecords?.copiesRecognisedInBatch ?? 0));
      metrics.flush();
      // the one line per batch at the default level (each applied or duplicate record has a DEBUG line)
      logger.info('batch', {
        records: event.Records.length,
        outcomes,
        ...(source === undefined ? {} : { batchRead: reads }),
        durationMilliseconds: now().getTime() - startedAt,
      });
    }
  };
}
