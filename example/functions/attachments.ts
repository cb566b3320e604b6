/**
 * Large attachments of the example's events (issue 42, docs/LARGE-EVENTS.md): a document an order carries (a signed
 * contract, a customs declaration) or a fulfilment step carries (a proof-of-delivery scan). They make the events far
 * larger than the 26,214 bytes an event may have inline, so the flow (`offloadLargeEvents`) writes their `data` to its
 * payload bucket and every subscriber reads it back.
 *
 * A stand-in: a real producer would receive the document, but a Lambda invocation's payload is at most 6 MB, so the
 * command names only the attachment's size and the producer writes a document of that size, made from the order id
 * (the same command gives the same bytes: a retried command carries the same event).
 */

/** A document carried in an event's data: its name, media type, size and text (base64-like, printable). */
export interface Attachment {
  readonly name: string;
  readonly contentType: string;
  /** The length of `content`, in bytes (it is ASCII). */
  readonly bytes: number;
  readonly content: string;
}

/** The largest attachment a command may ask for: 8 MiB (the flow offloads events of up to 64 MiB). */
export const MAX_ATTACHMENT_BYTES = 8 * 1024 * 1024;

/**
 * A document of exactly `bytes` ASCII characters, the same for the same `name` and `bytes`.
 * @throws RangeError for a size that is not a whole number from 1 to {@link MAX_ATTACHMENT_BYTES}
 */
export function standInAttachment(name: string, bytes: number): Attachment {
  if (!Number.isSafeInteger(bytes) || bytes < 1 || bytes > MAX_ATTACHMENT_BYTES) {
    throw new RangeError(`an attachment must be 1 to ${MAX_ATTACHMENT_BYTES} bytes, but ${String(bytes)} was asked for`);
  }
  const line = `${name} `;
  return { name, contentType: 'text/plain', bytes, content: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes) };
}

/** Checks an attachment's shape in a subscriber's `parse`; throws an error naming the first problem. */
export function checkAttachment(value: unknown, what: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be an object, but ${JSON.stringify(value)} was given`);
  const { name, content, bytes } = value as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') throw new Error(`${what} name must be a non-empty string`);
  if (typeof content !== 'string' || content.length !== bytes) throw new Error(`${what} content must be a string of its ${String(bytes)} bytes, but it has ${typeof content === 'string' ? content.length : 'none'}`);
}
