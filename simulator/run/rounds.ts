/**
 * The rounds of a run, until everything settles: each round runs the producer's next commands, then every relay reads
 * its stream, then every event source mapping runs its batches (concurrently). When a round did nothing and messages
 * are in flight, the clock jumps to the moment the next one becomes visible again; when nothing is in flight either,
 * the round is run once more (the streams read again, caught up with their tables) before the run is called settled:
 * no real-time wait, which would let the machine's speed decide what the last look sees.
 *
 * The run also stops when the next jump would pass `maxSimulatedSeconds`, or after `maxRounds` rounds; the outcome
 * then says so and what was still in flight, so the run reports it instead of passing as settled.
 */
import type { VirtualClock } from '../aws/clock';
import type { LocalFlow } from './build-flow';
import type { RunLedger } from '../observation/ledger';
import type { SimulationProgress } from './options';
import type { ProducerDriver } from './producer-driver';
import type { CatchingUpRelay } from './relay-catch-up';
import type { RoundsOutcome } from '../observation/run-facts';

/** The parts of the local flow the rounds use. */
export type RoundsFlow = Pick<LocalFlow, 'queues' | 'mappings' | 'subscribers'>;

/** How the rounds run. */
export interface RoundsOptions {
  /** Producer commands and invocations per function in flight at once. */
  readonly concurrency: number;
  /** The clock never jumps past this much simulated time. */
  readonly maxSimulatedSeconds: number;
  /**
   * The run stops after this many rounds, settled or not: a flow whose consumers keep emitting events that feed
   * themselves does work in every round, so the clock never moves and only a count of rounds can end it.
   */
  readonly maxRounds: number;
  /** Producer commands (or user events) in all, for the progress. */
  readonly toProduce: number;
  readonly onProgress?: (progress: SimulationProgress) => void;
}

/** The queues with messages in flight, and how many. */
function inFlight(flow: RoundsFlow): { queue: string; messages: number }[] {
  return [...flow.queues.values()].flatMap((queue) => {
    const { inFlight: messages } = queue.counts();
    return messages > 0 ? [{ queue: queue.address.name, messages }] : [];
  });
}

/** Runs rounds until nothing is left to do (see the module comment). */
export async function runRounds(
  flow: RoundsFlow,
  relays: readonly Pick<CatchingUpRelay, 'poll'>[],
  ledger: RunLedger,
  clock: VirtualClock,
  driver: Pick<ProducerDriver, 'remaining' | 'next' | 'figures'> | undefined,
  options: RoundsOptions,
): Promise<RoundsOutcome> {
  let rounds = 0;
  let idleChecks = 0;
  const progress = (): void => {
    let settled = 0;
    let matched = 0;
    for (const { subscription } of flow.subscribers) {
      matched += ledger.matchedEvents.get(subscription.key)?.size ?? 0;
      settled += new Set([...(ledger.acknowledgedEvents.get(subscription.key) ?? []), ...(ledger.deadLetterDeletedEvents.get(subscription.key) ?? [])]).size;
    }
    let deliveries = 0;
    for (const figures of ledger.mappings.values()) deliveries += figures.deliveries;
    options.onProgress?.({
      produced: driver ? driver.figures.total - driver.remaining : options.toProduce,
      toProduce: options.toProduce,
      settled: Math.min(settled, matched),
      matched,
      deliveries,
      faults: ledger.totalFaults(),
      simulatedSecondsAhead: Math.round(clock.offsetMs() / 1000),
    });
  };
  // a relay starting at LATEST takes its position at its first poll: before anything is produced
  for (const relay of relays) await relay.poll();
  for (;;) {
    if (rounds >= options.maxRounds) {
      return { rounds, cutOff: { limit: 'rounds', maxSimulatedSeconds: options.maxSimulatedSeconds, maxRounds: options.maxRounds, inFlight: inFlight(flow) } };
    }
    rounds += 1;
    let work = 0;
    if (driver !== undefined && driver.remaining > 0) work += await driver.next(options.concurrency);
    for (const relay of relays) work += await relay.poll();
    // every mapping receives its batches before any invokes: what the scheduler's first turns see is the whole round
    const prepared = await Promise.all(flow.mappings.map((mapping) => mapping.prepareRound(options.concurrency)));
    const invocations = await Promise.all(prepared.map((run) => run()));
    work += invocations.reduce((sum: number, count: number) => sum + count, 0);
    progress();
    if (work > 0) {
      idleChecks = 0;
      continue;
    }
    let next: number | undefined;
    for (const queue of flow.queues.values()) {
      const visibleAt = queue.nextVisibleAt();
      if (visibleAt !== undefined && (next === undefined || visibleAt < next)) next = visibleAt;
    }
    if (next === undefined) {
      // nothing in flight anywhere; look at the streams once more before calling it settled (every relay poll catches up
      // with its table, so no real-time wait is needed, and none may decide what the look sees)
      idleChecks += 1;
      if (idleChecks >= 2) return { rounds };
      continue;
    }
    idleChecks = 0;
    if (clock.offsetMs() + Math.max(0, next - clock.now()) > options.maxSimulatedSeconds * 1000) {
      return { rounds, cutOff: { limit: 'simulated-time', maxSimulatedSeconds: options.maxSimulatedSeconds, maxRounds: options.maxRounds, inFlight: inFlight(flow) } };
    }
    clock.advanceTo(next);
  }
}
