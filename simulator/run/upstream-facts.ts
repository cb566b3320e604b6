/**
 * What a simulated run knows upstream of its subscribers (simulator/check/effect-causes.ts): the commands producers
 * committed under two ids (the producer probes' `event-id-per-attempt` causes, and those the attempts of a producer the
 * run drove committed, probe or not), the subscribers whose function wrote
 * events to its outbox outside its transaction (with the events it wrote), and which consumed event each emitted event
 * was emitted for (simulator/check/apply-attribution.ts).
 */
import { checkDualWrites } from '../check/dual-writes';
import { checkCommittedTwice } from '../check/committed-twice';
import { repeatedByAttempts } from '../check/producer-attempts';
import type { ViolationCause } from '../check/violation-cause';
import type { UpstreamFacts } from '../check/effect-causes';
import type { ProducerProbeOutcome } from '../check/run-check';
import type { SimulatedEvent } from '../observation/run-facts';
import type { BuiltRun } from './build';

/** The upstream facts of a run, from its producer probes' outcomes, the producers it drove, and what `built` recorded of the functions' requests. */
export function upstreamFacts(
  built: Pick<BuiltRun, 'attribution' | 'ownClientWrites' | 'ledger'>,
  producerProbes: readonly ProducerProbeOutcome[],
  eventsById: ReadonlyMap<string, SimulatedEvent>,
  subscribers: readonly { readonly name: string; readonly functionKey?: string }[],
  drivenProducers: readonly { readonly name: string; readonly functionKey: string }[] = [],
): UpstreamFacts {
  const probed = producerProbes.flatMap((probe) =>
    'error' in probe
      ? []
      : checkDualWrites(probe.producer, probe.changes, probe.inOutbox, probe.producerEventIds, eventsById)
          .flatMap((finding) => finding.causes ?? [])
          .filter((cause) => cause.kind === 'event-id-per-attempt'),
  );
  // what the producer's attempts committed tells it too, with or without a probe (../check/producer-attempts.ts)
  // and a later attempt's transaction that repeats an earlier attempt's under new ids, whatever its subject (../check/committed-twice.ts)
  const attempted = drivenProducers.flatMap(({ name, functionKey }) => [
    ...repeatedByAttempts(name, built.ledger.outboxWritesByInvocation.get(functionKey) ?? new Map(), eventsById),
    ...checkCommittedTwice(name, built.ledger.outboxRequestsByInvocation.get(functionKey) ?? new Map(), eventsById).flatMap((finding) => finding.causes ?? []),
  ]);
  const pairOf = (cause: ViolationCause): string => [...cause.eventIds].sort().join('|');
  const seenPairs = new Set(probed.map(pairOf));
  const repeatedCommands = [...probed];
  for (const cause of attempted) {
    if (seenPairs.has(pairOf(cause))) continue;
    seenPairs.add(pairOf(cause));
    repeatedCommands.push(cause);
  }
  const outboxWriters = subscribers.flatMap(({ name, functionKey }) => {
    const cause = functionKey === undefined ? undefined : built.ownClientWrites.causeOf(functionKey, name, []);
    return cause?.kind === 'outbox-write-outside-transaction' ? [{ cause, eventIds: built.ledger.outboxWrites.get(functionKey!) ?? new Set<string>() }] : [];
  });
  return { repeatedCommands, outboxWriters, emittedFor: (eventId) => built.attribution.emittedFor(eventId) };
}
