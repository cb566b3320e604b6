/**
 * Writes DynamoDB refuses as invalid. Those no retry can cure: staged values the DocumentClient cannot marshal (checked
 * before sending, with the SDK's own marshaller and the client's options), and requests DynamoDB refuses as invalid
 * whatever the item holds (`ValidationException`: a syntax error, an unused value, a low-level attribute value); both
 * are {@link InvalidWriteError}s, so the consumer dead-letters the message at once with the reason. And those that
 * depend on the item's current state, which another event can change ({@link ItemStateValidationError}): retried.
 */
import { convertToAttr, type marshallOptions } from '@aws-sdk/util-dynamodb';
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { InvalidWriteError, ItemStateValidationError } from '../errors';

/**
 * DynamoDB's messages for an expression that is valid but does not fit the item as it is now: another event may create
 * the map, the attribute or the type it needs. Checked against DynamoDB Local's answers (test/lambda/exactly-once-defects.int.test.ts)
 * and the messages the DynamoDB Developer Guide quotes for update expressions.
 */
export const ITEM_STATE_VALIDATION_MESSAGES: readonly RegExp[] = [
  /The document path provided in the update expression is invalid for update/i,
  /An operand in the update expression has an incorrect data type/i,
  /The provided expression refers to an attribute that does not exist in the item/i,
];

/** True when DynamoDB's validation message depends on the item's current state (see {@link ITEM_STATE_VALIDATION_MESSAGES}). */
export function dependsOnItemState(message: string): boolean {
  return ITEM_STATE_VALIDATION_MESSAGES.some((pattern) => pattern.test(message));
}

/** What a retry of a write refused in the item's current state means for the message. */
const RETRIED_IN_ITS_STATE =
  'the item does not have what the expression needs yet (another event may create it: on a standard queue events ' +
  "arrive in any order), so the message is retried; the queue's maxReceiveCount decides when it is dead-lettered";

/** What a handler's staged values must be, said with every marshalling error. */
const PLAIN_VALUES =
  'staged values are plain JavaScript values, as the DocumentClient writes them: strings, finite numbers within ' +
  'Number.MAX_SAFE_INTEGER (or NumberValue), booleans, null, arrays, plain objects, Sets and binary; not class ' +
  'instances such as Date (store date.toISOString()), and not low-level attribute values such as { N: "7" }; an ' +
  'undefined value is dropped (removeUndefinedValues), so a key attribute left undefined leaves the key incomplete';

/**
 * What an `undefined` expression value that an expression names (or the only values, all undefined) means: no client
 * option writes it (`removeUndefinedValues` drops it, and DynamoDB then refuses the expression as incomplete).
 */
const UNDEFINED_VALUE =
  'its value is undefined, which DynamoDB cannot store or compare (removeUndefinedValues would drop it and leave the ' +
  'request incomplete): check what computes it';

/** The expressions of an action that may name an expression attribute value. */
const EXPRESSIONS = ['UpdateExpression', 'ConditionExpression'] as const;

/** True when one of the action's expressions names the value `name` (`:total`, not `:totalNote`). */
function namedByAnExpression(operation: Readonly<Record<string, unknown>>, name: string): boolean {
  const named = new RegExp(`${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`);
  return EXPRESSIONS.some((expression) => typeof operation[expression] === 'string' && named.test(operation[expression]));
}

/** The parts of a TransactWriteItems action the DocumentClient marshals. */
const MARSHALLED_PARTS = ['Item', 'Key', 'ExpressionAttributeValues'] as const;

/** The marshalling options of a DocumentClient (`DynamoDBDocumentClient.from(client, { marshallOptions })`). */
export function marshallOptionsOf(client: { readonly config: object }): marshallOptions | undefined {
  const translateConfig = (client.config as { translateConfig?: { marshallOptions?: marshallOptions } }).translateConfig;
  return translateConfig?.marshallOptions;
}

/**
 * Throws {@link InvalidWriteError} for the first action whose `Item`, `Key` or `ExpressionAttributeValues` the
 * DocumentClient could not marshal with `options`, naming the action (`describe`) and the SDK's reason. The SDK would
 * throw the same error from `send`, where it looks like any other failure and is retried.
 */
export function assertWritable(actions: readonly TransactWriteItem[], describe: (index: number) => string, options: marshallOptions | undefined): void {
  actions.forEach((action, index) => {
    for (const operation of Object.values(action)) {
      if (operation === undefined) continue;
      for (const part of MARSHALLED_PARTS) {
        const attributes = (operation as Record<string, unknown>)[part];
        if (attributes === undefined || attributes === null) continue;
        // attribute by attribute, as lib-dynamodb does: an attribute named 'constructor' must not make the map a class instance
        for (const [name, value] of Object.entries(attributes)) {
          if (value === undefined && part === 'ExpressionAttributeValues' && (namedByAnExpression(operation as Record<string, unknown>, name) || Object.values(attributes).every((other) => other === undefined))) {
            throw new InvalidWriteError(`action ${index} (${describe(index)}): its ${part} attribute '${name}' cannot be written: ${UNDEFINED_VALUE}`);
          }
          if (value === undefined && options?.removeUndefinedValues === true) continue;
          try {
            convertToAttr(value, options);
          } catch (error) {
            throw new InvalidWriteError(
              `action ${index} (${describe(index)}): its ${part} attribute '${name}' cannot be written: ${(error as Error).message}; ${PLAIN_VALUES}`,
              { cause: error },
            );
          }
        }
      }
    }
  });
}

/**
 * The {@link InvalidWriteError} for a write DynamoDB refused as invalid: a `ValidationException` (the request as a
 * whole, e.g. `Incorrect operand type for operator or function; operator: ADD, operand type: MAP`), or a cancelled
 * transaction whose reason for some action is `ValidationError`; or the {@link ItemStateValidationError} when the
 * refusal depends on the item's current state (see {@link ITEM_STATE_VALIDATION_MESSAGES}), which is retried. Call it
 * after `limitErrorOf`, which claims the ValidationExceptions that are limits. Returns `undefined` for any other error.
 */
export function invalidWriteErrorOf(error: unknown, describe: (index: number) => string): InvalidWriteError | ItemStateValidationError | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'ValidationException') {
    if (dependsOnItemState(error.message)) {
      return new ItemStateValidationError(`DynamoDB refused the write in the item's current state: ${error.message}; ${RETRIED_IN_ITS_STATE}`, { cause: error });
    }
    return new InvalidWriteError(`DynamoDB refused the write as invalid: ${error.message}; ${PLAIN_VALUES}`, { cause: error });
  }
  if (error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: ReadonlyArray<{ Code?: string; Message?: string }> }).CancellationReasons ?? [];
  const index = reasons.findIndex((reason) => reason.Code === 'ValidationError');
  if (index < 0) return undefined;
  const message = reasons[index]?.Message ?? '(no message)';
  if (dependsOnItemState(message)) {
    return new ItemStateValidationError(`DynamoDB refused action ${index} (${describe(index)}) in the item's current state: ${message}; ${RETRIED_IN_ITS_STATE}`, { cause: error });
  }
  return new InvalidWriteError(`DynamoDB refused action ${index} (${describe(index)}) as invalid: ${message}`, { cause: error });
}
