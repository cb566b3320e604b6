/**
 * What a simulated run knows upstream of its subscribers (simulator/check/effect-causes.ts): the commands producers
 * committed under two ids (the producer probes' `event-id-per-attempt` causes), the subscribers whose function wrote
 * events to its outbox outside its transaction (with the events it wrote), and which consumed event each emitted event
 * was emitted for (simulator/check/apply-attribution.ts).
 */
import { checkDualWrites } from '../check/dual-writes';
import type { UpstreamFacts } from '../check/effect-causes';
import type { ProducerProbeOutcome } from '../check/run-check';
import type { SimulatedEvent } from '../observation/run-facts';
import type { BuiltRun } from './build';

/** The upstream facts of a run, from its producer probes' outcomes and what `built` recorded of the functions' requests. */
export function upstreamFacts(
  built: Pick<BuiltRun, 'attribution' | 'ownClientWrites' | 'ledger'>,
  producerProbes: readonly ProducerProbeOutcome[],
  eventsById: ReadonlyMap<string, SimulatedEvent>,
  subscribers: readonly { readonly name: string; readonly functionKey?: string }[],
): UpstreamFacts {
  const repeatedCommands = producerProbes.flatMap((probe) =>
    'error' in probe
      ? []
      : checkDualWrites(probe.producer, probe.changes, probe.inOutbox, probe.producerEventIds, eventsById)
          .flatMap((finding) => finding.causes ?? [])
          .filter((cause) => cause.kind === 'event-id-per-attempt'),
  );
  const outboxWriters = subscribers.flatMap(({ name, functionKey }) => {
    const cause = functionKey === undefined ? undefined : built.ownClientWrites.causeOf(functionKey, name, []);
    return cause?.kind === 'outbox-write-outside-transaction' ? [{ cause, eventIds: built.ledger.outboxWrites.get(functionKey!) ?? new Set<string>() }] : [];
  });
  return { repeatedCommands, outboxWriters, emittedFor: (eventId) => built.attribution.emittedFor(eventId) };
}
