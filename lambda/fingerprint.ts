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
