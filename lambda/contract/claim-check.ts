/**
 * The claim-check wire contract (issue 42): how an event too large to travel inline has its `data` stored in S3 and
 * referred to from its envelope. Shared by the producer runtime (writes the object, then the small envelope), the
 * consumer runtime and the operator commands (read and verify it), the constructs (bucket, prefix, threshold, grants)
 * and the simulator (its S3 service and checks). Imports nothing, so `lib/` compiles it with jsii and the runtime
 * package ships it.
 *
 * The rules, in short:
 * - **What is stored.** The object's body is exactly `JSON.stringify(data)` (UTF-8), the text that would have been
 *   the `data` member of the inline envelope. Content type `application/json`.
 * - **Digest and size.** {@link CLAIM_CHECK_ATTRIBUTES.SHA256} is the lowercase hex SHA-256 of those bytes,
 *   {@link CLAIM_CHECK_ATTRIBUTES.SIZE} their count. A reader verifies both before it hands the event on; a mismatch
 *   (or a missing object) fails that message alone, permanently once retries cannot help.
 * - **The envelope.** An offloaded envelope has no `data` member (CloudEvents: with `dataref` present, `data` MAY be
 *   absent) and carries the three extension attributes of {@link CLAIM_CHECK_ATTRIBUTES}; every other attribute is the
 *   event's own. Readers restore `data` and drop the three attributes, so a handler sees the inline-looking event.
 * - **The key.** {@link payloadObjectKey}: `<prefix><sha256(eventId) hex>/<UTC day of the write>-<sha256(data) hex>`:
 *   deterministic within a UTC day, so a producer retried that day writes the same key; a different payload under one
 *   id has another key (and the outbox's condition on the event id refuses its transaction). The day is there because
 *   S3's lifecycle counts an object's age from its creation, rounded up to the next midnight UTC: an object created on
 *   the day of the commit lives at least the rule's days after the commit, one created on an earlier day may not
 *   (review r7, R7-1). A retry on a later day writes a fresh object; the first is an orphan the rule expires.
 * - **The write.** `PutObject` with `IfNoneMatch: '*'` (S3 conditional writes): the first object under a key is never
 *   replaced. `412 PreconditionFailed` means an object of this id AND this digest exists (the key says both): success.
 *   `409 ConditionalRequestConflict` (a concurrent write of the key) is retried. The object is written BEFORE the
 *   outbox transaction; if the transaction does not commit, the object is an orphan the lifecycle rule expires.
 * - **When to offload.** {@link shouldOffload}: when the inline envelope, measured as the relay may deliver it
 *   (double-encoded as a JSON string, the size the producer's event size check uses), is larger than the inline
 *   threshold; a threshold of 0 offloads every event. No bucket configured: nothing is offloaded (events over the
 *   event size limit are refused, as before).
 * - **Filters.** A subscription's message-body filter policy sees the envelope as published: an offloaded event has no
 *   `data`, so a policy on `data.*` keys cannot match it. The constructs refuse such a policy on a flow that offloads.
 */

/** The CloudEvents extension attributes of an offloaded event's envelope (extension names: lowercase a-z0-9 only). */
export const CLAIM_CHECK_ATTRIBUTES = {
  /**
   * The CloudEvents `dataref` extension: where the data is, as `s3://<bucket>/<key>` (`payloadDataRef`). Its
   * presence marks the event as offloaded.
   */
  DATAREF: 'dataref',
  /** Lowercase hex SHA-256 (64 digits) of the stored object's bytes. */
  SHA256: 'iefdatasha256',
  /** The stored object's size in bytes, as a JSON integer. */
  SIZE: 'iefdatasize',
  /**
   * The event's payload fingerprint (`sha256:<64 hex>`: runtime fingerprint.ts `payloadFingerprint` of its type,
   * subject and data, the data's keys in canonical order), computed by the producer from the data it offloads (review
   * r8b, R8b-6). A consumer keeps it as the event's fingerprint, so the same event is recognised whatever the key order
   * of its data and whether it travelled inline or offloaded; it checks it against the data once fetched. Absent from
   * envelopes written before it existed (the consumer then takes the one of type, subject, digest and size).
   */
  FINGERPRINT: 'ieffingerprint',
} as const;

/** The names of {@link CLAIM_CHECK_ATTRIBUTES}, in envelope order. */
export const CLAIM_CHECK_ATTRIBUTE_NAMES = [CLAIM_CHECK_ATTRIBUTES.DATAREF, CLAIM_CHECK_ATTRIBUTES.SHA256, CLAIM_CHECK_ATTRIBUTES.SIZE, CLAIM_CHECK_ATTRIBUTES.FINGERPRINT] as const;

const PAYLOAD_FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

/** True when `value` is a payload fingerprint as {@link CLAIM_CHECK_ATTRIBUTES.FINGERPRINT} carries it. */
export function isPayloadFingerprint(value: unknown): value is string {
  return typeof value === 'string' && PAYLOAD_FINGERPRINT.test(value);
}

/** The scheme of a {@link CLAIM_CHECK_ATTRIBUTES.DATAREF}. */
export const DATAREF_SCHEME = 's3://';

/** The environment variables the constructs set on producers, consumers and operator tools of a flow that offloads. */
export const CLAIM_CHECK_ENV = {
  /** Name of the payload bucket. Unset: the flow does not offload (and a reader refuses an offloaded event). */
  PAYLOAD_BUCKET_NAME: 'IEF_PAYLOAD_BUCKET_NAME',
  /** The key prefix objects are written under (see `PAYLOAD_KEY_PREFIX_PATTERN`); unset: {@link DEFAULT_PAYLOAD_KEY_PREFIX}. */
  PAYLOAD_KEY_PREFIX: 'IEF_PAYLOAD_KEY_PREFIX',
  /**
   * The inline threshold in bytes (a whole number, 0 or more): an event whose envelope, double-encoded, is larger is
   * offloaded; `0` offloads every event. Unset: the producer's event size limit (`IEF_MAX_EVENT_BYTES`).
   */
  INLINE_THRESHOLD_BYTES: 'IEF_PAYLOAD_INLINE_THRESHOLD_BYTES',
  /**
   * The payload bucket's Region, for a reader in another Region than the flow (a subscriber of another Region: S3
   * answers a request to a bucket of another Region with a redirect the SDK does not follow). Unset: the function's
   * own Region (`AWS_REGION`).
   */
  PAYLOAD_BUCKET_REGION: 'IEF_PAYLOAD_BUCKET_REGION',
} as const;

/** The prefix when none is configured. */
export const DEFAULT_PAYLOAD_KEY_PREFIX = 'event-data/';

/**
 * What a key prefix may be: 1 to 128 characters of S3's safe set (`A-Z a-z 0-9 ! - _ . * ' ( )` and `/`), ending in `/`,
 * not starting with `/`. The lifecycle rule and every grant are scoped to it.
 */
export const PAYLOAD_KEY_PREFIX_PATTERN = /^(?!\/)[A-Za-z0-9!\-_.*'()/]{0,127}\/$/;

/**
 * The largest `data` the producer offloads, in bytes: 64 MiB. A consumer holds about 4 copies of it while it applies the
 * event (bytes, text, parsed data, the fingerprint's canonical text), so 64 MiB needs a function of 256 MiB (the
 * default); the records of a batch read their data one after another when together they would not fit, and a record
 * that alone would not fit the function's memory is dead-lettered with the reason before its fetch
 * (runtime claim-check/read-budget.ts).
 */
export const MAX_OFFLOADED_DATA_BYTES = 64 * 1024 * 1024;

/** The length of a SHA-256 in lowercase hex. */
export const SHA256_HEX_LENGTH = 64;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** True when `value` is a lowercase hex SHA-256. */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

/**
 * The object key of an event's data: `<prefix><eventIdSha256>/<YYYY-MM-DD>-<dataSha256>`, both digests lowercase hex
 * SHA-256 (the first of the event id's UTF-8 bytes, so any id makes a short key of safe characters and keys spread
 * over S3's partitions), and the UTC day of `writtenAt` (the producer's clock when it writes the object). Callers
 * compute the two digests (this file imports nothing, not even node:crypto).
 */
export function payloadObjectKey(prefix: string, eventIdSha256: string, dataSha256: string, writtenAt: Date): string {
  return `${prefix}${eventIdSha256}/${utcDay(writtenAt)}-${dataSha256}`;
}

/** `YYYY-MM-DD` of a time, in UTC (the day S3's lifecycle rounds an object's creation up from). */
export function utcDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** The `dataref` of an object: `s3://<bucket>/<key>`. */
export function payloadDataRef(bucketName: string, key: string): string {
  return `${DATAREF_SCHEME}${bucketName}/${key}`;
}

/** The bucket and key of a `dataref`, or undefined when it is not `s3://<bucket>/<key>`. */
export function parseDataRef(dataref: string): { readonly bucketName: string; readonly key: string } | undefined {
  if (!dataref.startsWith(DATAREF_SCHEME)) return undefined;
  const rest = dataref.slice(DATAREF_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash < 1 || slash === rest.length - 1) return undefined;
  return { bucketName: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

/**
 * Whether an event is offloaded: when its inline envelope, as the relay may deliver it (the envelope JSON written as a
 * JSON string, in UTF-8 bytes: `encodedEnvelopeBytes`), is larger than `inlineThresholdBytes`. A threshold of 0
 * offloads every event.
 */
export function shouldOffload(encodedEnvelopeBytes: number, inlineThresholdBytes: number): boolean {
  return inlineThresholdBytes === 0 || encodedEnvelopeBytes > inlineThresholdBytes;
}
