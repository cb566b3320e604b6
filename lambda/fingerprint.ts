/**
 * Payload fingerprints and derived ids. A fingerprint tells a redelivery (same id, same payload) from a producer bug
 * (same id, different payload). Pure: node:crypto only, no AWS SDK.
 */
import { createHash } from 'node:crypto';
import type { EventEnvelope } from './envelope';

/** Prefix of every fingerprint, naming the algorithm so it can change without ambiguity. */
export const FINGERPRINT_PREFIX = 'sha256:';

/** JSON with object keys sorted at every level, so equal values always serialize to equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
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
