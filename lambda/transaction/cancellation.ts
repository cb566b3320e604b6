/** Reading DynamoDB's `TransactionCanceledException`. */
import { FailedTransactionAction, TransactionActionKind, TransactionCancelledError } from '../errors';

/** DynamoDB's cancellation reason code for an action whose condition expression was false. */
export const CONDITIONAL_CHECK_FAILED = 'ConditionalCheckFailed';

/** DynamoDB's cancellation reason code for an action that did not fail. */
export const NO_FAILURE = 'None';

/** DynamoDB's cancellation reason code for an action whose item another transaction was working on at that moment. */
export const TRANSACTION_CONFLICT = 'TransactionConflict';

/** A single write (not a transaction) that ran into a transaction in progress on the same item. */
export function isTransactionConflict(error: unknown): boolean {
  return error instanceof Error && error.name === 'TransactionConflictException';
}

/** The part of a `TransactionCanceledException` this runtime reads. */
export interface TransactionCanceledLike {
  readonly name: string;
  readonly message: string;
  readonly CancellationReasons?: ReadonlyArray<{ readonly Code?: string; readonly Message?: string; readonly Item?: Readonly<Record<string, unknown>> }>;
}

/**
 * The item an action's condition failed on, when the action asked for it with `ReturnValuesOnConditionCheckFailure:
 * 'ALL_OLD'`: `CancellationReasons[index].Item` of a cancelled transaction. In the low-level wire format
 * (`{ attr: { S: '...' } }`): the DocumentClient does not translate errors. Read values with {@link storedString}.
 */
export function cancellationItem(error: TransactionCanceledLike, index: number): Readonly<Record<string, unknown>> | undefined {
  return error.CancellationReasons?.[index]?.Item;
}

/** The item a single conditional write failed on (`ConditionalCheckFailedException.Item`, with `ALL_OLD`). */
export function conditionalCheckItem(error: unknown): Readonly<Record<string, unknown>> | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const item = (error as { Item?: unknown }).Item;
  return typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : undefined;
}

/** A string attribute of a returned item, whether it came in the wire format (`{ S: 'x' }`) or translated (`'x'`). */
export function storedString(item: Readonly<Record<string, unknown>> | undefined, attribute: string): string | undefined {
  const value = item?.[attribute];
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return undefined;
}

/** True for the SDK's `TransactionCanceledException` (checked by name, so two bundled SDK copies still match). */
export function isTransactionCanceled(error: unknown): error is TransactionCanceledLike {
  return error instanceof Error && error.name === 'TransactionCanceledException';
}

/** True for the SDK's `ConditionalCheckFailedException` of a single conditional write. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The ordered reason codes, one per action (`None` where the action did not fail). */
export function cancellationReasonCodes(error: TransactionCanceledLike): string[] {
  return (error.CancellationReasons ?? []).map((reason) => reason.Code ?? NO_FAILURE);
}

/** How the caller describes action `index` of the cancelled transaction. */
export interface ActionDescription {
  readonly kind: TransactionActionKind;
  readonly description: string;
  readonly eventId?: string;
}

/** Turns a `TransactionCanceledException` into a {@link TransactionCancelledError} that says which actions failed and why. */
export function toTransactionCancelledError(
  error: TransactionCanceledLike,
  describe: (index: number) => ActionDescription,
): TransactionCancelledError {
  const codes = cancellationReasonCodes(error);
  const failedActions: FailedTransactionAction[] = [];
  (error.CancellationReasons ?? []).forEach((reason, index) => {
    const code = reason.Code ?? NO_FAILURE;
    if (code === NO_FAILURE) return;
    failedActions.push({
      index,
      code,
      ...(reason.Message !== undefined ? { reasonMessage: reason.Message } : {}),
      ...describe(index),
    });
  });
  const summary =
    failedActions.length === 0
      ? error.message
      : failedActions.map((action) => `action ${action.index} (${action.description}): ${action.code}`).join('; ');
  return new TransactionCancelledError(`transaction cancelled, nothing was written: ${summary}`, { cancellationReasonCodes: codes, failedActions }, { cause: error });
}
