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

/** Why a message may be a redelivery the list has forgotten: the event time it is not newer than, and whose time that is. */
export interface EvictionSign {
  /** `forgotten`: the newest time among the dropped entries; `oldest-remembered`: the oldest entry's (an item without the former). */
  readonly basis: 'forgotten' | 'oldest-remembered';
  readonly epochSeconds: number;
}

/**
 * Why `message`, not among `messages`, may be a redelivery the bounded list has already forgotten; undefined when it
 * cannot be one. With `evictedUpTo` (the newest event time among the entries dropped so far): when its time is not
 * newer than that, whatever order the messages were applied in (every dropped entry's time is at most that, so no
 * forgotten redelivery is missed, one of the same second included). Without it (no entry with a time dropped yet, or
 * an item written before the runtime kept it): as before it was kept, when the list is full and its time is older than
 * the oldest entry's (strictly: a list that has just filled up dropped nothing, and the messages that filled it within
 * one second are not redeliveries). Unknown without event times, and then undefined. A late event that was never
 * applied looks the same; the caller can only warn.
 */
export function evictionSign(messages: readonly ProcessedMessage[], evictedUpTo: number | undefined, message: ProcessedMessage, limit: number): EvictionSign | undefined {
  const time = message.eventTimeEpochSeconds;
  if (time === undefined) return undefined;
  if (evictedUpTo !== undefined) return time <= evictedUpTo ? { basis: 'forgotten', epochSeconds: evictedUpTo } : undefined;
  const oldest = messages[0]?.eventTimeEpochSeconds;
  if (messages.length < limit || oldest === undefined) return undefined;
  return time < oldest ? { basis: 'oldest-remembered', epochSeconds: oldest } : undefined;
}

/**
 * The newest event time among the entries dropped so far, after `dropped` were dropped (`evictedUpTo` before): it only
 * grows; entries without a time do not move it.
 */
export function evictedUpToAfter(evictedUpTo: number | undefined, dropped: readonly ProcessedMessage[]): number | undefined {
  let newest = evictedUpTo;
  for (const entry of dropped) if (entry.eventTimeEpochSeconds !== undefined && (newest === undefined || entry.eventTimeEpochSeconds > newest)) newest = entry.eventTimeEpochSeconds;
  return newest;
}

/** The list with `message` appended, keeping only the newest `limit` entries. */
export function appendProcessed(messages: readonly ProcessedMessage[], message: ProcessedMessage, limit: number): ProcessedMessage[] {
  return appendAndDrop(messages, message, limit).kept;
}

/** The list with `message` appended, split into the newest `limit` entries it keeps and the entries it drops. */
export function appendAndDrop(messages: readonly ProcessedMessage[], message: ProcessedMessage, limit: number): { kept: ProcessedMessage[]; dropped: ProcessedMessage[] } {
  const appended = [...messages, message];
  const cut = Math.max(0, appended.length - limit);
  return { kept: appended.slice(cut), dropped: appended.slice(0, cut) };
}
