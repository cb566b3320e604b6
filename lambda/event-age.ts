/**
 * End-to-end latency of an event: how long ago it happened (the envelope's `time`) when a consumer applied it. Pure:
 * imports no AWS SDK.
 */

/** Milliseconds from the envelope's `time` to `now`, or undefined when it has no (valid) time. Never negative: a producer's clock ahead of the consumer's reads as 0. */
export function eventAgeMilliseconds(envelope: { readonly time?: string }, now: Date): number | undefined {
  if (envelope.time === undefined) return undefined;
  const happenedAt = Date.parse(envelope.time);
  return Number.isNaN(happenedAt) ? undefined : Math.max(0, now.getTime() - happenedAt);
}

/** Most values one EMF metric may carry in one line (CloudWatch embedded metric format specification). */
export const MAX_EMF_VALUES_PER_METRIC = 100;
