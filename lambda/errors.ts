/**
 * Errors raised by the idempotent-event-flow runtime. All extend {@link EventFlowError}, set `name` explicitly
 * (so it survives minification) and accept `{ cause }`.
 */

/** Base class of every error this runtime raises. */
export class EventFlowError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EventFlowError';
  }
}

/** A message body that is not a valid event envelope. Retrying cannot help, so the consumer dead-letters it at once. */
export class MalformedEnvelopeError extends EventFlowError {
  /** Why the body was rejected, e.g. `field 'id' must be a non-empty string, but was a number`. */
  public readonly reason: string;

  public constructor(reason: string, options?: ErrorOptions) {
    super(`malformed event envelope: ${reason}`, options);
    this.name = 'MalformedEnvelopeError';
    this.reason = reason;
  }
}

/**
 * Thrown by a consumer's handler to say "retrying cannot help" (for example, the event refers to an account that
 * will never exist). The consumer sends the message to the dead-letter queue at once, with this error's message as
 * the reason, instead of waiting for SQS to redrive it after `maxReceiveCount` receives.
 */
export class PermanentError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/**
 * The event's data failed the subscriber's schema (the `parse` option threw). Retrying cannot fix a payload, so the
 * message is dead-lettered at once with this error's message as the reason.
 */
export class SchemaValidationError extends PermanentError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SchemaValidationError';
  }
}

/**
 * An offloaded event's data (claim-check, docs/LARGE-EVENTS.md) cannot be had as its envelope describes it: the object
 * is missing, its size or SHA-256 differs from the envelope's `iefdatasize` / `iefdatasha256`, or the reference is not
 * one this flow reads. No retry brings the right bytes back, so the message is dead-lettered at once, alone, with this
 * reason. (A failure to READ, such as throttling or a network error, is not this error: the message is retried.)
 */
export class PayloadUnavailableError extends PermanentError {
  /** The event's `dataref`, when it had one. */
  public readonly dataref?: string;

  public constructor(message: string, dataref?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PayloadUnavailableError';
    if (dataref !== undefined) this.dataref = dataref;
  }
}

/**
 * S3 refused to read an offloaded event's data (`403 AccessDenied`), and the runtime could not learn that the object
 * is missing: either it is there and this function may not read it (no `s3:GetObject` on the key, or no `kms:Decrypt`
 * on the bucket's key), or S3 also refused to list the key (without `s3:ListBucket`, S3 answers a missing key with 403
 * instead of 404). A grant can cure it, so it is not permanent: the message is retried, and the queue's
 * `maxReceiveCount` moves it to the dead-letter queue. The message says which case it is and which grants to check.
 */
export class PayloadAccessDeniedError extends Error {
  /** The event's `dataref`. */
  public readonly dataref: string;

  public constructor(message: string, dataref: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PayloadAccessDeniedError';
    this.dataref = dataref;
  }
}

/**
 * A message id arrived again with a different payload than the one already processed under it. That is a producer
 * bug (an id reused for another event), not a redelivery, so it is rejected loudly (dead-lettered) instead of being
 * acknowledged as a duplicate.
 */
export class PayloadMismatchError extends PermanentError {
  /** The event id that was reused. */
  public readonly eventId: string;
  /** Fingerprint of the payload processed first. */
  public readonly storedFingerprint: string;
  /** Fingerprint of the payload that just arrived. */
  public readonly receivedFingerprint: string;

  public constructor(details: { eventId: string; storedFingerprint: string; receivedFingerprint: string; subscriber: string }) {
    super(
      `event id '${details.eventId}' was already processed by subscriber '${details.subscriber}' with a different payload ` +
        `(stored ${details.storedFingerprint}, received ${details.receivedFingerprint}); an event id must not be reused for another event`,
    );
    this.name = 'PayloadMismatchError';
    this.eventId = details.eventId;
    this.storedFingerprint = details.storedFingerprint;
    this.receivedFingerprint = details.receivedFingerprint;
  }
}

/**
 * Thrown by a lease or step effect to say "it failed and did NOT take effect, so it is safe to run again" (for example
 * an HTTP 4xx that the remote side rejected before acting, or a connection refused). The lease is released at once
 * and the message is retried. Any other error (except {@link PermanentError}) means "outcome unknown".
 */
export class RetryableError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

/**
 * The message is blocked for an operator: a step (or a lease-protected effect) may or may not have taken effect, so
 * running it again could apply it twice. The message goes to the dead-letter queue with this error as the reason; the
 * processing record keeps the step PROCESSING until an operator marks it SUCCESS or TRY_AGAIN and redrives it.
 */
export class MessageBlockedError extends EventFlowError {
  /** The blocked event's id. */
  public readonly eventId: string;
  /** The step whose outcome is unknown (`effect` in lease mode). */
  public readonly step: string;
  /**
   * The version of the processing record as blocked, when known: the runtime records the dead letter's send on that
   * version only (see `PROCESSING_RECORD.BLOCKED_DEAD_LETTER_SQS_MESSAGE_ID_ATTRIBUTE`).
   */
  public readonly recordVersion?: number;

  public constructor(message: string, details: { eventId: string; step: string; recordVersion?: number }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MessageBlockedError';
    this.eventId = details.eventId;
    this.step = details.step;
    if (details.recordVersion !== undefined) this.recordVersion = details.recordVersion;
  }
}

/**
 * Another delivery of the same message holds a live lease on it. The message is reported as a batch item failure,
 * so SQS delivers it again after the visibility timeout; it is never processed in parallel.
 */
export class MessageInProgressError extends EventFlowError {
  /** The event's id. */
  public readonly eventId: string;
  /** When the other delivery's lease ends, in epoch milliseconds. */
  public readonly leaseExpiresAtEpochMilliseconds: number;

  public constructor(message: string, details: { eventId: string; leaseExpiresAtEpochMilliseconds: number }) {
    super(message);
    this.name = 'MessageInProgressError';
    this.eventId = details.eventId;
    this.leaseExpiresAtEpochMilliseconds = details.leaseExpiresAtEpochMilliseconds;
  }
}

/**
 * A worker's fenced write found that it no longer owns the message's record (its lease expired and another delivery
 * took the record over, or an operator changed it). The stale worker stops; it never overwrites the newer owner's state.
 */
export class LeaseLostError extends EventFlowError {
  /** The event's id. */
  public readonly eventId: string;

  public constructor(message: string, details: { eventId: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LeaseLostError';
    this.eventId = details.eventId;
  }
}

/**
 * An aggregate's conditional update kept losing to concurrent writers after every attempt; the message is retried
 * later (a batch item failure), nothing was applied.
 */
export class ConcurrentModificationError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConcurrentModificationError';
  }
}

/** A transaction that breaks a DynamoDB TransactWriteItems limit; detected before any request is sent. */
export class TransactionLimitError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TransactionLimitError';
  }
}

/**
 * A write that DynamoDB can never accept, whatever the retry: a staged value the DocumentClient cannot marshal (`NaN`,
 * `Infinity`, a number past `Number.MAX_SAFE_INTEGER`, a class instance such as `Date`), or a request DynamoDB refuses
 * as invalid (`ValidationException`, e.g. a low-level `{ N: '7' }` attribute value where a plain number belongs). The
 * consumer dead-letters the message at once with this reason instead of retrying it until SQS redrives it.
 */
export class InvalidWriteError extends PermanentError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidWriteError';
  }
}

/**
 * A write DynamoDB refused as invalid in the item's CURRENT state (`ValidationException`), which another event can
 * change: a document path into a map that does not exist yet (`SET days.#day = :v` before the event that creates
 * `days`), an operand of the wrong type in the stored item, an attribute the expression reads that the item lacks.
 * On a standard queue events arrive in any order, so it is not permanent: the message fails like any other error and
 * is retried, and the queue's maxReceiveCount decides when it goes to the dead-letter queue.
 */
export class ItemStateValidationError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ItemStateValidationError';
  }
}

/** An event whose envelope does not fit the SNS/SQS message limit or the DynamoDB item limit; detected before sending. */
export class EventTooLargeError extends EventFlowError {
  /** The event's id. */
  public readonly eventId: string;
  /** The measured size, in bytes. */
  public readonly sizeBytes: number;
  /** The limit that was exceeded, in bytes. */
  public readonly limitBytes: number;

  public constructor(message: string, details: { eventId: string; sizeBytes: number; limitBytes: number }) {
    super(message);
    this.name = 'EventTooLargeError';
    this.eventId = details.eventId;
    this.sizeBytes = details.sizeBytes;
    this.limitBytes = details.limitBytes;
  }
}

/** An event that cannot be built (empty type, unserializable data, ...); detected before sending. */
export class InvalidEventError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidEventError';
  }
}

/** What one action of a cancelled transaction was, from the caller's point of view. */
export type TransactionActionKind =
  /** An outbox event Put written by the producer. */
  | 'event'
  /** The consumer's inbox record Put. */
  | 'inbox'
  /** One of the caller's own (business) actions. */
  | 'item';

/** One action of a cancelled transaction whose cancellation reason was not `None`. */
export interface FailedTransactionAction {
  /** Position of the action in the TransactItems list sent to DynamoDB. */
  readonly index: number;
  /** Whose action it was. */
  readonly kind: TransactionActionKind;
  /** DynamoDB's reason code, e.g. `ConditionalCheckFailed`, `TransactionConflict`, `ThrottlingError`. */
  readonly code: string;
  /** DynamoDB's reason message, when it sent one. */
  readonly reasonMessage?: string;
  /** A human description of the action, e.g. `event 'e-1' (duplicate id?)` or `Put on table 'Orders'`. */
  readonly description: string;
  /** The event id, for `event` and `inbox` actions. */
  readonly eventId?: string;
}

/**
 * DynamoDB cancelled a TransactWriteItems call (`TransactionCanceledException`): nothing was written.
 * Carries the ordered reason codes (one per action, `None` for actions that did not fail) and the failed actions.
 */
export class TransactionCancelledError extends EventFlowError {
  /** One code per action, in the order the actions were sent (`None` where the action did not fail). */
  public readonly cancellationReasonCodes: readonly string[];
  /** The actions whose code is not `None`. */
  public readonly failedActions: readonly FailedTransactionAction[];

  public constructor(
    message: string,
    details: { cancellationReasonCodes: readonly string[]; failedActions: readonly FailedTransactionAction[] },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'TransactionCancelledError';
    this.cancellationReasonCodes = details.cancellationReasonCodes;
    this.failedActions = details.failedActions;
  }

  /** True when an outbox event Put failed its `attribute_not_exists` condition: an event with that id was already written. */
  public get isDuplicateEvent(): boolean {
    return this.failedActions.some((action) => action.kind === 'event' && action.code === 'ConditionalCheckFailed');
  }
}

/**
 * DynamoDB refused an outbox item because its key attributes do not fit the outbox table's key schema: the producer
 * environment (`IEF_OUTBOX_PARTITION_KEY_NAME`, `IEF_OUTBOX_SORT_KEY_NAME`, set from `OutboxTable.fromTableAttributes`)
 * names other key attributes than the table has, or the table's keys are not strings. Nothing was written; no retry can
 * help until the configuration is fixed. Its `cause` is DynamoDB's `ValidationException`.
 */
export class OutboxKeySchemaError extends EventFlowError {
  /** The outbox table that refused the item. */
  public readonly tableName: string;

  public constructor(message: string, details: { tableName: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OutboxKeySchemaError';
    this.tableName = details.tableName;
  }
}
