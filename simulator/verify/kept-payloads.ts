/**
 * What `verify --cleanup` says of the S3 objects of the run's offloaded events (the claim-check, docs/LARGE-EVENTS.md;
 * review v11, V11-7): it keeps them, and says which, why and when they go. It does not delete them: the payload bucket's
 * policy denies deleting event data to everyone (`DenyDeletingEventData`, lib/private/payload-bucket.ts: "Nobody
 * deletes an event's data: it expires"), and rightly so for a run too: a copy of one of the run's events that arrives
 * late (SNS and SQS deliver at least once), a dead letter of one that cleanup could not remove and someone redrives, or
 * a subscriber verify could not see (another account or Region) still reads the object; deleted, each would be
 * dead-lettered for its missing data. The bucket's lifecycle rule (the stacks' template) expires each object a whole
 * number of days after it was written, counted as S3 counts it: from its creation, rounded up to the next midnight UTC
 * (the key names its UTC day of writing: lambda/contract/claim-check.ts `payloadObjectKey`).
 */
import { parseDataRef } from '../../lambda/contract/claim-check';

/** A bucket's expiring lifecycle rule, as its stack's template declares it. */
export interface BucketExpiration {
  readonly ruleId?: string;
  /** The rule's key prefix (`''`: every object). */
  readonly prefix: string;
  readonly days: number;
}

/** `YYYY-MM-DD` plus `days`. */
function dayPlus(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The UTC day a payload key names (`<prefix><hex>/<YYYY-MM-DD>-<hex>`), if it names one. */
function writtenOn(key: string): string | undefined {
  return /\/(\d{4}-\d{2}-\d{2})-[0-9a-f]{64}$/.exec(key)?.[1];
}

/**
 * The cleanup lines of the run's offloaded objects (`datarefs`: the `dataref` of each of the run's outbox envelopes that
 * has one, `s3://<bucket>/<key>`), one per bucket, naming every object by its exact reference; `expirations`: the
 * stacks' expiring lifecycle rules by bucket name. None without offloaded events.
 */
export function keptPayloadLines(datarefs: readonly string[], expirations: Readonly<Record<string, readonly BucketExpiration[]>>): string[] {
  const byBucket = new Map<string, string[]>();
  for (const dataref of [...new Set(datarefs)].sort()) {
    const location = parseDataRef(dataref);
    if (location === undefined) continue;
    byBucket.set(location.bucketName, [...(byBucket.get(location.bucketName) ?? []), location.key]);
  }
  return [...byBucket].map(([bucket, keys]) => {
    const rules = (expirations[bucket] ?? []).filter((rule) => keys.every((key) => key.startsWith(rule.prefix)));
    const rule = rules.sort((a, b) => a.days - b.days)[0];
    const days = keys.map(writtenOn).filter((day): day is string => day !== undefined).sort();
    const when =
      rule === undefined
        ? 'no expiring lifecycle rule of the stacks covers them: remove them by hand once no copy of the run\'s events can arrive'
        : `its lifecycle rule${rule.ruleId === undefined ? '' : ` ${rule.ruleId}`} expires each ${rule.days} day(s) after it was written` +
          (days.length === 0 ? '' : ` (S3 removes the last of them from ${dayPlus(days.at(-1)!, rule.days + 1)} 00:00 UTC)`);
    return (
      `kept ${keys.length} offloaded event data object(s) of the run in bucket ${bucket} (${keys.map((key) => `s3://${bucket}/${key}`).join(', ')}): ` +
      `the payload bucket denies deleting event data, and a late copy of one of the run's events, a dead letter of one redriven, or a subscriber verify could not see still reads it; ${when}`
    );
  });
}
