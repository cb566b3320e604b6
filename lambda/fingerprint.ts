/**
 * Payload fingerprints and derived ids. A fingerprint tells a redelivery (same id, same payload) from a producer bug
 * (same id, different payload). Pure: node:crypto only, no AWS SDK.
 */
import { createHash } from 'node:crypto';
import type { EventEnvelope } from './envelope';

/** Prefix of every fingerprint, naming the algorithm so it can change without ambiguity. */
export const FINGERPRINT_PREFIX = 'sha256:';

/** What JSON.stringify writes for `value` under `key`: the result of its `toJSON` (a Date's ISO string), or itself. */
function jsonValueOf(value: unknown, key: string): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  // boxed primitives are written as their primitive
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  return value;
}

/** True for what JSON.stringify leaves out of an object (and writes as `null` in an array). */
function omittedByJson(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * JSON with object keys sorted at every level, so equal values always serialize to equal text. It follows
 * JSON.stringify's semantics exactly (`toJSON`, so a Date is its ISO string; members whose value is undefined, a
 * function or a symbol left out; such array items written as `null`; non-finite numbers as `null`), so a value and its
 * JSON round trip, which is what the outbox stores and the consumer receives, have the same canonical text.
 */
export function canonicalJson(value: unknown, key = ''): string {
  return canonicalText(jsonValueOf(value, key));
}

/**
 * The canonical text of a value whose own `toJSON` was applied already; its members' are applied here, once each.
 * Written as plain loops: it runs for every message (the fingerprint), and the array methods' closures cost more than
 * the text itself.
 */
function canonicalText(json: unknown): string {
  if (json === null || typeof json !== 'object') return JSON.stringify(json) ?? 'null';
  if (Array.isArray(json)) {
    let text = '[';
    for (let index = 0; index < json.length; index++) {
      const item = jsonValueOf(json[index], String(index));
      text += `${index === 0 ? '' : ','}${omittedByJson(item) ? 'null' : canonicalText(item)}`;
    }
    return `${text}]`;
  }
  // the default sort orders by UTF-16 code units, as the fingerprint always has
  const names = Object.keys(json).sort();
  let text = '{';
  for (const name of names) {
    const item = jsonValueOf((json as Record<string, unknown>)[name], name);
    if (omittedByJson(item)) continue;
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(name)}:${canonicalText(item)}`;
  }
  return `${text}}`;
}

/**
 * The fingerprint of what an event means: its `type`, `subject` and `data`. `time` and `source` are left out on
 * purpose: a producer that retries with the same id after a crash rebuilds the envelope with a new `time`, and that
 * is the same event. The consumer takes it from the envelope as delivered, before `parse`.
 *
 * Limit: numbers are compared as the doubles `JSON.parse` reads, so payloads that differ only beyond double precision
 * (`9007199254740993` vs `9007199254740992`) have the same fingerprint; send such values as strings
 * (docs/DESIGN.md, "Payload fingerprint").
 */
export function payloadFingerprint(envelope: Pick<EventEnvelope, 'type' | 'subject' | 'data'>): string {
  const canonical = canonicalJson({ type: envelope.type, subject: envelope.subject, data: envelope.data });
  return `${FINGERPRINT_PREFIX}${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

/**
 * The fingerprint of an event as delivered or stored, inline or offloaded (issue 42's claim-check): the ONE function
 * every comparison of "the same event" uses (the consumer's records, the batch read, the look-up of a missing object,
 * the producers' retries), so the same event is recognised whatever the key order of its data and whichever form it
 * travelled in (review r8b, R8b-6: an event committed again after the outbox's `eventRetention` may take the other
 * form, or its producer may build the data with its keys in another order).
 * - inline (no `dataref`): {@link payloadFingerprint} of its type, subject and data;
 * - offloaded by this version: the producer's {@link payloadFingerprint} of the data it offloaded, carried as
 *   `ieffingerprint` (the consumer checks it against the data once fetched, claim-check/resolve-payload.ts);
 * - offloaded before `ieffingerprint` existed: {@link legacyOffloadedFingerprint}, which its records hold.
 */
export function eventFingerprint(envelope: ComparedEnvelope): string {
  if (envelope.dataref === undefined) return payloadFingerprint(envelope);
  return envelope.ieffingerprint ?? legacyOffloadedFingerprint(envelope);
}

/**
 * The fingerprint an offloaded event had before `ieffingerprint` (R7-3 to R8b-6): SHA-256 of the canonical JSON of its
 * `type`, `subject`, and the SHA-256 and size of its data object (`iefdatasha256`, `iefdatasize`, the digest of
 * `JSON.stringify(data)`'s bytes, so of one key order). Still the fingerprint of an envelope written then (its copies
 * meet the records their first delivery wrote with it), and the second fingerprint a consumer accepts for an event
 * committed again by this version whose first commit was such an envelope (consumer/process-message.ts).
 */
export function legacyOffloadedFingerprint(envelope: Pick<EventEnvelope, 'type' | 'subject' | 'iefdatasha256' | 'iefdatasize'>): string {
  const canonical = canonicalJson({ type: envelope.type, subject: envelope.subject, datasha256: envelope.iefdatasha256, datasize: envelope.iefdatasize });
  return `${FINGERPRINT_PREFIX}${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

type ComparedEnvelope = Pick<EventEnvelope, 'type' | 'subject' | 'data' | 'dataref' | 'iefdatasha256' | 'iefdatasize' | 'ieffingerprint'>;

/**
 * Whether two envelopes under one event id carry the same event (a producer's retry against the one stored in its
 * outbox): their {@link eventFingerprint}s are equal, whatever the key order of the data and whichever form each took.
 * When one was offloaded before `ieffingerprint` existed (an outbox item written by the earlier version, within the
 * outbox's `eventRetention` after an upgrade), the two are compared by its {@link legacyOffloadedFingerprint}, an inline
 * one's data digested as `JSON.stringify` writes it (so in that case only, key order still counts, as it did then).
 */
export function sameEvent(mine: ComparedEnvelope, theirs: ComparedEnvelope): boolean {
  if (eventFingerprint(mine) === eventFingerprint(theirs)) return true;
  const old = (envelope: ComparedEnvelope): boolean => envelope.dataref !== undefined && envelope.ieffingerprint === undefined;
  return (old(mine) || old(theirs)) && legacyFingerprintOf(mine) === legacyFingerprintOf(theirs);
}

/** {@link legacyOffloadedFingerprint} of an envelope, its data's digest and size computed when it is inline. */
function legacyFingerprintOf(envelope: ComparedEnvelope): string {
  if (envelope.dataref !== undefined) return legacyOffloadedFingerprint(envelope);
  const text = JSON.stringify(envelope.data) ?? 'null';
  const iefdatasha256 = createHash('sha256').update(text, 'utf8').digest('hex');
  return legacyOffloadedFingerprint({ type: envelope.type, subject: envelope.subject, iefdatasha256, iefdatasize: Buffer.byteLength(text, 'utf8') });
}

/**
 * True when `stored`, the fingerprint a consumer's record holds for an event id (whole, or the first hex digits of its
 * digest an aggregate's `processedMessages` entry keeps), is the {@link legacyOffloadedFingerprint} of `envelope`, an
 * envelope of this version (inline, or offloaded with `ieffingerprint`; an inline one's data digested as
 * `JSON.stringify` writes it): the same event, committed again after its first commit, offloaded before
 * `ieffingerprint` existed, was applied. Never true for an envelope offloaded before (its fingerprint is that one).
 */
export function isLegacyFingerprintOf(stored: string, envelope: ComparedEnvelope): boolean {
  if (envelope.dataref !== undefined && envelope.ieffingerprint === undefined) return false;
  const legacy = legacyFingerprintOf(envelope);
  return stored === legacy || (/^[0-9a-f]{16,64}$/.test(stored) && legacy.startsWith(`${FINGERPRINT_PREFIX}${stored}`));
}

/**
 * A deterministic UUID-shaped id for the `index`-th event a subscriber emits while processing `consumedEventId`.
 * Deterministic so that a re-run of the same processing (for example after the commit's response was lost) names
 * its events the same, and the outbox's conditional Put refuses a second copy.
 */
export function derivedEventId(subscriberName: string, consumedEventId: string, index: number): string {
  const hex = createHash('sha256').update(`${subscriberName}\u0000${consumedEventId}\u0000${index}`, 'utf8').digest('hex');
  // RFC 4122 layout with version 8 ("custom") and the RFC variant bits
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16).padStart(2, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}
