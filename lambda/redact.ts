/**
 * Redaction of payload values in error messages. A schema library's message may echo the value it refused (`1999.5`,
 * `'EUR '`), `JSON.parse` quotes the start of the text it could not read, and a handler's error (or an error it
 * wraps as its `cause`) may say anything about the message it handled: by default such messages reach the logs and the
 * dead-letter attributes only with their values replaced. A consumer created with `logPayloadValues: true` keeps them
 * as they are (for debugging).
 */

/** The longest redacted message, in characters; longer ones are cut and end with `…`. */
export const MAX_REDACTED_MESSAGE_CHARACTERS = 300;

// the JavaScript engine's own phrases quote names from the code (the property read, the variable destructured), never
// payload values: matched first (so the scan moves past them) and kept, the only clue to a TypeError
const ENGINE_PHRASE = String.raw`\((?:reading|setting) '[\w$]*'\)|Cannot destructure property '[\w$]*' of '[\w$.]*'`;
// a double-quoted string followed by `:` is a JSON key, matched (so the scan moves past it) and kept
const QUOTED = new RegExp(String.raw`(${ENGINE_PHRASE})|"(?:[^"\\]|\\.)*"(\s*:)?|'(?:[^'\\]|\\.)*'|` + '`[^`]*`', 'g');
const NUMBER = /(?<![\w.#-])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])/g;

/**
 * `text` with every quoted value replaced by an empty quote of the same kind holding `…` (a JSON key, a quoted string
 * followed by `:`, is kept, and so are the names the engine quotes from the code: `(reading 'refund')`), every number by `#`, and cut to {@link MAX_REDACTED_MESSAGE_CHARACTERS}. The words around
 * them (what was expected, which field) stay.
 */
export function redactValues(text: string): string {
  const redacted = text
    .replace(QUOTED, (quoted: string, enginePhrase: string | undefined, key: string | undefined) => (enginePhrase !== undefined || key !== undefined ? quoted : `${quoted[0]}…${quoted[0]}`))
    .replace(NUMBER, '#');
  return redacted.length <= MAX_REDACTED_MESSAGE_CHARACTERS ? redacted : `${redacted.slice(0, MAX_REDACTED_MESSAGE_CHARACTERS - 1)}…`;
}

/**
 * Errors whose messages the runtime composes from its own facts (step names, event ids, fingerprints, limits), never
 * from payload values, and which a handler does not throw: kept as they are. `SchemaValidationError` and
 * `MalformedEnvelopeError` are redacted where they are made. `PermanentError` and `RetryableError` are not here: a
 * handler throws them with a message of its own.
 */
export const RUNTIME_COMPOSED_ERRORS: ReadonlySet<string> = new Set([
  'SchemaValidationError',
  'MalformedEnvelopeError',
  'PayloadMismatchError',
  'PayloadUnavailableError',
  // the claim-check's (lambda/claim-check): the object's s3:// reference and the grants to check, no payload value
  'PayloadAccessDeniedError',
  'MessageBlockedError',
  'MessageInProgressError',
  'LeaseLostError',
  'ConcurrentModificationError',
  'TransactionLimitError',
  'InvalidWriteError',
  'EventTooLargeError',
  'InvalidEventError',
  'TransactionCancelledError',
  'OutboxKeySchemaError',
  'ProcessingContextError',
  'ItemStateValidationError',
  'ConfigurationError',
  'ResolveRefusedError',
  // the ordered path's (lambda/ordered/ordered-errors.ts): aggregate ids, sequences and event ids, no payload value
  'SequenceGapError',
  'SequenceContentionError',
  'SequenceReusedError',
  'NotAnOrderedEventError',
]);

/** Errors of the kinds a handler throws too, whose message the runtime composed from its own facts only. */
const composedByRuntime = new WeakSet<Error>();

/**
 * Marks `error` (a `PermanentError` or `RetryableError` the runtime throws) as composed from the runtime's own facts,
 * never from payload values, so its message is kept as it is; returns it.
 */
export function withRuntimeMessage<T extends Error>(error: T): T {
  composedByRuntime.add(error);
  return error;
}

/** The message of `error` as logs and dead letters may show it: redacted unless the runtime composed it. */
export function redactedMessage(error: Error): string {
  return RUNTIME_COMPOSED_ERRORS.has(error.name) || composedByRuntime.has(error) ? error.message : redactValues(error.message);
}

/**
 * `value` as plain JSON fields when it is an error (name, message as {@link redactedMessage} gives it, and the same for
 * its `cause` chain, three deep); a thrown value that is not an error as redacted text; anything else as it is.
 */
export function redactedError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return value;
  const serialized: Record<string, unknown> = { name: value.name, message: redactedMessage(value) };
  const cause = value.cause;
  if (cause !== undefined && depth < 3) {
    serialized.cause = cause instanceof Error ? redactedError(cause, depth + 1) : redactValues(typeof cause === 'string' ? cause : safeJson(cause));
  }
  return serialized;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '(unserializable)';
  }
}
