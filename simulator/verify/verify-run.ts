/**
 * One verify run against a deployed app, in stages: find the flow (./deployed-flow.ts) → note the dead-letter queues'
 * counts → run the scenario's producers with ids unique to the run (./produce.ts) → wait until the flow is quiet
 * (./settle.ts; at its time limit, the run stops with what it waited for: {@link NotQuietResult}) → read what the run left (./observe.ts) → the simulator's checks (./verify-checks.ts) → clean up what
 * the run created, when asked (./cleanup.ts). It injects no fault and changes nothing it did not create.
 */
import type { DeadLetterFinding } from '../check/dead-letters';
import type { Violation } from '../check/invariants';
import type { ProducerFigures } from '../observation/run-facts';
import { scenarioProducers, type SimulationScenario } from '../run/scenario';
import { cleanUpRun } from './cleanup';
import type { VerifyClients } from './clients';
import { findDeployedFlow, findDeployedFunction, NoDeployedFlowError } from './deployed-flow';
import { deadLetterQueuesOf, inboxCommitGroups, messagesOn, probeEffects, readDeadLetters, readRunEvents, takenEvents, type RunEvent } from './observe';
import { produce } from './produce';
import { classifyRunEvents, type DerivedRunEvent } from './derived-events';
import { newRunId } from './run-ids';
import { NotQuietError, waitUntilQuiet } from './settle';
import { checkVerifiedRun, type VerifiedSubscriber } from './verify-checks';

/** What a verify run is told. */
export interface VerifyOptions {
  readonly scenario: SimulationScenario;
  readonly stacks?: readonly string[];
  readonly count: number;
  readonly seed: string;
  readonly cleanup: boolean;
  readonly timeoutSeconds: number;
  readonly pollSeconds: number;
  /** @default a new one (./run-ids.ts) */
  readonly runId?: string;
  readonly onProgress: (line: string) => void;
}

/** One subscriber's figures. */
export interface VerifiedSubscriberReport {
  readonly name: string;
  /** Run events its filter took. */
  readonly events: number;
  readonly deadLettered: number;
  /** Effects its probe counted (applied, summed over its tallies); undefined without a probe. */
  readonly effectsApplied?: number;
}

/** What a verify run found. */
export interface VerifyResult {
  readonly runId: string;
  readonly seed: string;
  readonly stacks: readonly string[];
  readonly producer: ProducerFigures;
  readonly committedEvents: number;
  /** The run's own event ids: those its commands derive, each carrying the run id (sorted). */
  readonly eventIds: readonly string[];
  /** The run's events whose ids are not its own (a subscriber emitted them without an id), each with its source. */
  readonly derivedEvents: readonly DerivedRunEvent[];
  readonly subscribers: readonly VerifiedSubscriberReport[];
  readonly deadLetters: Readonly<Record<string, readonly DeadLetterFinding[]>>;
  readonly violations: readonly Violation[];
  /** The subscribers the scenario has no effect probe for: their effects were not counted. */
  readonly effectsNotCounted: readonly string[];
  /** What `--cleanup` removed. @default not asked */
  readonly cleanedUp?: readonly string[];
}

/** What a verify run found when the flow did not become quiet in time: no check ran, nothing was cleaned up. */
export interface NotQuietResult {
  readonly runId: string;
  readonly seed: string;
  readonly stacks: readonly string[];
  readonly producer: ProducerFigures;
  /** Why it stopped: the time limit, and what its last look still waited for. */
  readonly notQuiet: { readonly reason: string; readonly timeoutSeconds: number; readonly waitingFor: readonly string[] };
  /** The run's events committed when it stopped, as in {@link VerifyResult}. */
  readonly committedEvents: number;
  readonly eventIds: readonly string[];
  readonly derivedEvents: readonly DerivedRunEvent[];
}

/** A verify run's outcome: checked, or stopped at its time limit. */
export type VerifyOutcome = VerifyResult | NotQuietResult;

/** Whether the run stopped at its time limit. */
export function isNotQuiet(outcome: VerifyOutcome): outcome is NotQuietResult {
  return 'notQuiet' in outcome;
}

/** Runs the scenario against the deployed app (see the module comment). */
export async function runVerify(clients: VerifyClients, options: VerifyOptions): Promise<VerifyOutcome> {
  const runId = options.runId ?? newRunId(Date.now());
  const { scenario } = options;
  const flow = await findDeployedFlow(clients, options.stacks);
  const producers = scenarioProducers(scenario).map((producer) => ({ producer, functionName: findDeployedFunction(flow, producer.function).physicalId }));
  if (producers.length === 0) throw new NoDeployedFlowError("the scenario has no producer: verify drives the deployed flow through the scenario's producer functions");
  const unknown = Object.keys(scenario.effects ?? {}).filter((name) => !flow.subscribers.some((subscriber) => subscriber.name === name));
  if (unknown.length > 0) throw new NoDeployedFlowError(`the scenario has effect probes for ${unknown.join(', ')}, which no deployed subscriber is; deployed: ${flow.subscribers.map((subscriber) => subscriber.name).join(', ')}`);
  options.onProgress(`run ${runId}: ${flow.subscribers.length} subscriber(s) in ${flow.stackNames.join(', ')}`);
  const deadLetterBaseline = new Map<string, number>();
  for (const url of new Set(flow.subscribers.flatMap(deadLetterQueuesOf))) deadLetterBaseline.set(url, await messagesOn(clients, url));

  const figures = await produce(clients, producers, { count: options.count, seed: options.seed, runId }, (done, total) => options.onProgress(`producing: ${done}/${total} command(s)`));
  const probes = scenario.effects ?? {};
  const classify = (events: ReadonlyMap<string, RunEvent>) => classifyRunEvents(events, runId, new Map(flow.subscribers.map((subscriber) => [subscriber.name, takenEvents(subscriber, events)])));
  try {
    await waitUntilQuiet(clients, flow, {
      timeoutSeconds: options.timeoutSeconds,
      pollSeconds: options.pollSeconds,
      probes,
      deadLetterBaseline,
      readEvents: () => readRunEvents(clients, flow, runId),
      onProgress: options.onProgress,
    });
  } catch (error) {
    if (!(error instanceof NotQuietError)) throw error;
    const events = await readRunEvents(clients, flow, runId);
    return {
      runId,
      seed: options.seed,
      stacks: flow.stackNames,
      producer: figures,
      notQuiet: { reason: error.message, timeoutSeconds: error.timeoutSeconds, waitingFor: error.waitingFor },
      committedEvents: events.size,
      ...classify(events),
    };
  }

  const events = await readRunEvents(clients, flow, runId);
  const verified: VerifiedSubscriber[] = [];
  for (const subscriber of flow.subscribers) {
    const taken = takenEvents(subscriber, events);
    const probe = probes[subscriber.name];
    verified.push({
      subscriber,
      taken,
      deadLetters: await readDeadLetters(clients, subscriber, events),
      onQueue: await messagesOn(clients, subscriber.deployment.queueUrl),
      ...(probe === undefined ? {} : { effectProbe: await probeEffects(clients, probe, subscriber, taken, events) }),
      ...(subscriber.deployment.ordered === true ? { commitGroups: await inboxCommitGroups(clients, subscriber, taken) } : {}),
    });
  }
  const eventsById = new Map([...events].map(([id, item]) => [id, item.event]));
  const malformed = scenario.malformed;
  const violations = checkVerifiedRun(verified, eventsById, (id) => malformed !== undefined && eventsById.has(id) && malformed(eventsById.get(id)!));
  const cleanedUp = options.cleanup ? await cleanUpRun(clients, flow, runId, new Set(events.keys())) : undefined;
  return {
    runId,
    seed: options.seed,
    stacks: flow.stackNames,
    producer: figures,
    committedEvents: events.size,
    ...classify(events),
    subscribers: verified.map(({ subscriber, taken, deadLetters, effectProbe }) => ({
      name: subscriber.name,
      events: taken.size,
      deadLettered: deadLetters.length,
      ...(effectProbe === undefined || 'error' in effectProbe ? {} : { effectsApplied: effectProbe.tallies.reduce((sum, tally) => sum + tally.applied, 0) }),
    })),
    deadLetters: Object.fromEntries(verified.map(({ subscriber, deadLetters }) => [subscriber.name, deadLetters])),
    violations,
    effectsNotCounted: flow.subscribers.filter((subscriber) => probes[subscriber.name] === undefined).map((subscriber) => subscriber.name),
    ...(cleanedUp === undefined ? {} : { cleanedUp }),
  };
}
