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

/** A transaction that breaks a DynamoDB TransactWriteItems limit; detected before any request is sent. */
export class TransactionLimitError extends EventFlowError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TransactionLimitError';
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
