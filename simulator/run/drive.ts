/**
 * The run's third stage: the producers driven (each scenario producer's commands, through its function, retried as a
 * caller would), or the user's events appended to the outbox, and the rounds run until everything settles:
 *
 *   each round: the producer's next commands → every relay reads its stream → every event source mapping runs its
 *   batches (concurrently) → when nothing was visible, the clock jumps to the next message's visibility timeout.
 */
import type { ProducerFigures, RoundsOutcome } from '../observation/run-facts';
import { seededRandom, seedNumber } from '../schedule/seeded-random';
import type { BuiltRun } from './build';
import { SIMULATION_DEFAULTS, type SimulationOptions } from './options';
import type { PreparedApp, RunSettings } from './prepare';
import { appendUserEvents, ProducerDriver, ProducerDrivers } from './producer-driver';
import { shownName } from '../model/find-resource';
import { CatchingUpRelay } from './relay-catch-up';
import { runRounds, type RoundsOptions } from './rounds';
import type { PhaseTimer } from './run-profile';

/** What the drive left: the drivers (their figures are read once every command ran), the relays, how the rounds went. */
export interface DrivenRun {
  readonly driver?: ProducerDrivers;
  /** The producer side's figures when the run began (the user's events', final; the drivers' are read from `driver`). */
  readonly producerFigures: ProducerFigures;
  readonly relays: readonly CatchingUpRelay[];
  readonly roundsOptions: RoundsOptions;
  readonly roundsOutcome: RoundsOutcome;
}

/** A UUID-shaped id drawn from a seeded generator (for user events without an id). */
function seededUuid(random: () => number): () => string {
  return () => {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };
}

/** Drives the producers and runs the rounds until the run settles (or a limit cuts it off). */
export async function driveRun(options: SimulationOptions, settings: RunSettings, app: PreparedApp, built: BuiltRun, phases: PhaseTimer): Promise<DrivenRun> {
  const { model, producers } = app;
  const { flow, client, ledger, clock } = built;
  const random = seededRandom(seedNumber(settings.seed));
  let driver: ProducerDrivers | undefined;
  let producerFigures: ProducerFigures;
  if (producers.length > 0) {
    driver = new ProducerDrivers(
      producers.map(
        ({ producer, fn }) =>
          new ProducerDriver(flow.runners.get(fn.key)!, producer.commands(settings.count, random), producers.length > 1 ? shownName(fn) : undefined, built.wroteUnseen(fn.key), producer.failedResponse),
      ),
    );
    producerFigures = driver.figures;
  } else {
    producerFigures = await appendUserEvents(model, flow, client, options.events ?? [], seededUuid(random));
  }

  const relays = flow.relays.map((relay) => {
    const source = model.relays.find((candidate) => candidate.key === relay.key)!.sourceTable;
    return new CatchingUpRelay(relay, client, flow.tables.get(source)!.tableName, () => (ledger.catchUpLimitMet += 1));
  });
  const maxSimulatedSeconds = options.maxSimulatedSeconds ?? SIMULATION_DEFAULTS.maxSimulatedSeconds;
  // enough rounds for the producer at one command per invocation slot, plus a margin no settling flow comes near
  const maxRounds = options.maxRounds ?? Math.ceil(producerFigures.total / settings.concurrency) + SIMULATION_DEFAULTS.extraRounds;
  const roundsOptions = { concurrency: settings.concurrency, maxSimulatedSeconds, maxRounds, toProduce: producerFigures.total, onProgress: options.onProgress };
  const roundsOutcome = await runRounds(flow, relays, ledger, clock, driver, roundsOptions);
  phases.ended('rounds');
  return { ...(driver === undefined ? {} : { driver }), producerFigures, relays, roundsOptions, roundsOutcome };
}
