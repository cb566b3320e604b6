/**
 * Writes no retry can cure: staged values the DocumentClient cannot marshal (checked before sending, with the SDK's
 * own marshaller and the client's options), and requests DynamoDB refuses as invalid (`ValidationException`). Both are
 * {@link InvalidWriteError}s, so the consumer dead-letters the message at once with the reason.
 */
import { convertToAttr, type marshallOptions } from '@aws-sdk/util-dynamodb';
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { InvalidWriteError } from '../errors';

/** What a handler's staged values must be, said with every marshalling error. */
const PLAIN_VALUES =
  'staged values are plain JavaScript values, as the DocumentClient writes them: strings, finite numbers within ' +
  'Number.MAX_SAFE_INTEGER (or NumberValue), booleans, null, arrays, plain objects, Sets and binary; not class ' +
  'instances such as Date (store date.toISOString()), and not low-level attribute values such as { N: "7" }';

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
 * transaction whose reason for some action is `ValidationError`. Call it after `limitErrorOf`, which claims the
 * ValidationExceptions that are limits. Returns `undefined` for any other error.
 */
export function invalidWriteErrorOf(error: unknown, describe: (index: number) => string): InvalidWriteError | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'ValidationException') {
    return new InvalidWriteError(`DynamoDB refused the write as invalid: ${error.message}; ${PLAIN_VALUES}`, { cause: error });
  }
  if (error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: ReadonlyArray<{ Code?: string; Message?: string }> }).CancellationReasons ?? [];
  const index = reasons.findIndex((reason) => reason.Code === 'ValidationError');
  if (index < 0) return undefined;
  return new InvalidWriteError(`DynamoDB refused action ${index} (${describe(index)}) as invalid: ${reasons[index]?.Message ?? '(no message)'}`, { cause: error });
}
