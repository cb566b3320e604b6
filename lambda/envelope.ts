/**
 * The event envelope: CloudEvents 1.0 in its JSON format. `id` is the deduplication key end to end.
 * Pure: imports no AWS SDK.
 */
import { type ENVELOPE_ATTRIBUTE_NAMES, type EnvelopeAttributeName } from './contract/envelope-attributes';
import { redactValues } from './redact';
import { MalformedEnvelopeError } from './errors';
import { unpairedSurrogate } from './unicode';
import { traceContextOf, type TraceContext } from './trace-context';
import { CLAIM_CHECK_ATTRIBUTES, isPayloadFingerprint, isSha256Hex, MAX_OFFLOADED_DATA_BYTES, parseDataRef } from './contract/claim-check';

/** The CloudEvents spec version this runtime writes and accepts. */
export const CLOUDEVENTS_SPEC_VERSION = '1.0';

/** The only data content type this runtime writes and accepts. */
export const JSON_CONTENT_TYPE = 'application/json';

/**
 * A CloudEvents 1.0 event in JSON format, as written to the outbox and delivered to consumers. `traceparent` and
 * `tracestate` (the distributed-tracing extension, {@link TraceContext}) are present when the producer ran in a trace.
 */
export interface EventEnvelope<TData = unknown> extends TraceContext {
  readonly specversion: typeof CLOUDEVENTS_SPEC_VERSION;
  /** Unique per event; the deduplication key (SNS and SQS message ids change on redelivery, this does not). */
  readonly id: string;
  /** Who produced the event, e.g. `orders-service`. */
  readonly source: string;
  /** What happened, e.g. `OrderPlaced`. */
  readonly type: string;
  /** The aggregate the event is about, e.g. the order id. */
  readonly subject?: string;
  /**
   * When it happened, RFC 3339. Optional in CloudEvents 1.0, so an event from another producer may lack it; this
   * runtime's producers always set it.
   */
  readonly time?: string;
  readonly datacontenttype: typeof JSON_CONTENT_TYPE;
  /**
   * The event payload. Absent from an offloaded event's envelope as published and as `parseEnvelope` reads it (then
   * `dataref` is set); the consumer runtime restores it before any handler runs (claim-check/resolve-payload.ts).
   */
  readonly data: TData;
  /**
   * Claim-check (docs/LARGE-EVENTS.md): where the offloaded data is, `s3://<bucket>/<key>` (CloudEvents `dataref`
   * extension). Present only on an offloaded envelope, never on the event a handler gets.
   */
  readonly dataref?: string;
  /** Claim-check: lowercase hex SHA-256 of the offloaded data (the object's bytes). Present with `dataref` only. */
  readonly iefdatasha256?: string;
  /** Claim-check: the size of the offloaded data in bytes. Present with `dataref` only. */
  readonly iefdatasize?: number;
  /**
   * Claim-check: the payload fingerprint of the offloaded event (`payloadFingerprint` of its type, subject and data),
   * written by the producer (R8b-6). Present with `dataref` only, and absent from envelopes written before it existed.
   */
  readonly ieffingerprint?: string;
}

/**
 * Checked by the compiler: {@link ENVELOPE_ATTRIBUTE_NAMES} (contract/envelope-attributes.ts, shared with the constructs)
 * names exactly the attributes of {@link EventEnvelope}; adding or removing one on either side fails the build.
 */
export type EnvelopeAttributesListed = Expect<SameNames<keyof EventEnvelope, EnvelopeAttributeName>>;
type SameNames<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;

/** RFC 3339 date-time, as CloudEvents requires for `time`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** How many wrappers (SNS notification, extra JSON-string encoding) are peeled off at most. */
const MAX_UNWRAP_DEPTH = 3;

/**
 * How deeply the envelope may nest objects and arrays, the envelope object itself being level 1 (its `data` object
 * level 2). DynamoDB stores documents at most 32 levels deep, so no event that could be written as an item comes near
 * it; a body nested deeper (20,000 levels fit in a 40 KB message) would overflow the stack of every recursive walk of
 * it (the fingerprint, a schema library, the handler's own code), which is retried until SQS redrives it with no reason.
 */
export const MAX_ENVELOPE_DEPTH = 64;

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON.parse's error quotes the start of the text: redacted, and not attached as the cause, unless `logPayloadValues`. */
function parseJson(text: string, what: string, logPayloadValues: boolean): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    if (logPayloadValues) throw new MalformedEnvelopeError(`${what} is not valid JSON (${message})`, { cause: error });
    throw new MalformedEnvelopeError(`${what} is not valid JSON (${redactValues(message)})`);
  }
}

/** An SNS notification as delivered to SQS when raw message delivery is off. */
function isSnsNotification(value: Record<string, unknown>): boolean {
  return value.Type === 'Notification' && typeof value.Message === 'string' && !('specversion' in value);
}

/** Peels off an SNS notification wrapper and extra levels of JSON-string encoding until an object remains. */
function unwrap(body: string, logPayloadValues: boolean): Record<string, unknown> {
  let value = parseJson(body, 'message body', logPayloadValues);
  for (let depth = 0; depth <= MAX_UNWRAP_DEPTH; depth++) {
    if (typeof value === 'string') {
      // the relay may deliver the envelope JSON as a JSON string (see contract/wire-format.ts)
      value = parseJson(value, 'the JSON string in the message body', logPayloadValues);
    } else if (isRecord(value) && isSnsNotification(value)) {
      value = parseJson(value.Message as string, "the SNS notification's Message", logPayloadValues);
    } else {
      break;
    }
  }
  if (!isRecord(value)) {
    throw new MalformedEnvelopeError(`the envelope must be a JSON object, but was ${describeType(value)}`);
  }
  return value;
}

/**
 * Throws unless `value` is well-formed Unicode: CloudEvents strings are sequences of Unicode characters, and the id
 * becomes a DynamoDB key, which cannot tell ids apart that differ only in an unpaired surrogate (see unicode.ts).
 */
function requireWellFormed(value: string, field: string): string {
  const problem = unpairedSurrogate(value);
  if (problem !== undefined) throw new MalformedEnvelopeError(`field '${field}' must be well-formed Unicode, but has ${problem}`);
  return value;
}

function requireString(envelope: Record<string, unknown>, field: string): string {
  const value = envelope[field];
  if (typeof value !== 'string' || value === '') {
    const actual = value === undefined ? 'missing' : describeType(value);
    throw new MalformedEnvelopeError(`field '${field}' must be a non-empty string, but was ${actual}`);
  }
  return requireWellFormed(value, field);
}

/** Throws when `root` nests objects and arrays more than {@link MAX_ENVELOPE_DEPTH} levels deep. Iterative: any depth is safe to measure. */
function assertDepthWithinBound(root: Record<string, unknown>): void {
  const pending: Array<readonly [unknown, number]> = [[root, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (depth > MAX_ENVELOPE_DEPTH) {
      throw new MalformedEnvelopeError(`the envelope is nested more than ${MAX_ENVELOPE_DEPTH} levels deep (objects and arrays); DynamoDB stores at most 32`);
    }
    const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
}

/** Checks the parsed object against the CloudEvents 1.0 shape this runtime writes. */
function validate<TData>(envelope: Record<string, unknown>): EventEnvelope<TData> {
  if (envelope.specversion !== CLOUDEVENTS_SPEC_VERSION) {
    const actual = envelope.specversion === undefined ? 'missing' : JSON.stringify(envelope.specversion);
    throw new MalformedEnvelopeError(`field 'specversion' must be '${CLOUDEVENTS_SPEC_VERSION}', but was ${actual}`);
  }
  const id = requireString(envelope, 'id');
  const source = requireString(envelope, 'source');
  const type = requireString(envelope, 'type');
  // optional in CloudEvents 1.0 (docs/DESIGN.md says which attributes are required, and why)
  const time = envelope.time === undefined ? undefined : requireString(envelope, 'time');
  if (time !== undefined && (!RFC3339.test(time) || Number.isNaN(Date.parse(time)))) {
    throw new MalformedEnvelopeError(`field 'time' must be an RFC 3339 timestamp such as 2024-01-31T12:00:00Z, but was '${time}'`);
  }
  const subject = envelope.subject;
  if (subject !== undefined && (typeof subject !== 'string' || subject === '')) {
    throw new MalformedEnvelopeError(`field 'subject' must be a non-empty string when present, but was ${describeType(subject)}`);
  }
  if (subject !== undefined) requireWellFormed(subject, 'subject');
  // CloudEvents lets JSON-format events omit datacontenttype (it then means application/json)
  const contentType = envelope.datacontenttype;
  if (contentType !== undefined && contentType !== JSON_CONTENT_TYPE) {
    throw new MalformedEnvelopeError(`field 'datacontenttype' must be '${JSON_CONTENT_TYPE}', but was ${JSON.stringify(contentType)}`);
  }
  const claimCheck = claimCheckOf(envelope);
  if (claimCheck === undefined && !('data' in envelope)) {
    throw new MalformedEnvelopeError("field 'data' is missing");
  }
  return {
    specversion: CLOUDEVENTS_SPEC_VERSION,
    id,
    source,
    type,
    ...(subject !== undefined ? { subject } : {}),
    ...(time !== undefined ? { time } : {}),
    datacontenttype: JSON_CONTENT_TYPE,
    ...(claimCheck === undefined ? { data: envelope.data as TData } : {}),
    ...traceContextOf(envelope),
    ...(claimCheck ?? {}),
  } as EventEnvelope<TData>;
}

/**
 * The claim-check attributes of an offloaded envelope, checked (contract/claim-check.ts), or undefined when the
 * envelope has no `dataref`. An offloaded envelope carries no `data`.
 */
function claimCheckOf(envelope: Record<string, unknown>): { dataref: string; iefdatasha256: string; iefdatasize: number; ieffingerprint?: string } | undefined {
  if (envelope[CLAIM_CHECK_ATTRIBUTES.DATAREF] === undefined) return undefined;
  const dataref = requireString(envelope, CLAIM_CHECK_ATTRIBUTES.DATAREF);
  if (parseDataRef(dataref) === undefined) {
    throw new MalformedEnvelopeError(`field '${CLAIM_CHECK_ATTRIBUTES.DATAREF}' must be s3://<bucket>/<key>, but was '${dataref}'`);
  }
  const sha256 = envelope[CLAIM_CHECK_ATTRIBUTES.SHA256];
  if (!isSha256Hex(sha256)) {
    throw new MalformedEnvelopeError(`field '${CLAIM_CHECK_ATTRIBUTES.SHA256}' must be a lowercase hex SHA-256 (64 digits) on an offloaded event, but was ${describeType(sha256)}`);
  }
  const size = envelope[CLAIM_CHECK_ATTRIBUTES.SIZE];
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > MAX_OFFLOADED_DATA_BYTES) {
    throw new MalformedEnvelopeError(
      `field '${CLAIM_CHECK_ATTRIBUTES.SIZE}' must be a whole number of bytes from 0 to ${MAX_OFFLOADED_DATA_BYTES} on an offloaded event, but was ${typeof size === 'number' ? size : describeType(size)}`,
    );
  }
  if ('data' in envelope) {
    throw new MalformedEnvelopeError(`an offloaded event (with '${CLAIM_CHECK_ATTRIBUTES.DATAREF}') must not carry 'data' as well`);
  }
  const fingerprint = envelope[CLAIM_CHECK_ATTRIBUTES.FINGERPRINT];
  if (fingerprint === undefined) return { dataref, iefdatasha256: sha256, iefdatasize: size };
  if (!isPayloadFingerprint(fingerprint)) {
    throw new MalformedEnvelopeError(`field '${CLAIM_CHECK_ATTRIBUTES.FINGERPRINT}' must be sha256:<64 lowercase hex digits> on an offloaded event, but was ${describeType(fingerprint)}`);
  }
  return { dataref, iefdatasha256: sha256, iefdatasize: size, ieffingerprint: fingerprint };
}

/** Options of {@link parseEnvelope}. */
export interface ParseEnvelopeOptions {
  /**
   * Keep the text `JSON.parse` quotes from an unreadable body in the error (and the parse error as its cause).
   * @default false - the quoted text is redacted (see `redactValues`)
   */
  readonly logPayloadValues?: boolean;
}

/**
 * Parses a message body into an {@link EventEnvelope}.
 *
 * Accepts the envelope JSON object, the envelope as a JSON string (double-encoded, as the relay's input template
 * may deliver it), and an SNS notification wrapper (`{"Type":"Notification","Message":"..."}`, when raw message
 * delivery is off). `data` is not validated (beyond nesting at most {@link MAX_ENVELOPE_DEPTH} levels deep): the type
 * parameter is the caller's claim. The id, source, type and subject must be well-formed Unicode.
 *
 * @throws MalformedEnvelopeError naming the first problem found (what `JSON.parse` quoted of the body redacted, unless
 * `options.logPayloadValues`)
 */
export function parseEnvelope<TData = unknown>(body: string, options: ParseEnvelopeOptions = {}): EventEnvelope<TData> {
  if (typeof body !== 'string') {
    throw new MalformedEnvelopeError(`message body must be a string, but was ${describeType(body)}`);
  }
  const envelope = unwrap(body, options.logPayloadValues === true);
  assertDepthWithinBound(envelope);
  return validate<TData>(envelope);
}
