/**
 * The MD5 digests SQS returns with every message sent and received, computed as the SQS Developer Guide documents
 * them ("Calculating the MD5 message digest for message attributes", sqs-message-metadata.html). The SDK checks
 * `MD5OfMessageBody` / `MD5OfBody` against its own digest of the body (@aws-sdk/middleware-sdk-sqs), so a wrong
 * digest fails the caller's request.
 */
import { createHash } from 'node:crypto';
import type { SqsMessageAttribute } from './sqs-messages';

/** The hex MD5 of a message body's UTF-8 bytes: `MD5OfMessageBody` / `MD5OfBody`. */
export function md5OfBody(body: string): string {
  return createHash('md5').update(body, 'utf8').digest('hex');
}

/** Transport type bytes of the documented algorithm: 1 for String and Number (and their custom types), 2 for Binary. */
function transportType(name: string, dataType: string): number {
  const base = dataType.split('.', 1)[0];
  if (base === 'String' || base === 'Number') return 1;
  if (base === 'Binary') return 2;
  throw new RangeError(`message attribute '${name}' has data type '${dataType}'; SQS knows String, Number and Binary (optionally with a custom suffix, e.g. Number.float)`);
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/**
 * The hex MD5 of message attributes (`MD5OfMessageAttributes`), or undefined when there are none (SQS then returns no
 * digest). For each attribute, by name in ascending order: the name, the data type (each as a 4-byte big-endian
 * length and UTF-8 bytes), one transport-type byte, then the value as a 4-byte length and its bytes (UTF-8 of
 * `StringValue`, or the decoded `BinaryValue`).
 */
export function md5OfMessageAttributes(attributes: Readonly<Record<string, SqsMessageAttribute>> | undefined): string | undefined {
  const names = Object.keys(attributes ?? {}).sort();
  if (attributes === undefined || names.length === 0) return undefined;
  const hash = createHash('md5');
  for (const name of names) {
    const attribute = attributes[name];
    if (attribute === undefined) continue;
    const type = transportType(name, attribute.DataType);
    hash.update(lengthPrefixed(Buffer.from(name, 'utf8')));
    hash.update(lengthPrefixed(Buffer.from(attribute.DataType, 'utf8')));
    hash.update(Buffer.of(type));
    const value = type === 2 ? Buffer.from(attribute.BinaryValue ?? '', 'base64') : Buffer.from(attribute.StringValue ?? '', 'utf8');
    hash.update(lengthPrefixed(value));
  }
  return hash.digest('hex');
}
