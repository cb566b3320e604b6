/** `createTransactionalConsumer`: the default mode, business writes and the inbox record in one transaction. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from '../logger';
import { assertProcessingMode, loadConsumerBaseConfig, loadConsumerConfig, type ConsumerConfig } from '../config';
import { PROCESSING_MODE } from '../contract/environment';
import type { EventEnvelope } from '../envelope';
import { consumerOutbox, emittedEventPreparer, readyEvents } from '../producer/emitted-events';
import type { Outbox } from '../producer/outbox';
import type { BatchReadPolicy, BatchReadSetting } from './batch-read-policy';
import type { KnownRecordsSource } from './known-records';
import { appliedRecordLookup } from './applied-lookup';
import { CONTENTION_ATTEMPTS_WITHOUT_DEADLINE } from '../transaction/contention-retry';
import { toDocumentClient } from '../transaction/document-client';
import { consumerLogger, createBatchHandler, type ConsumerOptions, type SqsBatchHandler } from './create-consumer';
import { Inbox } from './inbox';
import type { AppliedLookup, HandlerContext, MessageContext } from './process-message';
import { TransactionBuilder } from './transaction-builder';

/**
 * A transactional consumer's business logic. Stage writes on `tx` and emit events with `tx.emit`; do not write to
 * DynamoDB directly, or those writes escape the exactly-once guarantee. Throw `PermanentError` when retrying cannot
 * help; any other throw means "retry".
 */
export type EventHandler<TData> = (envelope: EventEnvelope<TData>, tx: TransactionBuilder, context: HandlerContext) => Promise<void> | void;

/**
 * How often a transaction refused for contention alone is tried in all when the invocation's remaining time is unknown
 * (no Lambda context). With a Lambda context the retries go on while its remaining time allows (see
 * transaction/contention-retry.ts and docs/PROCESSING-MODES.md, "Contention").
 */
export const MAX_CONFLICT_ATTEMPTS = CONTENTION_ATTEMPTS_WITHOUT_DEADLINE;

/**
 * Runs `attempt` (the handler and the commit) until it is not refused for contention alone (`TransactionConflict`,
 * throttling), with jittered exponential back-off while the invocation's remaining time allows (the consumer's
 * `contentionRetry`); the last refusal is thrown when time runs out (the message is then retried by SQS). Before a
 * retry it also waits for the batch's commits under way to finish (one of them may hold the item, e.g. through a
 * staged Put whose key the item locks could not tell). The handler runs again on each attempt, with a fresh event
 * parsed again from the message: it only stages writes, so that is safe, and a change it made in place to the
 * previous attempt's event is gone.
 */
export async function commitWithConflictRetries<T>(attempt: () => Promise<T>, context: Pick<MessageContext, 'itemLocks' | 'retryOnContention'>): Promise<T & { readonly attempts: number }> {
  const { value, attempts } = await context.retryOnContention(attempt, { beforeRetry: () => context.itemLocks.settled() });
  return { ...value, attempts };
}

/** Options of {@link createTransactionalConsumer}. */
export interface TransactionalConsumerOptions<TData> extends ConsumerOptions<TData> {
  /**
   * The business logic, for each delivery of an event that was not processed before. It may run more than once per
   * delivery: again each time DynamoDB refuses the commit for contention alone (another transaction held one of its
   * items at that moment, `TransactionConflict`, or throttling), while the invocation's remaining time allows. Each run gets a fresh event, parsed again from the
   * message, and a new transaction; only the last run's staged writes commit. So stage writes on `tx` and keep effects
   * outside DynamoDB out of it (use lease or multi-step mode for those).
   */
  readonly handle: EventHandler<TData>;
  /** @default read from the environment once, at creation (`loadConsumerConfig`); throws `ConfigurationError` if incomplete */
  readonly config?: ConsumerConfig;
  /**
   * Where events emitted with `tx.emit` go, in the same transaction as the staged writes and the inbox record.
   * @default `Outbox.fromEnvironment(client)` when the IEF_OUTBOX_TABLE_NAME environment variable is set (the
   *   constructs set it for a subscriber deployed with `publishesEvents: true`), else none: `tx.emit` then fails
   */
  readonly outbox?: Outbox;
  /**
   * Read the inbox records of the batch's event ids in one BatchGetItem (eventually consistent) before any handler
   * runs, so a redelivery is acknowledged with no handler run and no write. Without it a redelivery runs the handler
   * and its transaction is cancelled on the live inbox record (2 write units per item of the transaction, by the AWS
   * rule for cancelled transactions); nothing is applied twice either way. The read costs one round trip per batch
   * and half a read unit per record (AWS charges a key with no item too), which pays only while redeliveries are
   * common (above about 1 record in 40 at on-demand prices).
   *
   * `'adaptive'` decides per batch from what this execution environment has seen: it reads while more than 1 in 40 of
   * its recent records (about the last hundred) were redeliveries, counted whether the read or their own write found
   * them, and skips the read otherwise (a new environment starts without it). `true` reads every batch, `false` none;
   * a {@link BatchReadPolicy} decides as it likes (e.g. `new AdaptiveBatchRead({ threshold: 0.1 })`, one per consumer).
   * A batch of one record never reads (its own write answers a redelivery in the same round trip), and a later copy of
   * an event in the same batch is recognised from the earlier one without a read.
   *
   * `true` waits for the read before any record starts (every redelivery answered by it: the fewest write units, one
   * round trip more on every batch). `'adaptive'` and a policy object keep the read off the first commits' path: a
   * record first in its lane (its FIFO group; its event id on a standard queue) commits at once and its own condition
   * answers a redelivery (a cancelled transaction, 2 write units per item, and a handler run); the read goes out beside
   * those commits, for the records behind another in their lane only, which find its answer when their turn comes. A
   * batch with no such record sends no read (docs/PROCESSING-MODES.md, "The batch read").
   *
   * The default since contention no longer costs receives (issue 40): copies of an event that two invocations hold at
   * once meet in their transactions on the inbox record (a TransactionConflict), and that conflict is retried inside
   * the invocation like any other contention (consumer option `contentionRetry`), so a skipped read never sends a valid
   * event to a dead-letter queue. Before, it did (issue 29's check found one in the example's Shipping subscriber).
   *
   * @default 'adaptive'
   */
  readonly batchRead?: BatchReadSetting;
}

/** What a factory of a transactional-mode consumer starts from: the checked config, the clock, the logger and the client. */
export interface TransactionalSetup {
  readonly config: ConsumerConfig;
  readonly now: () => Date;
  readonly logger: Logger;
  readonly client: DynamoDBDocumentClient;
}

/**
 * The start of every factory of a consumer deployed in `TRANSACTIONAL` mode (`factory` names it in a refusal): the
 * deployed mode checked first (a subscriber deployed in aggregate mode has no inbox variables, and the mismatch is the
 * news), then the config loaded and checked, the clock, the logger and the DocumentClient.
 */
export function transactionalSetup(options: ConsumerOptions<unknown> & { readonly config?: ConsumerConfig }, factory: string): TransactionalSetup {
  if (options.config === undefined) assertProcessingMode(loadConsumerBaseConfig(), PROCESSING_MODE.TRANSACTIONAL, factory);
  const config = options.config ?? loadConsumerConfig();
  assertProcessingMode(config, PROCESSING_MODE.TRANSACTIONAL, factory);
  return {
    config,
    now: options.now ?? (() => new Date()),
    logger: consumerLogger(config, PROCESSING_MODE.TRANSACTIONAL, options.logger),
    client: toDocumentClient(options.client),
  };
}

/**
 * The batch read of a consumer with an inbox (see `TransactionalConsumerOptions.batchRead`): a live inbox record answers
 * a redelivery before the handler runs; `false` turns it off.
 */
export function inboxBatchRead(
  setting: BatchReadSetting | undefined,
  client: DynamoDBDocumentClient,
  config: ConsumerConfig,
  now: () => Date = () => new Date(),
): { knownRecordsSource?: KnownRecordsSource; batchRead?: Exclude<BatchReadSetting, false>; appliedLookup: AppliedLookup } {
  const source: KnownRecordsSource = { client, tableName: config.inboxTableName, subscriberName: config.subscriberName, accepts: 'inbox-or-completed' };
  // whatever the batch read: an offloaded event whose object is missing is looked up before it is dead-lettered (R7-3)
  // BatchGetItem: a transactional or ordered consumer's only read permission on its inbox table
  const appliedLookup = appliedRecordLookup(source, now, 'batch-get');
  if (setting === false) return { appliedLookup };
  return { knownRecordsSource: source, batchRead: setting ?? true, appliedLookup };
}

/**
 * Creates the Lambda handler of a transactional consumer. Each event's staged writes, the outbox items of the events
 * it emits and its inbox record commit in one DynamoDB transaction, so a redelivered event is acknowledged without
 * being applied (or emitting) twice. A redelivered id with a different payload is dead-lettered as
 * `PayloadMismatchError`. Failed records are reported individually; the rest of the batch is unaffected.
 *
 * Call it at module scope: configuration is read once and a missing value fails the cold start.
 */
export function createTransactionalConsumer<TData = unknown>(options: TransactionalConsumerOptions<TData>): SqsBatchHandler {
  const { config, now, logger, client } = transactionalSetup(options, 'createTransactionalConsumer');
  const outbox = consumerOutbox(options.outbox, client, now);
  const inbox = new Inbox({
    client,
    tableName: config.inboxTableName,
    subscriberName: config.subscriberName,
    deduplicationWindowSeconds: config.deduplicationWindowSeconds,
    now,
    knownKeySchemas: outbox === undefined ? undefined : new Map([[outbox.tableName, outbox.keySchema]]),
  });
  return createBatchHandler<TData>({
    config,
    processingMode: PROCESSING_MODE.TRANSACTIONAL,
    options,
    logger,
    now,
    // a live inbox record answers a redelivery before the handler runs (when the batch reads)
    // decided per batch unless told: a skipped read's redelivery meets its copy in a transaction conflict, retried in the invocation
    ...inboxBatchRead(options.batchRead ?? 'adaptive', client, config, now),
    execute: async (envelope, context) => {
      // one token for every attempt of this delivery: an attempt whose commit landed unseen (its response lost, the
      // SDK's retry refused) is recognised by the next attempt as this delivery's own, so `processed`, not `duplicate`
      const writeToken = inbox.newWriteToken();
      const { tx, result, attempts } = await commitWithConflictRetries(async () => {
        const tx = new TransactionBuilder({
          prepareEvent: emittedEventPreparer({ outbox, subscriberName: config.subscriberName, consumedEventId: envelope.id }),
        });
        // a fresh event each attempt: a handler that changes its event in place must not change it twice
        await options.handle(context.freshEnvelope(), tx, context);
        return { tx, result: await inbox.commit(envelope, tx.items, context.fingerprint, await readyEvents(tx.events), context.itemLocks, writeToken) };
      }, context);
      if (result.unverifiedPayload !== undefined) {
        context.logger.warn('payload not verified', { detail: `${result.unverifiedPayload}; acknowledged as a duplicate`, fingerprint: context.fingerprint });
      }
      const fields = {
        stagedWrites: tx.items.length,
        ...(tx.events.length === 0 ? {} : { emittedEvents: tx.events.length }),
        ...(attempts === 1 ? {} : { attempts }),
      };
      return { outcome: result.outcome, fields };
    },
  });
}
