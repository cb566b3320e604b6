/**
 * The top-level attribute names of the event envelope (CloudEvents 1.0 in JSON, with the distributed-tracing
 * extension): what a subscription's filter policy on the message body can match, since the relay publishes the
 * envelope as the body. The runtime's `EventEnvelope` (lambda/envelope.ts) has exactly these attributes, which the
 * compiler checks there. Imports nothing.
 */

/**
 * The envelope's attributes: the CloudEvents attributes, then the distributed-tracing extension's, then the
 * claim-check's (contract/claim-check.ts: `dataref`, `iefdatasha256`, `iefdatasize`, `ieffingerprint`, present instead of `data` on an
 * offloaded event, as published).
 */
export const ENVELOPE_ATTRIBUTE_NAMES = [
  'specversion',
  'id',
  'source',
  'type',
  'subject',
  'time',
  'datacontenttype',
  'data',
  'traceparent',
  'tracestate',
  'dataref',
  'iefdatasha256',
  'iefdatasize',
  'ieffingerprint',
] as const;

/** One of {@link ENVELOPE_ATTRIBUTE_NAMES}. */
export type EnvelopeAttributeName = (typeof ENVELOPE_ATTRIBUTE_NAMES)[number];

/**
 * The keys of a message-body filter policy that name no envelope attribute, so can match nothing (but an
 * `exists: false`): a key is judged by its first segment (`data.seat` is the `seat` of `data`, as SNS reads a key with
 * dots); operators such as `$or` are not attributes and are not judged.
 */
export function keysOutsideEnvelope(policyKeys: readonly string[]): string[] {
  const attributes: ReadonlySet<string> = new Set(ENVELOPE_ATTRIBUTE_NAMES);
  return policyKeys.filter((key) => !key.startsWith('$') && !attributes.has(key.split('.')[0]!));
}
