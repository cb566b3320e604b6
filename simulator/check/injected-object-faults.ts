/**
 * The committed events whose claim-check object (issue 42) the run's S3 altered or deleted after it was written (an
 * injected fault: simulator/aws/s3-endpoint.ts). Their consumers cannot apply them, by design: the right outcome is a
 * dead letter with its reason (the runtime's integrity or missing-object error), which the `valid-event-rejected` and
 * `unapplied-event` checks then do not count against the run. The object's key names its event by the SHA-256 of the
 * event id (lambda/contract/claim-check.ts, `payloadObjectKey`: `<prefix><sha256(event id)>/<UTC day>-<sha256(data)>`).
 */
import { createHash } from 'node:crypto';
import type { InjectedObjectFault } from '../aws/s3-endpoint';

/** Each committed event among `eventIds` whose object the run altered or deleted, with the fault. */
export function injectedObjectFaultsByEvent(faults: readonly InjectedObjectFault[], eventIds: Iterable<string>): Map<string, InjectedObjectFault> {
  const byEvent = new Map<string, InjectedObjectFault>();
  if (faults.length === 0) return byEvent;
  const byDigest = new Map<string, InjectedObjectFault>();
  for (const fault of faults) {
    const segments = fault.key.split('/');
    const eventDigest = segments[segments.length - 2];
    if (eventDigest !== undefined) byDigest.set(eventDigest, fault);
  }
  for (const eventId of eventIds) {
    const fault = byDigest.get(createHash('sha256').update(eventId, 'utf8').digest('hex'));
    if (fault !== undefined) byEvent.set(eventId, fault);
  }
  return byEvent;
}
