/**
 * `createOrderedConsumer`: a transactional consumer that applies each aggregate's events in their sequence, each once
 * (docs/ORDERED-DELIVERY.md). The handler's staged writes, the inbox record and the subscriber's sequence fence commit
 * in ONE transaction; the fence's condition admits only the aggregate's next sequence.
 */
import { CONSUMER_METRICS } from '../contract/metric-names';
import type { ConsumerConfig } from '../config';
import { PROCESSING_MODE } from '../contract/environment';
import { createBatchHandler, type SqsBatchHandler } from '../consumer/create-consumer';
import { Inbox } from '../consumer/inbox';
import { TransactionBuilder } from '../consumer/transaction-builder';
import type { BatchReadSetting } from '../consumer/batch-read-policy';
import { commitWithConflictRetries, inboxBatchRead, transactionalSetup, type EventHandler } from '../consumer/transactional-consumer';
import type { ConsumerOptions } from '../consumer/create-consumer';
import { TransactionCancelledError } from '../errors';
import { cancellationItem, CONDITIONAL_CHECK_FAILED, isTransactionCanceled } from '../transaction/cancellation';
import { orderedPositionOf } from './ordered-position';
import { fencePut, fenceRefusal, passedByFence } from './sequence-fence';
import { SequenceReusedError } from './ordered-errors';
import { findSkip } from './skipped-events';
import { ORDERED_INBOX_ITEM } from '../contract/ordered-wire-format';
import { readWindowRecord, recordWindow, smallestWindowSeconds } from './deduplication-window';

/** Options of {@link createOrderedConsumer}. */
export interface OrderedConsumerOptions<TData> extends ConsumerOptions<TData> {
  /**
   * The business logic, run for the aggregate's next event only, at most once per committed application (it may run
   * again when a commit loses a conflict, with a fresh event; only the last run's writes commit). Stage writes on `tx`;
   * `tx.emit` is not available on the ordered path (emit from a transactional subscriber of the standard path instead).
   */
  readonly handle: EventHandler<TData>;
  /** @default read from the environment once, at creation (`loadConsumerConfig`); throws `ConfigurationError` if incomplete */
  readonly config?: ConsumerConfig;
  /**
   * Read the inbox records of the batch's event ids in one BatchGetItem before any handler runs, so a redelivery of an
   * applied event is acknowledged with no handler run and no write (as `TransactionalConsumerOptions.batchRead`; a
   * redelivery the read misses is still a duplicate, by its inbox record or the fence, in a cancelled transaction).
   * @default true
   */
  readonly batchRead?: BatchReadSetting;
}

/**
 * Creates the Lambda handler of an ordered subscriber (deployed in `TRANSACTIONAL` mode on an ordered subscriber's FIFO
 * queue). Per message: the envelope's aggregate (`partitionkey`) and `sequence` are read; the handler stages its writes;
 * the writes, the inbox record and the fence Put (`applied = sequence - 1`, or absent for sequence 1) commit together.
 * - the next sequence: applied, `processed`;
 * - a sequence already applied (the inbox record, or, after the inbox record expired, the fence): `duplicate`, nothing applied;
 * - a sequence at or below the fence of an event with no inbox record that is younger than the deduplication window
 *   (after a raise, the window before it for an event written before it: its record's lifetime; `deduplication-window.ts`),
 *   aged from the runtime's write time (`iefwrittenat`, not the producer-given `time`; none: young) (it was never
 *   applied): if an operator's `fence skip` dropped this very event, `duplicate` with a WARN line naming the skip; else
 *   (the outbox's head went back, a restored or replaced table) `SequenceReusedError`, dead-lettered, never acknowledged;
 * - a later sequence (an earlier one is missing): `failed` with `SequenceGapError`, nothing applied; SQS retries it,
 *   and on a FIFO queue the group's later messages wait behind it. It is never skipped.
 * A message without an ordered position is dead-lettered (`NotAnOrderedEventError`).
 */
export function createOrderedConsumer<TData = unknown>(options: OrderedConsumerOptions<TData>): SqsBatchHandler {
  const { config, now, logger, client } = transactionalSetup(options, 'createOrderedConsumer');
  const inbox = new Inbox({
    client,
    tableName: config.inboxTableName,
    subscriberName: config.subscriberName,
    deduplicationWindowSeconds: config.deduplicationWindowSeconds,
    now,
  });
  // the window this consumer runs with goes into the subscriber's window record once per instance, before its first
  // application (one BatchGetItem, and a PutItem only when the window changed); a failure is logged and retried a
  // minute later, never failing a message: until it is recorded, the stored window (the older one) is the smaller rule
  let windowRecorded: Promise<void> | undefined;
  let retryWindowAfter = 0;
  const recordOwnWindow = (): Promise<void> => {
    if (windowRecorded === undefined && now().getTime() >= retryWindowAfter) {
      windowRecorded = recordWindow(client, config.inboxTableName, config.subscriberName, config.deduplicationWindowSeconds, now).then(
        (result) => {
          if (result === 'recorded') logger.info('deduplication window recorded', { windowSeconds: config.deduplicationWindowSeconds });
        },
        (error: unknown) => {
          windowRecorded = undefined;
          retryWindowAfter = now().getTime() + 60_000;
          logger.warn('deduplication window not recorded', { windowSeconds: config.deduplicationWindowSeconds, error: error instanceof Error ? error.name : String(error), detail: 'retried in a minute; until then the stored window is the rule' });
        },
      );
    }
    return windowRecorded ?? Promise.resolve();
  };
  return createBatchHandler<TData>({
    config,
    processingMode: PROCESSING_MODE.TRANSACTIONAL,
    ordered: true,
    additionalMetrics: [CONSUMER_METRICS.SEQUENCE_GAPS],
    options,
    logger,
    now,
    ...inboxBatchRead(options.batchRead, client, config, now),
    execute: async (envelope, context) => {
      await recordOwnWindow();
      const position = orderedPositionOf(context.sqsRecord.body);
      const writeToken = inbox.newWriteToken();
      // an ordered subscriber's inbox record says so (review r38, R38-5): `inbox forget` refuses it without --subscriber-output
      const orderedRecord = { [ORDERED_INBOX_ITEM.AGGREGATE_ATTRIBUTE]: position.aggregateId, [ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE]: position.sequence };
      try {
        const { tx, result, attempts } = await commitWithConflictRetries(async () => {
          const tx = new TransactionBuilder();
          await options.handle(context.freshEnvelope(), tx, context);
          const staged = [...tx.items, { Put: fencePut(config.inboxTableName, config.subscriberName, position, envelope.id, now()) }];
          return { tx, result: await inbox.commit(envelope, staged, context.fingerprint, [], context.itemLocks, writeToken, orderedRecord) };
        }, context);
        const fields = { aggregateId: position.aggregateId, sequence: position.sequence, stagedWrites: tx.items.length, ...(attempts === 1 ? {} : { attempts }) };
        // a live inbox record of this event: applied. Its fence may yet stand right before this position: a command
        // retried after an outbox restore wrote the applied event again, at a later sequence (review r38, R38-9). The
        // fence then passes it alone (its own condition, nothing else written), else the aggregate waits forever
        if (result.outcome === 'duplicate' && (await passedByFence(client, config.inboxTableName, config.subscriberName, position, envelope.id, now()))) {
          logger.info('duplicate passed by the fence', { eventId: envelope.id, aggregateId: position.aggregateId, sequence: position.sequence, detail: 'applied before at another sequence (written again after an outbox restore): the fence moved past it, nothing applied' });
          return { outcome: 'duplicate', fields: { ...fields, recognisedBy: 'inbox record; the fence passed it' } };
        }
        return { outcome: result.outcome, fields };
      } catch (error) {
        // the fence is the last staged write: its failed condition says duplicate or gap
        const cause = error instanceof TransactionCancelledError ? error.cause : undefined;
        if (!isTransactionCanceled(cause)) throw error;
        const fenceIndex = error instanceof TransactionCancelledError ? error.cancellationReasonCodes.length - 2 : -1;
        if ((error as TransactionCancelledError).cancellationReasonCodes[fenceIndex] !== CONDITIONAL_CHECK_FAILED) throw error;
        // the inbox record is the last action: the inbox passed (else `commit` had answered duplicate), so no live record
        // of this event exists; if the event is younger than the window, a record would be live had it been applied
        const codes = (error as TransactionCancelledError).cancellationReasonCodes;
        const unrecorded = codes[codes.length - 1] !== CONDITIONAL_CHECK_FAILED;
        // aged from the runtime's write time, never from the producer-given `time` (a backdated fact would look old
        // and be acknowledged unapplied); without a write time the age is unprovable: young (dead-lettered, not lost)
        const age = position.writtenAt === undefined ? undefined : Math.max(0, now().getTime() - position.writtenAt);
        // against the smallest window its record could have been written under: a raised window does not lengthen the
        // records written before the raise (the window record says; read on this path only, never for a live record)
        const young =
          age === undefined ||
          (age < config.deduplicationWindowSeconds * 1000 &&
            (!unrecorded || age < smallestWindowSeconds(config.deduplicationWindowSeconds, await readWindowRecord(client, config.inboxTableName, config.subscriberName, 'batch-get'), position.writtenAt) * 1000));
        let outcome: 'duplicate';
        try {
          outcome = fenceRefusal(cancellationItem(cause, fenceIndex), position, envelope.id, unrecorded && young);
        } catch (refusal) {
          // never applied, below the fence: an event an operator's `fence skip` dropped, or a new one under a passed sequence
          if (!(refusal instanceof SequenceReusedError) || !(unrecorded && young)) throw refusal;
          const skip = await findSkip(client, config.inboxTableName, config.subscriberName, position, envelope.id, position.writtenAt);
          if (skip === undefined) throw refusal;
          logger.warn('dropped by fence skip', { eventId: envelope.id, aggregateId: position.aggregateId, sequence: position.sequence, skip: `${skip.reason} (at ${skip.at})`, detail: 'acknowledged, not applied: an operator skipped it on purpose' });
          return { outcome: 'duplicate', fields: { aggregateId: position.aggregateId, sequence: position.sequence, recognisedBy: 'fence skip' } };
        }
        return { outcome, fields: { aggregateId: position.aggregateId, sequence: position.sequence, recognisedBy: 'sequence fence' } };
      }
    },
  });
}
