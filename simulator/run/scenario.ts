/**
 * A scenario tells the simulator what only the app knows: which producer function to drive and with what, and how to
 * count each subscriber's effects in its own tables. It is a module that exports `scenario` (or a default export) of
 * type {@link SimulationScenario}; `.ts` modules are bundled with esbuild first, so the app's own TypeScript works.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OperatorDecision } from './operator';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { BusinessChange, EffectTally, SimulatedEvent } from '../observation/run-facts';

/**
 * A message a function of the app sent with its own SQS client to a queue the app does not consume: one outside its
 * templates (another team's), or one of its own that no event source mapping reads.
 */
export interface SentMessage {
  /** The queue's name. */
  readonly queueName: string;
  readonly body: string;
  /** Its message attributes: the string value (or base64 binary value) by name. */
  readonly messageAttributes: Readonly<Record<string, string>>;
  /** The function that sent it (its construct path). */
  readonly sentBy: string;
  /** The event whose handling sent it, when the simulator can tell (its body names it, or its invocation had only it). */
  readonly eventId?: string;
}

/** What a probe can read. */
export interface EffectProbeContext {
  /** A client of the local DynamoDB (not through any fault). */
  readonly client: DynamoDBDocumentClient;
  /** The subscriber consumer's environment variables, resolved to local names (e.g. its table names). */
  readonly environment: Readonly<Record<string, string>>;
  /** The events that reached the subscriber's queue (matched its filter policy), once each. */
  readonly events: readonly SimulatedEvent[];
  /** Every message the app's functions sent to queues it does not consume (see {@link SentMessage}), in order: effects outside DynamoDB. */
  readonly sentMessages: readonly SentMessage[];
}

/** Counts a subscriber's effects after the run. */
export type EffectProbe = (context: EffectProbeContext) => Promise<readonly EffectTally[]>;

/** What a producer probe can read. */
export interface ProducerProbeContext {
  /** A client of the local DynamoDB (not through any fault). */
  readonly client: DynamoDBDocumentClient;
  /** The producer function's environment variables, resolved to local names (e.g. its business table's name). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * The producer's committed outbox events: those of the outbox it writes to that its function wrote (the simulator
   * hears every request of the functions it runs; another producer's or a subscriber's events on the same outbox are not
   * the producer's), of its `eventTypes` when given.
   */
  readonly events: readonly SimulatedEvent[];
}

/**
 * Reads, after the run, the business changes the producer's commands committed, from the app's own tables. The
 * simulator then checks the producer side of the outbox (`dual-write`): every change has its events in the outbox,
 * and every event of the producer belongs to a change.
 */
export type ProducerProbe = (context: ProducerProbeContext) => Promise<readonly BusinessChange[]>;

/** The producer the simulator drives. */
export interface ScenarioProducer {
  /** The producer function: its construct path (or a unique suffix of it), or its logical id. */
  readonly function: string;
  /** The payloads to invoke it with, `count` of them, drawn from `random` (seeded: same seed, same payloads). */
  commands(count: number, random: () => number): readonly unknown[];
  /**
   * Reads the business changes the commands committed, each with the events it must have committed with it (see
   * {@link ProducerProbe}). @default the producer side is not checked: a business write without its event goes unseen
   */
  readonly probe?: ProducerProbe;
  /**
   * Whether a response the function returned fails the command (an API's producer answers a failed command with an
   * error response rather than a throw): a failed command is retried, and counted as failed after every attempt.
   * @default a response with an HTTP `statusCode` of 500 or more fails it (a 4xx such as 409 is the command's answer)
   */
  readonly failedResponse?: (response: unknown) => boolean;
  /**
   * The types of its events the probe accounts for: of the events the producer's function wrote, only these must each
   * belong to a business change (another producer's or a subscriber's events on the same outbox never are the
   * producer's). @default every event the producer's function wrote
   */
  readonly eventTypes?: readonly string[];
}

/** What `--scenario <module>` exports. */
export interface SimulationScenario {
  /**
   * How an operator decides the blocked steps of lease and multi-step subscribers, by subscriber name. Once the run
   * settles, the simulator resolves each blocked step with it and redrives the subscriber's dead-letter queues
   * (simulator/run/operator.ts). @default blocked messages stay in the dead-letter queues
   */
  readonly operator?: Readonly<Record<string, OperatorDecision>>;
  /**
   * The role the operator works under (its construct path, a trailing part of it, or its logical id): with IAM on, the
   * operator's `BlockedMessages` calls are authorized under its policies, e.g. a role given `inboxTable.grantOperator`.
   * @default the operator's calls are not evaluated
   */
  readonly operatorRole?: string;
  /** The producer the run drives. Not with `producers`. @default no producer: events come from `--events` */
  readonly producer?: ScenarioProducer;
  /**
   * Several producers, e.g. one per flow of the app, so one run drives and checks the whole app: each runs `--count`
   * commands (interleaved, each with its own commands, probe and event types). Not with `producer`.
   * @default only `producer`
   */
  readonly producers?: readonly ScenarioProducer[];
  /** Effect probes by subscriber name (`IEF_SUBSCRIBER_NAME` of its consumer, or its subscription's construct path). @default effects are not counted */
  readonly effects?: Readonly<Record<string, EffectProbe>>;
  /**
   * Which events the run sends malformed on purpose (e.g. an order with a fraction of a cent), so that a subscriber
   * may reject them for good (dead-letter them at once). The producers make every event of the run, so a permanent
   * rejection of an event this does not mark fails the run (`valid-event-rejected`).
   * @default no event is malformed
   */
  readonly malformed?: (event: SimulatedEvent) => boolean;
  /**
   * The event types the app means to be consumed (e.g. `['OrderPlaced', 'OrderPlaced.v2']`): a committed event of one
   * of these types that no subscription's filter policy took fails the run (`untaken-event`). The list is read as
   * whole: a committed event of a type named neither here nor in {@link publishedOutside} that no subscription took
   * fails the run too (a producer's new type nobody added to a filter). Every run lists, per type, the committed events
   * no subscription took.
   * @default no type is required to be consumed, and untaken events fail nothing
   */
  readonly expectConsumed?: readonly string[];
  /**
   * The event types each subscriber must consume, by subscriber name (as {@link effects} names them), e.g.
   * `{ Settlement: ['PaymentTaken', 'PaymentRefunded'] }`: a committed event of one of its types that reached its topic
   * and that its filter policy did not take fails the run (`untaken-event`, at that subscriber), even when another
   * subscriber takes that type. {@link expectConsumed} asks only that some subscriber take it.
   * @default no subscriber is required to take a type
   */
  readonly consumes?: Readonly<Record<string, readonly string[]>>;
  /**
   * The event types the app publishes for consumers outside it, which no subscription of the app takes: with
   * {@link expectConsumed} declared, their untaken events are no violation.
   * @default none
   */
  readonly publishedOutside?: readonly string[];
}

/** Thrown when a scenario module cannot be loaded or does not export a scenario. */
export class ScenarioError extends Error {
  public override readonly name = 'ScenarioError';
}

/** The producers a scenario drives: `producers`, or its one `producer`, or none. */
export function scenarioProducers(scenario: SimulationScenario | undefined): readonly ScenarioProducer[] {
  return scenario?.producers ?? (scenario?.producer === undefined ? [] : [scenario.producer]);
}

function checkProducer(producer: ScenarioProducer | null | undefined, label: string, file: string): void {
  if (typeof producer !== 'object' || producer === null || typeof producer.function !== 'string' || typeof producer.commands !== 'function') {
    throw new ScenarioError(`scenario module ${file}: '${label}' needs a 'function' (construct path or logical id) and a 'commands(count, random)' function`);
  }
  if (producer.probe !== undefined && typeof producer.probe !== 'function') {
    throw new ScenarioError(`scenario module ${file}: ${label}.probe must be a function, got ${typeof producer.probe}`);
  }
  if (producer.failedResponse !== undefined && typeof producer.failedResponse !== 'function') {
    throw new ScenarioError(`scenario module ${file}: ${label}.failedResponse must be a function of a response that says whether it fails the command, got ${typeof producer.failedResponse}`);
  }
  const eventTypes: unknown = producer.eventTypes;
  if (eventTypes !== undefined && !(Array.isArray(eventTypes) && eventTypes.every((type) => typeof type === 'string'))) {
    throw new ScenarioError(`scenario module ${file}: ${label}.eventTypes must be a list of event type names`);
  }
}

function asScenario(exports: Record<string, unknown>, file: string): SimulationScenario {
  const candidate = exports.scenario ?? exports.default;
  if (typeof candidate !== 'object' || candidate === null) {
    throw new ScenarioError(`scenario module ${file} must export 'scenario' (or a default export), an object with 'producer' and/or 'effects'`);
  }
  const scenario = candidate as SimulationScenario;
  if (scenario.producer !== undefined && scenario.producers !== undefined) {
    throw new ScenarioError(`scenario module ${file}: give 'producer' or 'producers', not both (put the one producer in the list)`);
  }
  if (scenario.producer !== undefined) checkProducer(scenario.producer, 'producer', file);
  if (scenario.producers !== undefined) {
    if (!Array.isArray(scenario.producers) || scenario.producers.length === 0) {
      throw new ScenarioError(`scenario module ${file}: 'producers' must be a non-empty list of producers`);
    }
    scenario.producers.forEach((producer, index) => checkProducer(producer, `producers[${index}]`, file));
  }
  if (scenario.operatorRole !== undefined && typeof scenario.operatorRole !== 'string') {
    throw new ScenarioError(`scenario module ${file}: 'operatorRole' must be a role's construct path or logical id, got ${typeof scenario.operatorRole}`);
  }
  for (const [subscriber, decide] of Object.entries(scenario.operator ?? {})) {
    if (typeof decide !== 'function') throw new ScenarioError(`scenario module ${file}: operator.${subscriber} must be a function, got ${typeof decide}`);
  }
  if (scenario.malformed !== undefined && typeof scenario.malformed !== 'function') {
    throw new ScenarioError(`scenario module ${file}: 'malformed' must be a function of an event that says whether it is malformed on purpose, got ${typeof scenario.malformed}`);
  }
  for (const [subscriber, types] of Object.entries(scenario.consumes ?? {})) {
    if (!Array.isArray(types) || !types.every((type) => typeof type === 'string')) {
      throw new ScenarioError(`scenario module ${file}: consumes.${subscriber} must be a list of event type names`);
    }
  }
  for (const [subscriber, probe] of Object.entries(scenario.effects ?? {})) {
    if (typeof probe !== 'function') throw new ScenarioError(`scenario module ${file}: effects.${subscriber} must be a function, got ${typeof probe}`);
  }
  return scenario;
}

/** Loads a scenario module; TypeScript is bundled in memory with the project's esbuild and evaluated as CommonJS. */
export async function loadScenario(file: string, cwd: string): Promise<SimulationScenario> {
  const absolute = path.resolve(cwd, file);
  if (!existsSync(absolute)) throw new ScenarioError(`scenario module ${file}: there is no file ${absolute}`);
  if (!/\.(c|m)?ts$/.test(absolute)) {
    let exports: Record<string, unknown>;
    try {
      exports = createRequire(absolute)(absolute) as Record<string, unknown>;
    } catch (error) {
      throw new ScenarioError(`scenario module ${file} could not be loaded: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    return asScenario(exports, file);
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = createRequire(absolute)('esbuild') as typeof import('esbuild');
  } catch {
    throw new ScenarioError(`scenario module ${file} is TypeScript, which needs esbuild to load: npm install --save-dev esbuild (or pass a .js module)`);
  }
  try {
    const result = await esbuild.build({
      entryPoints: [absolute],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${process.versions.node.split('.')[0]}`,
      write: false,
      logLevel: 'silent',
      // packages stay external: they resolve from the scenario's own folder, as in the app
      packages: 'external',
      absWorkingDir: cwd,
    });
    const source = result.outputFiles[0]?.text ?? '';
    const moduleObject = { exports: {} as Record<string, unknown> };
    const requireFromScenario = createRequire(absolute);
    // evaluated like a CommonJS module that lives where the scenario file does
    new Function('module', 'exports', 'require', '__filename', '__dirname', source)(moduleObject, moduleObject.exports, requireFromScenario, absolute, path.dirname(absolute));
    return asScenario(moduleObject.exports, file);
  } catch (error) {
    if (error instanceof ScenarioError) throw error;
    throw new ScenarioError(`scenario module ${file} could not be loaded: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
