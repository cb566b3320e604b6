/**
 * A producer the run drove, seen through its attempts: the simulator invokes each command and retries a failed
 * invocation (simulator/run/producer-driver.ts), and hears which outbox events each attempt's applied writes committed.
 * A later attempt of one command that committed an event of the same type and subject as an earlier attempt's, under
 * another id, committed the command twice: `event-id-per-attempt` (a new event id drawn per attempt). A correct producer
 * derives the id from the command, so every attempt writes the same event. This needs no producer probe.
 */
import type { SimulatedEvent } from '../observation/run-facts';
import { fixFor, type ViolationCause } from './violation-cause';

/** The invocation key of a driven producer's attempt: `producer|<command index>|<attempt>`. */
export const ATTEMPT_KEY = /^producer\|(\d+)\|(\d+)$/;

/**
 * The `event-id-per-attempt` causes of `producer` (as the report names it), from the events each of its invocations
 * committed (`written`, by invocation key, in order) and the committed envelopes (`eventsById`): per command, each
 * event of a later attempt whose type and subject an earlier attempt's event has under another id, with that id kept
 * first (the kept one, then the repeat).
 */
export function repeatedByAttempts(producer: string, written: ReadonlyMap<string, readonly string[]>, eventsById: ReadonlyMap<string, SimulatedEvent>): ViolationCause[] {
  const byCommand = new Map<number, { attempt: number; eventIds: readonly string[] }[]>();
  for (const [invocationKey, eventIds] of written) {
    const match = ATTEMPT_KEY.exec(invocationKey);
    if (match === null) continue;
    const command = Number(match[1]);
    byCommand.set(command, [...(byCommand.get(command) ?? []), { attempt: Number(match[2]), eventIds }]);
  }
  const causes: ViolationCause[] = [];
  for (const command of [...byCommand.keys()].sort((a, b) => a - b)) {
    // per site (type and subject), the ids earlier attempts of the command committed, in order
    const earlier = new Map<string, string[]>();
    for (const { eventIds } of byCommand.get(command)!.sort((a, b) => a.attempt - b.attempt)) {
      const sites = new Map<string, string[]>();
      for (const eventId of eventIds) {
        const event = eventsById.get(eventId);
        if (event === undefined) continue;
        const site = `${event.type}|${event.subject ?? ''}`;
        const before = earlier.get(site) ?? [];
        // an id no earlier attempt committed, at a site one did: the command committed again under a new id
        if (before.length > 0 && !before.includes(eventId) && !causes.some((cause) => cause.eventIds.includes(eventId))) {
          causes.push({ kind: 'event-id-per-attempt', producer, eventIds: [before[0]!, eventId], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') });
        }
        sites.set(site, [...(sites.get(site) ?? []), eventId]);
      }
      for (const [site, ids] of sites) earlier.set(site, [...(earlier.get(site) ?? []), ...ids.filter((id) => !(earlier.get(site) ?? []).includes(id))]);
    }
  }
  return causes;
}
