/**
 * The bounded list of recently applied messages an aggregate item carries (`processedMessages`, see AGGREGATE_ITEM in
 * wire-format.ts): compact strings `<eventId> <first 16 hex digits of the payload fingerprint>`, newest last. Pure: no
 * AWS SDK.
 *
 * Why 64 bits of the fingerprint are enough: the entry is compared with the fingerprint of a delivery carrying the SAME
 * event id, to tell a redelivery from an id reused for another payload (a producer bug). That is one comparison
 * between two SHA-256 digests, not a search for any colliding pair among many (no birthday bound applies): a changed
 * payload passes for the original only if its digest happens to share the first 64 bits, with probability 2^-64
 * (about 5 × 10^-20) per reused id. The check guards against accidents, not attackers: a producer that chooses event
 * ids can already make a consumer skip its events (by reusing ids) and needs no hash collision for it. The full
 * fingerprint would cost 55 more bytes per entry (`sha256:` and 48 more hex digits), rewritten and read with every
 * message.
 */
import { FINGERPRINT_PREFIX } from '../fingerprint';
import { AGGREGATE_ITEM } from '../contract/wire-format';

/** One applied message, as remembered on the aggregate. */
export interface ProcessedMessage {
  /** The event id. */
  readonly id: string;
  /** The first {@link AGGREGATE_ITEM.FINGERPRINT_PREFIX_HEX_DIGITS} hex digits of the payload fingerprint's digest. */
  readonly fingerprintPrefix: string;
  /** The event's `time` in whole epoch seconds. @default absent: the event had no `time`, or the entry predates times */
  readonly eventTimeEpochSeconds?: number;
}

/** The default and the bounds of how many processed messages an aggregate remembers. */
export const PROCESSED_MESSAGES_LIMITS = { DEFAULT: 100, MIN: 1, MAX: 1000 } as const;

const SEPARATOR = AGGREGATE_ITEM.PROCESSED_MESSAGE_SEPARATOR;
const TIME_SEPARATOR = AGGREGATE_ITEM.EVENT_TIME_SEPARATOR;
/**
 * A well-formed fingerprint prefix: exactly that many lowercase hex digits (what `digest('hex')` writes), optionally
 * followed by the event time (epoch seconds in base 36).
 */
const PREFIX_PATTERN = new RegExp(`^([0-9a-f]{${AGGREGATE_ITEM.FINGERPRINT_PREFIX_HEX_DIGITS}})(?:${TIME_SEPARATOR}([0-9a-z]{1,10}))?$`);

/** The part of a payload fingerprint (`sha256:<64 hex>`) an entry keeps: the first 16 hex digits of the digest. */
export function fingerprintPrefix(fingerprint: string): string {
  const digest = fingerprint.startsWith(FINGERPRINT_PREFIX) ? fingerprint.slice(FINGERPRINT_PREFIX.length) : fingerprint;
  return digest.slice(0, AGGREGATE_ITEM.FINGERPRINT_PREFIX_HEX_DIGITS);
}

/** The entry of event `id` delivered with payload `fingerprint` and, when it has one, the event's RFC 3339 `time`. */
export function processedMessageFor(id: string, fingerprint: string, time?: string): ProcessedMessage {
  const epochMilliseconds = time === undefined ? Number.NaN : Date.parse(time);
  if (Number.isNaN(epochMilliseconds) || epochMilliseconds < 0) return { id, fingerprintPrefix: fingerprintPrefix(fingerprint) };
  return { id, fingerprintPrefix: fingerprintPrefix(fingerprint), eventTimeEpochSeconds: Math.floor(epochMilliseconds / 1000) };
}

/** The stored form of an entry: `<eventId> <fingerprint prefix>`, then `@<event time in base 36>` when it has one. */
export function formatProcessedMessage(message: ProcessedMessage): string {
  const time = message.eventTimeEpochSeconds === undefined ? '' : `${TIME_SEPARATOR}${message.eventTimeEpochSeconds.toString(36)}`;
  return `${message.id}${SEPARATOR}${message.fingerprintPrefix}${time}`;
}

/** One stored entry, split on its LAST separator (an event id may contain spaces); undefined when malformed. */
function parseEntry(entry: unknown): ProcessedMessage | undefined {
  if (typeof entry !== 'string') return undefined;
  const at = entry.lastIndexOf(SEPARATOR);
  if (at <= 0) return undefined; // no separator, or an empty id
  const match = PREFIX_PATTERN.exec(entry.slice(at + SEPARATOR.length));
  if (match === null) return undefined;
  const [, prefix = '', time] = match;
  const message = { id: entry.slice(0, at), fingerprintPrefix: prefix };
  return time === undefined ? message : { ...message, eventTimeEpochSeconds: parseInt(time, 36) };
}

/** Reads the stored list, ignoring anything that is not a `<id> <16 hex digits>` string (so a hand-edited item cannot crash it). */
export function parseProcessedMessages(stored: unknown): ProcessedMessage[] {
  if (!Array.isArray(stored)) return [];
  return stored.map(parseEntry).filter((message): message is ProcessedMessage => message !== undefined);
}

/** The entry of `eventId`, if the aggregate remembers applying it. */
export function findProcessed(messages: readonly ProcessedMessage[], eventId: string): ProcessedMessage | undefined {
  return messages.find((message) => message.id === eventId);
}

/**
 * True when `message`, not among `messages`, may be a redelivery of one the bounded list has already forgotten: the list
 * is full (`limit` entries; at least one was evicted to keep it so) and the event is older than the oldest one
 * remembered. Either is unknown without event times, and then the answer is false. A late event that was never applied
 * looks the same; the caller can only warn.
 */
export function mayBeEvictedRedelivery(messages: readonly ProcessedMessage[], message: ProcessedMessage, limit: number): boolean {
  const oldest = messages[0]?.eventTimeEpochSeconds;
  if (messages.length < limit || oldest === undefined || message.eventTimeEpochSeconds === undefined) return false;
  return message.eventTimeEpochSeconds < oldest;
}

/** The list with `message` appended, keeping only the newest `limit` entries. */
export function appendProcessed(messages: readonly ProcessedMessage[], message: ProcessedMessage, limit: number): ProcessedMessage[] {
  const appended = [...messages, message];
  return appended.slice(Math.max(0, appended.length - limit));
}
