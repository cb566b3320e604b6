/** Processing one SQS record: parse, run the handler, commit with the inbox record, or dead-letter. */
import { parseEnvelope, type EventEnvelope } from '../envelope';
import { PermanentError, TransactionLimitError } from '../errors';
import type { Logger } from '../logger';
import type { RecordOutcome } from './batch';
import type { DeadLetterPublisher } from './dead-letter';
import type { Inbox } from './inbox';
import type { SQSRecord } from './sqs';
import { TransactionBuilder } from './transaction-builder';

/** What a handler gets besides the envelope and the transaction. */
export interface HandlerContext {
  /** The SQS record that carried the event. */
  readonly sqsRecord: SQSRecord;
  /** The Lambda context, when the runtime passed one. */
  readonly lambdaContext?: unknown;
  /** A logger whose lines carry the subscriber, event id, event type and SQS message id. */
  readonly logger: Logger;
}

/**
 * A consumer's business logic. Stage writes on `tx`; do not write to DynamoDB directly, or those writes escape the
 * exactly-once guarantee. Throw {@link PermanentError} when retrying cannot help; any other throw means "retry".
 */
export type EventHandler<TData> = (envelope: EventEnvelope<TData>, tx: TransactionBuilder, context: HandlerContext) => Promise<void> | void;

/** What {@link processRecord} works with. */
export interface RecordDependencies<TData> {
  readonly handle: EventHandler<TData>;
  readonly inbox: Inbox;
  readonly subscriberName: string;
  /** Absent when no dead-letter queue is configured: permanent failures are then left to SQS redrive. */
  readonly deadLetter?: DeadLetterPublisher;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly lambdaContext?: unknown;
}

/** Names of errors that no retry can cure: the message goes to the dead-letter queue at once. */
const PERMANENT_ERROR_NAMES: ReadonlySet<string> = new Set(['PermanentError', 'TransactionLimitError']);

/**
 * True for {@link PermanentError} and {@link TransactionLimitError} (a handler that stages more than a transaction can
 * hold will do so on every delivery); also by name, so an error from a second bundled copy of this runtime counts.
 */
function isPermanent(error: unknown): error is Error {
  return (
    error instanceof PermanentError ||
    error instanceof TransactionLimitError ||
    (error instanceof Error && PERMANENT_ERROR_NAMES.has(error.name))
  );
}

function receiveCount(record: SQSRecord): number | undefined {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : undefined;
}

/** Sends the record to the dead-letter queue; `failed` (so SQS keeps it) if there is none or the send fails. */
async function deadLetter<TData>(
  record: SQSRecord,
  error: Error,
  deps: RecordDependencies<TData>,
  log: Logger,
  fields: Record<string, unknown>,
  eventId?: string,
): Promise<RecordOutcome> {
  if (deps.deadLetter === undefined) {
    log.warn('failed', { ...fields, outcome: 'failed', error, detail: 'permanent failure, but no dead-letter queue is configured; left for SQS redrive' });
    return 'failed';
  }
  try {
    await deps.deadLetter.publish({
      body: record.body,
      errorName: error.name,
      errorMessage: error.message,
      subscriber: deps.subscriberName,
      sourceMessageId: record.messageId,
      approximateReceiveCount: receiveCount(record),
      eventId,
    });
  } catch (publishError) {
    log.error('failed', { ...fields, outcome: 'failed', error, publishError, detail: 'dead-letter send failed; left for SQS redrive' });
    return 'failed';
  }
  log.error('dead-lettered', { ...fields, outcome: 'dead-lettered', error });
  return 'dead-lettered';
}

/** Processes one record and returns its outcome; never throws. Logs one line per outcome. */
export async function processRecord<TData>(record: SQSRecord, deps: RecordDependencies<TData>): Promise<RecordOutcome> {
  const startedAt = deps.now().getTime();
  const elapsed = (): Record<string, unknown> => ({ durationMilliseconds: deps.now().getTime() - startedAt });
  let log = deps.logger.child({ sqsMessageId: record.messageId });
  let envelope: EventEnvelope<TData>;
  try {
    envelope = parseEnvelope<TData>(record.body);
  } catch (error) {
    return deadLetter(record, error as Error, deps, log, elapsed());
  }
  log = log.child({ eventId: envelope.id, eventType: envelope.type });
  try {
    const tx = new TransactionBuilder();
    await deps.handle(envelope, tx, { sqsRecord: record, lambdaContext: deps.lambdaContext, logger: log });
    const outcome = await deps.inbox.commit(envelope, tx.items);
    log.info(outcome, { ...elapsed(), outcome, stagedWrites: tx.items.length });
    return outcome;
  } catch (error) {
    if (isPermanent(error)) return deadLetter(record, error, deps, log, elapsed(), envelope.id);
    log.warn('failed', { ...elapsed(), outcome: 'failed', error });
    return 'failed';
  }
}
