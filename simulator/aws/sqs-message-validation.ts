/**
 * The checks SQS makes on a message before it accepts it (SendMessage API reference; "Message attribute components"
 * in sqs-message-metadata.html), so a consumer that would be refused by SQS is refused by the simulator too.
 */
import type { SqsMessageAttribute } from './sqs-messages';
import { SqsError } from './sqs-errors';

/** Largest message SQS accepts, body and attributes together: 1 MiB (SendMessage `MessageBody`). */
export const MAX_SQS_MESSAGE_BYTES = 1_048_576;

/** Most message attributes one message may carry. */
export const MAX_SQS_MESSAGE_ATTRIBUTES = 10;

/** Longest attribute name and data type, in characters. */
const MAX_ATTRIBUTE_NAME_CHARACTERS = 256;

/** The characters SQS allows in a body: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF */
const DISALLOWED_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]+$/;
const NUMBER_VALUE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function invalid(message: string): SqsError {
  return new SqsError('InvalidParameterValueException', message);
}

function checkAttribute(name: string, attribute: SqsMessageAttribute): number {
  if (name.length > MAX_ATTRIBUTE_NAME_CHARACTERS) throw invalid(`message attribute name '${name.slice(0, 40)}...' is ${name.length} characters long; the most is ${MAX_ATTRIBUTE_NAME_CHARACTERS}`);
  if (!ATTRIBUTE_NAME.test(name)) throw invalid(`message attribute name '${name}' may only contain A-Z, a-z, 0-9, '_', '-' and '.'`);
  if (/^(aws|amazon)\./i.test(name)) throw invalid(`message attribute name '${name}' must not start with 'AWS.' or 'Amazon.' (reserved)`);
  if (name.startsWith('.') || name.endsWith('.') || name.includes('..')) throw invalid(`message attribute name '${name}' must not start or end with a period or contain two periods in a row`);
  const dataType = attribute.DataType;
  if (typeof dataType !== 'string' || dataType.length === 0) throw invalid(`message attribute '${name}' has no DataType`);
  if (dataType.length > MAX_ATTRIBUTE_NAME_CHARACTERS) throw invalid(`message attribute '${name}' has a DataType of ${dataType.length} characters; the most is ${MAX_ATTRIBUTE_NAME_CHARACTERS}`);
  const base = dataType.split('.', 1)[0];
  if (base === 'Binary') {
    if (typeof attribute.BinaryValue !== 'string' || attribute.BinaryValue.length === 0) throw invalid(`message attribute '${name}' of type '${dataType}' must have a non-empty BinaryValue`);
    return Buffer.byteLength(name) + Buffer.byteLength(dataType) + Buffer.from(attribute.BinaryValue, 'base64').length;
  }
  if (base !== 'String' && base !== 'Number') throw invalid(`message attribute '${name}' has DataType '${dataType}'; it must be String, Number or Binary, optionally with a custom suffix (e.g. Number.float)`);
  if (typeof attribute.StringValue !== 'string' || attribute.StringValue.length === 0) throw invalid(`message attribute '${name}' of type '${dataType}' must have a non-empty StringValue`);
  if (base === 'Number' && !NUMBER_VALUE.test(attribute.StringValue.trim())) throw invalid(`message attribute '${name}' of type '${dataType}' must hold a number, got '${attribute.StringValue}'`);
  if (DISALLOWED_CHARACTER.test(attribute.StringValue)) throw new SqsError('InvalidMessageContents', `message attribute '${name}' contains a character SQS does not allow`);
  return Buffer.byteLength(name) + Buffer.byteLength(dataType) + Buffer.byteLength(attribute.StringValue);
}

/**
 * Throws the {@link SqsError} SQS would answer with when the body or the attributes break its rules: an empty body,
 * a character outside the allowed set (`InvalidMessageContents`), more than 10 attributes, a malformed attribute, or
 * more than 1 MiB in all (`InvalidParameterValue`).
 */
export function checkSqsMessage(body: string, attributes: Readonly<Record<string, SqsMessageAttribute>> | undefined): void {
  if (typeof body !== 'string' || body.length === 0) throw new SqsError('MissingRequiredParameterException', 'the message body must be at least one character long');
  if (DISALLOWED_CHARACTER.test(body)) throw new SqsError('InvalidMessageContents', 'the message body contains a character SQS does not allow (allowed: #x9, #xA, #xD, #x20 to #xD7FF, #xE000 to #xFFFD, #x10000 to #x10FFFF)');
  const names = Object.keys(attributes ?? {});
  if (names.length > MAX_SQS_MESSAGE_ATTRIBUTES) throw invalid(`a message may carry at most ${MAX_SQS_MESSAGE_ATTRIBUTES} message attributes, got ${names.length}`);
  let bytes = Buffer.byteLength(body);
  for (const name of names) {
    const attribute = attributes?.[name];
    if (attribute !== undefined) bytes += checkAttribute(name, attribute);
  }
  if (bytes > MAX_SQS_MESSAGE_BYTES) throw invalid(`the message is ${bytes} bytes long with its attributes; SQS accepts at most ${MAX_SQS_MESSAGE_BYTES}`);
}
