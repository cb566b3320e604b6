/**
 * One simulation run, start to end: synthesize (or read) the cloud assembly, model the flow from its templates, start
 * DynamoDB Local and build the local flow, drive the producer, then run rounds until everything settles:
 *
 *   each round: the producer's next commands → every relay reads its stream → every event source mapping runs its
 *   batches (concurrently) → when nothing was visible, the clock jumps to the next message's visibility timeout.
 *
 * Then the checks run and the result says what happened and what, if anything, broke.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { VirtualClock } from '../aws/clock';
import type { TransactionConflictFigures } from '../aws/transaction-conflicts';
import { startDynamoDbLocal } from '../aws/dynamodb-local';
import { readDeadLetters, type DeadLetterFinding } from '../check/dead-letters';
import { checkAccess } from '../check/access';
import type { IamFigures } from '../iam/access-types';
import { startOperatorClient } from '../iam/operator-access';
import { HOW_TO_INSTALL_POLICY_ENGINE, loadPolicyEngine } from '../iam/policy-engine';
import { checkHistory, HistoryRecorder } from '../check/history';
import { checkDeliveries, checkEffects, checkRelayed, checkSettled, checkTracked, type Violation } from '../check/invariants';
import { checkProducerFailures } from '../check/producer-failures';
import { checkDeployRules } from '../check/deploy-rules';
import { checkSubscriberHealth } from '../check/subscriber-health';
import { checkProbedSubscriberReached } from '../check/unreached-subscribers';
import { checkRejectedEvents } from '../check/rejected-events';
import { checkUnappliedEvents } from '../check/unapplied-events';
import { OwnClientWrites } from '../check/own-client-writes';
import { ApplyAttribution } from '../check/apply-attribution';
import { checkFailurePaths, failurePathsOf, faultsStillNeeded, requiredFailurePaths, type FailurePathCounts } from '../check/failure-paths';
import { attributeSends, checkRepeatedSends, type SendFigures } from '../check/repeated-sends';
import { checkUnwatchedDeadLetters, type DeadLetterQueueContents } from '../check/unwatched-dead-letters';
import type { ProxiedRequest, RequestFault } from '../faults/dynamodb-proxy';
import { FaultPlan, type FaultKind } from '../faults/fault-plan';
import { FaultSteering, steeredFaults } from '../faults/fault-steering';
import { ENV } from '../../lambda/contract/environment';
import { readAssembly } from '../model/read-assembly';
import { hasAppCommand } from '../model/synthesize';
import { readSynthAnnotations, type SynthAnnotation } from '../model/synth-annotations';
import { runAssembly } from './assembly-source';
import { PhaseTimer } from './run-profile';
import type { FlowModel, ResourceKey } from '../model/flow-model';
import { buildLocalFlow, type LocalFlow } from './build-flow';
import { readCommittedOutbox } from './committed-events';
import { checkAggregateOrder } from '../check/aggregate-order';
import { checkSubjectSpread } from '../check/subject-spread';
import { aggregateOrderCoverage, type AggregateOrderCoverage } from '../check/aggregate-order-coverage';
import { CatchingUpRelay } from './relay-catch-up';
import { MAX_OPERATOR_PASSES, noOperatorFigures, operatorPass, type OperatorFigures } from './operator';
import { RunLedger } from '../observation/ledger';
import { runRounds } from './rounds';
import { checkInteger, DEFAULT_FAULT_RATES, SIMULATION_BOUNDS, SIMULATION_DEFAULTS, type SimulationOptions } from './options';
import { shownName } from '../model/find-resource';
import { appendUserEvents, findFunction, PRODUCER_ATTEMPTS, ProducerDriver, ProducerDrivers, producerKeys } from './producer-driver';
import type { ProducerFigures } from '../observation/run-facts';
import { scenarioProducers, type SentMessage } from './scenario';
import { checkProducerWrites } from './producer-probe';
import { seededRandom, seedNumber } from '../schedule/seeded-random';
import { writePrivateFile } from './private-file';
import { SeededScheduler } from '../schedule/seeded-scheduler';
import { runServices, type RunDatabase } from './run-services';
import { WRITE_OPERATIONS } from '../aws/request-items';

/** The figures of one subscriber, as the summary table shows them. */
export interface SubscriberReport {
  readonly name: string;
  /** `IEF_PROCESSING_MODE` of its consumer, when set. */
  readonly processingMode?: string;
  /** Events that matched its filter policy. */
  readonly events: number;
  /** Messages handed to its consumer, every receive counted. */
  readonly deliveries: number;
  /** Deliveries the runtime recognised as already applied (its `Duplicates` metric). */
  readonly duplicatesSuppressed: number;
  /** Faults injected on its subscription, queue and consumer. */
  readonly faults: number;
  /** The same faults by kind. */
  readonly faultsByKind: Partial<Record<FaultKind, number>>;
  /** Deliveries of a message received before. */
  readonly retries: number;
  /** Messages in its dead-letter queues at the end. */
  readonly deadLettered: number;
  /** Effect applications the scenario's probe counted, and the range exactly-once allows; absent without a probe. */
  readonly effects?: { readonly applied: number; readonly min: number; readonly max: number };
  /** How often its consumer met each failure path (simulator/check/failure-paths.ts): what this run proved of it. */
  readonly failurePaths: FailurePathCounts;
  /** For a subscriber on a FIFO queue: the aggregates and events whose order the `aggregate-order` check read. */
  readonly orderChecked?: AggregateOrderCoverage;
}

/** What a run did and found. */
export interface SimulationResult {
  readonly assemblyDirectory: string;
  /** The synth's warnings and errors of the simulated stacks (an error is also a `synth-error` violation). */
  readonly synthAnnotations: readonly SynthAnnotation[];
  readonly seed: string;
  readonly producer: ProducerFigures;
  readonly relay: RelayFigures;
  /** SNS → SQS deliveries: attempts that failed (and were retried), messages put on subscription DLQs, messages lost. */
  readonly sns: { readonly failedAttempts: number; readonly deadLettered: number; readonly undeliverable: number };
  /**
   * DynamoDB requests of the functions (and of the operator under its role) refused with a transaction conflict, as
   * DynamoDB refuses a request that meets an ongoing one on the same item (DynamoDB Local never does; docs/SIMULATOR.md).
   */
  readonly transactionConflicts: TransactionConflictFigures;
  /** The SQS messages the functions sent with their own clients, per function and queue (repeated-sends.ts). */
  readonly sqsSends: readonly SendFigures[];
  readonly subscribers: readonly SubscriberReport[];
  /** Every dead letter with its explanation, by subscriber name. */
  readonly deadLetters: ReadonlyMap<string, readonly DeadLetterFinding[]>;
  readonly violations: readonly Violation[];
  /** Subscribers without an effect probe (their effects were not counted). */
  readonly effectsNotCounted: readonly string[];
  readonly notSimulated: readonly string[];
  readonly rounds: number;
  readonly simulatedSeconds: number;
  readonly realSeconds: number;
  readonly totalFaults: number;
  /** What the scenario's operator resolved and redrove; absent when the scenario has no operator (or it was off). */
  readonly operator?: OperatorFigures;
  /** IAM: the figures of the evaluated requests, or why requests were not evaluated. */
  readonly iam: IamReport;
  /** Whether the scenario's producer probe ran, so the producer's business changes were checked against the outbox. */
  readonly producerWritesChecked?: boolean;
}

/** What the outbox relays did: records read, publish attempts that failed, what they gave up on. */
export interface RelayFigures {
  readonly streamRecords: number;
  readonly committedEvents: number;
  /** Publish attempts that failed (each retried, or the last before the pipe gave up). */
  readonly failedAttempts: number;
  /** Events the pipes put on their dead-letter queues (as stream-batch metadata), and in how many messages. */
  readonly deadLettered: number;
  readonly deadLetterMessages: number;
  /** Events the pipes gave up on with no dead letter: lost. */
  readonly lost: number;
}

/** What IAM evaluation did in a run. */
export type IamReport = ({ readonly evaluated: true } & IamFigures) | { readonly evaluated: false; readonly reason: string };

/** Thrown when the app has nothing the simulator can run. */
export class NothingToSimulateError extends Error {
  public override readonly name = 'NothingToSimulateError';
}

/** The fault plan's decision for a DynamoDB request of an invocation. */
function plannedFault(plan: FaultPlan, invocationKey: string, request: ProxiedRequest): RequestFault {
  const { rates } = plan;
  const write = WRITE_OPERATIONS.has(request.operation);
  const key = [invocationKey, request.index] as const;
  if (write && plan.happens(rates.crash, 'crash', ...key)) return plan.fraction('crash-side', ...key) < 0.5 ? 'crash-before' : 'crash-after';
  if (plan.happens(rates.throttle, 'throttle', ...key)) return 'throttle';
  if (write && plan.happens(rates.lostResponse, 'lost-response', ...key)) return 'lose-response';
  return 'none';
}

function faultDecider(
  plan: FaultPlan,
  steering: FaultSteering,
  onLostResponse: (functionKey: ResourceKey, request: ProxiedRequest) => void,
): (functionKey: ResourceKey, invocationKey: string, request: ProxiedRequest) => RequestFault {
  return (functionKey, invocationKey, request) => {
    const planned = plannedFault(plan, invocationKey, request);
    // an event source mapping's invocation key ends with the receive count of its first message
    const invocation = { key: invocationKey, message: invocationKey.replace(/\|\d+$/, '') };
    const fault = steering.decide(functionKey, invocation, request.operation, request.body.toString('utf8'), planned);
    if (fault === 'lose-response') onLostResponse(functionKey, request);
    return fault;
  };
}

function relayFigures(ledger: RunLedger, committedEvents: number): RelayFigures {
  const dead = ledger.relayGaveUp.filter((entry) => entry.deadLetterQueue !== undefined);
  const lost = ledger.relayGaveUp.filter((entry) => entry.deadLetterQueue === undefined);
  return {
    streamRecords: ledger.streamRecords,
    committedEvents,
    failedAttempts: ledger.faultsOfKind('relay-publish-failure'),
    deadLettered: dead.reduce((sum, entry) => sum + entry.eventIds.length, 0),
    deadLetterMessages: dead.length,
    lost: lost.reduce((sum, entry) => sum + entry.eventIds.length, 0),
  };
}

/** A UUID-shaped id drawn from a seeded generator (for user events without an id). */
function seededUuid(random: () => number): () => string {
  return () => {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };
}

/** Runs a simulation; see the module comment. The caller decides what a violation means (the CLI exits 1). */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const startedAt = Date.now();
  const seed = options.seed ?? SIMULATION_DEFAULTS.seed;
  const count = checkInteger('--count', options.count ?? SIMULATION_DEFAULTS.count, SIMULATION_BOUNDS.count);
  const concurrency = checkInteger('--concurrency', options.concurrency ?? SIMULATION_DEFAULTS.concurrency, SIMULATION_BOUNDS.concurrency);
  const region = options.region ?? SIMULATION_DEFAULTS.region;
  const plan = new FaultPlan(seed, options.rates ?? DEFAULT_FAULT_RATES);
  const scenarioDrivers = scenarioProducers(options.scenario);
  if (scenarioDrivers.length === 0 && options.events === undefined) {
    throw new NothingToSimulateError('nothing drives the flow: give a scenario with a producer (--scenario) or events (--events)');
  }

  const workDirectory = mkdtempSync(path.join(tmpdir(), 'ief-simulate-'));
  const phases = new PhaseTimer();
  const scheduler = new SeededScheduler(seed);
  let database: RunDatabase | undefined;
  let flow: LocalFlow | undefined;
  let servicesKept = false;
  try {
    const assemblyDirectory = await runAssembly(options, workDirectory);
    const model: FlowModel = readAssembly(assemblyDirectory, { stacks: options.stacks });
    phases.ended('assembly');
    const synthAnnotations = readSynthAnnotations(assemblyDirectory, model.stackNames);
    if (model.eventSourceMappings.length === 0 || model.subscriptions.length === 0) {
      throw new NothingToSimulateError(
        `the app has no SNS → SQS → Lambda subscriber the simulator can run (${model.subscriptions.length} subscription(s), ${model.eventSourceMappings.length} SQS event source mapping(s))` +
          (model.notSimulated.length ? `; not simulated: ${model.notSimulated.join('; ')}` : ''),
      );
    }
    const producers = scenarioDrivers.map((producer) => ({ producer, fn: findFunction(model, producer.function) }));
    const policyEngine = options.iam === false ? undefined : loadPolicyEngine(options.cwd);
    phases.ended('IAM engine');

    database = options.dynamoDbEndpoint ? { endpoint: options.dynamoDbEndpoint, stop: async () => undefined } : await startDynamoDbLocal({ projectDirectory: options.cwd, allowAllInterfaces: options.dynamoDbAllInterfaces });
    phases.ended('DynamoDB Local start');
    const clientConfig = { endpoint: database.endpoint, region, credentials: { accessKeyId: 'simulator', secretAccessKey: 'simulator' } };
    const client = new DynamoDBClient(clientConfig);
    const streams = new DynamoDBStreamsClient(clientConfig);
    // frozen: time moves only when the run moves it, so a seeded run does not depend on this machine's speed
    const clock = VirtualClock.frozen();
    const ledger = new RunLedger();
    /** `<function key>|<invocation key>` of the invocations that had a write applied that they did not see. */
    const writesUnseen = new Set<string>();
    if (options.logFile !== undefined) {
      const logFile = path.resolve(options.cwd, options.logFile);
      mkdirSync(path.dirname(logFile), { recursive: true });
      writePrivateFile(logFile);
      ledger.addOutputSink((functionKey, line, stream) => appendFileSync(logFile, `${JSON.stringify({ function: functionKey, stream, line })}\n`));
    }
    // the history behind the verdict (simulator/check/history.ts): marks and outcomes from the functions' lines, lost responses
    const history = new HistoryRecorder();
    const subscriberNames: string[] = [];
    ledger.addOutputSink((functionKey, line) => history.onOutput(functionKey, line));
    // the writes a transactional or aggregate consumer made outside its inbox transaction: the cause of an effect applied again
    const ownClientWrites = new OwnClientWrites();
    let flowBuilt: LocalFlow | undefined;
    // which invocation applied an event again, and how (simulator/check/apply-attribution.ts)
    const attribution = new ApplyAttribution(
      () => clock.now(),
      (tableName) => model.tables.find((table) => flowBuilt?.tables.get(table.key)?.tableName === tableName)?.keySchema.map((key) => key.AttributeName) ?? [],
    );
    ledger.addInvocationListener((mapping, invocation) => {
      const functionKey = model.eventSourceMappings.find((candidate) => candidate.key === mapping)?.function;
      const [first] = invocation.messages;
      if (functionKey !== undefined && first !== undefined) attribution.onInvocation(functionKey, `${mapping}|${first.messageId}|${first.receiveCount}`, invocation);
    });
    const subscriberOf = (functionKey: string) => flowBuilt?.subscribers.find((subscriber) => subscriber.function?.key === functionKey);
    // steering learns from the ledger which failure paths each subscriber still misses
    const steering = new FaultSteering(plan.rates, (functionKey) => {
      const subscriber = subscriberOf(functionKey);
      if (subscriber === undefined || flowBuilt === undefined) return new Set();
      return faultsStillNeeded(failurePathsOf(subscriber, ledger, flowBuilt.transactionConflicts.refusedFor(functionKey)), steeredFaults(plan.rates));
    });
    const decideFault = faultDecider(plan, steering, (functionKey, request) => history.onLostResponse(functionKey, request.operation, request.body.toString('utf8'), subscriberNames));
    flow = await buildLocalFlow(model, {
      client,
      streams,
      dynamoDbEndpoint: database.endpoint,
      clock,
      faults: plan,
      observer: ledger,
      region,
      concurrency,
      extraFunctions: producerKeys(producers.map(({ fn }) => fn)),
      // a DynamoDB Local we did not start may hold the tables of an earlier run
      tableNameSuffix: options.dynamoDbEndpoint ? `-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}` : undefined,
      decideFault: (functionKey, invocationKey, request) => {
        ownClientWrites.onRequest(functionKey, request.operation, request.body.toString('utf8'));
        // a served run's flow works without faults (simulate --serve: the operator's drill)
        const fault = plan.stopped ? 'none' : decideFault(functionKey, invocationKey, request);
        attribution.onRequest(functionKey, invocationKey, request, fault);
        if (plan.stopped) return fault;
        // the write is applied and the function does not see it: a retry meets its own write
        if (fault === 'lose-response' || fault === 'crash-after') writesUnseen.add(`${functionKey}|${invocationKey}`);
        return fault;
      },
      onRequestAnswered: (functionKey, invocationKey, request, answer) => {
        attribution.onAnswered(functionKey, invocationKey, request, answer.applied);
        // the order of each function's commits: the order check reads its inbox records' (check/aggregate-order.ts)
        if (answer.applied) ledger.recordApplied(functionKey, request);
      },
      // one seed, one run: the seed decides the order of every function's DynamoDB requests, at any concurrency
      scheduler,
      ...(policyEngine === undefined ? {} : { policyEngine }),
    });

    flowBuilt = flow;
    // each function's first environment initializes while the run begins (on the core DynamoDB Local leaves free)
    for (const runner of flow.runners.values()) runner.initializeAhead();
    phases.ended('local flow');
    subscriberNames.push(...flow.subscribers.map((subscriber) => subscriber.name));
    for (const subscriber of flow.subscribers) {
      // no redrive policy: SQS never moves its messages, as if maxReceiveCount were unbounded
      const inboxTable = subscriber.environment[ENV.INBOX_TABLE_NAME];
      const mode = subscriber.environment[ENV.PROCESSING_MODE];
      if (subscriber.function !== undefined && inboxTable !== undefined && (mode === 'transactional' || mode === 'aggregate')) {
        ownClientWrites.watch(subscriber.function.key, inboxTable, subscriber.environment[ENV.OUTBOX_TABLE_NAME]);
      }
      const windowSeconds = Number(subscriber.environment[ENV.DEDUPLICATION_WINDOW_SECONDS]);
      if (subscriber.function !== undefined && mode !== undefined) {
        attribution.watch(subscriber.function.key, { subscriber: subscriber.name, mode, ...(inboxTable === undefined ? {} : { inboxTable }), ...(Number.isFinite(windowSeconds) && windowSeconds > 0 ? { windowSeconds } : {}) });
      }
      if (subscriber.function !== undefined) {
        steering.addSubscriber(subscriber.function.key, subscriber.name, subscriber.queue.model.redrive?.maxReceiveCount ?? Number.MAX_SAFE_INTEGER, inboxTable === undefined ? [] : [inboxTable]);
      }
    }
    for (const { fn } of producers) steering.addProducer(fn.key, shownName(fn));
    const random = seededRandom(seedNumber(seed));
    const wroteUnseen = (functionKey: ResourceKey) => (invocationKey: string) => writesUnseen.has(`${functionKey}|${invocationKey}`);
    let driver: ProducerDrivers | undefined;
    let producerFigures: ProducerFigures;
    if (producers.length > 0) {
      driver = new ProducerDrivers(
        producers.map(
          ({ producer, fn }) =>
            new ProducerDriver(flow!.runners.get(fn.key)!, producer.commands(count, random), producers.length > 1 ? shownName(fn) : undefined, wroteUnseen(fn.key), producer.failedResponse),
        ),
      );
      producerFigures = driver.figures;
    } else {
      producerFigures = await appendUserEvents(model, flow, client, options.events ?? [], seededUuid(random));
    }

    const relays = flow.relays.map((relay) => {
      const source = model.relays.find((candidate) => candidate.key === relay.key)!.sourceTable;
      return new CatchingUpRelay(relay, client, flow!.tables.get(source)!.tableName);
    });
    const maxSimulatedSeconds = options.maxSimulatedSeconds ?? SIMULATION_DEFAULTS.maxSimulatedSeconds;
    // enough rounds for the producer at one command per invocation slot, plus a margin no settling flow comes near
    const maxRounds = options.maxRounds ?? Math.ceil(producerFigures.total / concurrency) + SIMULATION_DEFAULTS.extraRounds;
    const roundsOptions = { concurrency, maxSimulatedSeconds, maxRounds, toProduce: producerFigures.total, onProgress: options.onProgress };
    let roundsOutcome = await runRounds(flow, relays, ledger, clock, driver, roundsOptions);
    phases.ended('rounds');
    let rounds = roundsOutcome.rounds;
    const documents = DynamoDBDocumentClient.from(client);

    // the operator: resolve blocked steps, redrive the dead letters, let the run settle again
    const decisions = options.operator === false ? undefined : options.scenario?.operator;
    const operator = decisions !== undefined ? noOperatorFigures() : undefined;
    if (decisions !== undefined && operator !== undefined) {
      const operatorRole = options.scenario?.operatorRole;
      const operatorClient =
        operatorRole !== undefined && flow.access !== undefined && model.access !== undefined
          ? await startOperatorClient(model.access, flow.access, operatorRole, clientConfig, flow.transactionConflicts)
          : undefined;
      try {
        for (let pass = 1; pass <= MAX_OPERATOR_PASSES && roundsOutcome.cutOff === undefined; pass += 1) {
          const { eventsById } = await readCommittedOutbox(model, flow, client);
          const resolved = await operatorPass(flow.subscribers, decisions, { client: operatorClient?.client ?? client, documents, clock, eventsById }, operator);
          if (resolved === 0) break;
          roundsOutcome = await runRounds(flow, relays, ledger, clock, undefined, roundsOptions);
          rounds += roundsOutcome.rounds;
        }
      } finally {
        await operatorClient?.stop();
      }
    }

    phases.ended('operator');
    const committed = await readCommittedOutbox(model, flow, client);
    const violations: Violation[] = [
      ...synthAnnotations.filter(({ level }) => level === 'error').map(({ path: at, message }) => ({ kind: 'synth-error' as const, detail: `the synth reported an error at ${at}: ${message}` })),
      ...checkDeployRules(model),
      ...checkSettled(roundsOutcome),
      ...checkTracked(committed.untracked),
      ...checkRelayed(committed.eventIdsByRelay, ledger),
    ];
    // the drivers' figures are summed when read: read them now that every command ran
    producerFigures = driver?.figures ?? producerFigures;
    violations.push(...checkProducerFailures(producerFigures, driver !== undefined ? PRODUCER_ATTEMPTS : 1));
    for (const { producer, fn } of producers) {
      violations.push(...(await checkProducerWrites(producer, { model, flow, documents, committed, producerKey: fn.key })));
    }
    const deadLetterQueues: DeadLetterQueueContents[] = model.relays.flatMap((relay) => {
      const queue = relay.deadLetterQueue === undefined ? undefined : flow!.queues.get(relay.deadLetterQueue);
      return queue === undefined ? [] : [{ queue, owner: `relay ${relay.constructPath ?? relay.key}` }];
    });
    let committedEvents = 0;
    for (const ids of committed.eventIdsByRelay.values()) committedEvents += ids.length;
    const malformed = options.scenario?.malformed;
    const isMalformed = (eventId: string): boolean => {
      const event = committed.eventsById.get(eventId);
      return malformed !== undefined && event !== undefined && malformed(event);
    };
    const sends = attributeSends(ledger.appSends);
    const repeatedSends = checkRepeatedSends(sends);
    violations.push(...repeatedSends.violations);
    const consumedQueues = new Set(model.eventSourceMappings.map((mapping) => mapping.queue));
    const sentMessages: SentMessage[] = sends
      .filter((send) => !consumedQueues.has(send.queue))
      .map((send) => ({
        queueName: send.queueName,
        body: send.body,
        messageAttributes: send.messageAttributes ?? {},
        sentBy: send.functionName,
        ...(send.eventId === undefined ? {} : { eventId: send.eventId }),
      }));
    const deadLetters = new Map<string, readonly DeadLetterFinding[]>();
    const effectsNotCounted: string[] = [];
    const subscribers: SubscriberReport[] = [];
    for (const subscriber of flow.subscribers) {
      const findings = readDeadLetters(subscriber.deadLetterQueues, ledger);
      deadLetters.set(subscriber.name, findings);
      violations.push(...checkDeliveries(subscriber, findings, ledger));
      violations.push(...checkSubscriberHealth(subscriber, findings, ledger));
      violations.push(...checkRejectedEvents(subscriber.name, findings, isMalformed));
      deadLetterQueues.push(...subscriber.deadLetterQueues.map((queue) => ({ queue, owner: `subscriber ${subscriber.name}` })));
      const matched = ledger.matchedEvents.get(subscriber.subscription.key) ?? new Set<string>();
      const applied = new Set([...(ledger.acknowledgedEvents.get(subscriber.subscription.key) ?? []), ...(ledger.handledEvents.get(subscriber.subscription.key) ?? [])]);
      const operatorFor = options.scenario?.operator?.[subscriber.name] === undefined ? 'none' : decisions === undefined ? 'off' : 'acted';
      violations.push(...checkUnappliedEvents({ name: subscriber.name, matched, applied, deadLetters: findings, operator: operatorFor }, isMalformed));
      let effects: SubscriberReport['effects'];
      const probe = options.scenario?.effects?.[subscriber.name];
      const { filterPolicy, filterPolicyScope } = subscriber.subscription;
      violations.push(
        ...checkProbedSubscriberReached({
          name: subscriber.name,
          matchedEvents: matched.size,
          committedEvents,
          eventsGivenUpByRelay: ledger.relayGaveUp.reduce((sum, entry) => sum + entry.eventIds.length, 0),
          probed: probe !== undefined,
          filterPolicy,
          filterPolicyScope,
        }),
      );
      if (probe === undefined) {
        effectsNotCounted.push(subscriber.name);
      } else {
        try {
          const events = [...matched].flatMap((id) => {
            const event = committed.eventsById.get(id);
            return event ? [event] : [];
          });
          const tallies = await probe({ client: documents, environment: subscriber.environment, events, sentMessages });
          const functionKey = subscriber.function?.key;
          const checked = checkEffects(subscriber, tallies, findings, ledger, (tally) => (functionKey === undefined ? undefined : attribution.cause(functionKey, tally.eventIds)));
          const cause = subscriber.function === undefined ? undefined : ownClientWrites.cause(subscriber.function.key);
          violations.push(...checked.violations.map((violation) => (cause === undefined || violation.kind !== 'effect-count' ? violation : { ...violation, detail: `${violation.detail}; ${cause}` })));
          effects = checked.totals;
        } catch (error) {
          violations.push({ kind: 'probe-failed', subscriber: subscriber.name, detail: `the effect probe threw: ${error instanceof Error ? error.message : String(error)}` });
        }
      }
      const mapping = subscriber.mapping ? ledger.mappings.get(subscriber.mapping.key) : undefined;
      const counters = subscriber.function ? ledger.runtimeCounters.get(subscriber.function.key) : undefined;
      const faultsByKind = ledger.faultsByKind([subscriber.subscription.key, subscriber.queue.model.key, subscriber.function?.key]);
      const failurePaths = failurePathsOf(subscriber, ledger, subscriber.function === undefined ? 0 : flow.transactionConflicts.refusedFor(subscriber.function.key));
      violations.push(...checkFailurePaths(subscriber.name, failurePaths, requiredFailurePaths(plan.rates), ledger.deliveredEvents.get(subscriber.subscription.key)?.size ?? 0));
      subscribers.push({
        name: subscriber.name,
        processingMode: subscriber.environment.IEF_PROCESSING_MODE,
        events: matched.size,
        deliveries: mapping?.deliveries ?? 0,
        // copies of a blocked message acknowledged without another dead letter are suppressed duplicates too
        duplicatesSuppressed: (counters?.Duplicates ?? 0) + (counters?.AlreadyBlocked ?? 0),
        faults: Object.values(faultsByKind).reduce((sum, count) => sum + count, 0),
        faultsByKind,
        retries: mapping?.redeliveries ?? 0,
        deadLettered: findings.length,
        effects,
        failurePaths,
        ...(subscriber.queue.model.fifo ? { orderChecked: aggregateOrderCoverage(ledger.answeredTogether.get(subscriber.subscription.key) ?? [], committed.eventsById) } : {}),
      });
    }
    const iam: IamReport =
      flow.access !== undefined
        ? { evaluated: true, ...flow.access.control.figures() }
        : { evaluated: false, reason: options.iam === false ? 'IAM evaluation is off (--iam off)' : `IAM was not evaluated: ${HOW_TO_INSTALL_POLICY_ENGINE}` };
    if (iam.evaluated) violations.push(...checkAccess(iam));
    violations.push(...checkUnwatchedDeadLetters(deadLetterQueues, model.queueAlarms));
    for (const violation of checkHistory(history.entries())) {
      violations.push({ kind: 'history', subscriber: violation.key.subscriber, detail: `${violation.detail}; its history:\n${violation.excerpt}` });
    }
    for (const subscriber of flow.subscribers.filter((candidate) => candidate.queue.model.fifo)) {
      const commits = subscriber.function === undefined ? undefined : ledger.inboxCommits.get(subscriber.function.key);
      violations.push(...checkAggregateOrder(subscriber.name, ledger.answeredTogether.get(subscriber.subscription.key) ?? [], committed.eventsById, commits));
    }
    violations.push(...checkSubjectSpread(committed.eventsById.values()));
    const result: SimulationResult = {
      assemblyDirectory,
      synthAnnotations,
      seed,
      producer: producerFigures,
      relay: relayFigures(ledger, committedEvents),
      sns: { failedAttempts: ledger.faultsOfKind('sns-delivery-failure'), deadLettered: ledger.snsDeadLettered, undeliverable: ledger.undeliverable.length },
      transactionConflicts: flow.transactionConflicts.figures(),
      sqsSends: repeatedSends.figures,
      subscribers,
      deadLetters,
      violations,
      effectsNotCounted,
      notSimulated: model.notSimulated,
      rounds,
      simulatedSeconds: Math.round(clock.offsetMs() / 1000),
      realSeconds: Math.round((Date.now() - startedAt) / 100) / 10,
      totalFaults: ledger.totalFaults(),
      operator,
      iam,
      producerWritesChecked: producers.length > 0 && producers.every(({ producer }) => producer.probe !== undefined),
    };
    phases.ended('checks');
    attribution.close();
    // simulate --serve: the services go on serving what the run left; the callee stops them
    if (options.keepServices !== undefined) {
      const watchable = options.app !== undefined || hasAppCommand(path.join(options.cwd, 'cdk.json'));
      const logFile = options.logFile === undefined ? undefined : path.resolve(options.cwd, options.logFile);
      const watch = watchable
        ? { cwd: options.cwd, outputFiles: logFile === undefined ? [] : [logFile], ...(options.app === undefined ? {} : { app: options.app }), ...(options.stacks === undefined ? {} : { stacks: options.stacks }) }
        : undefined;
      options.keepServices(
        runServices(model, flow, database, clock, region, { relays, ledger, concurrency, stopFaults: () => plan.stopFaults(), ...(watch === undefined ? {} : { watch }), ...(logFile === undefined ? {} : { logFile }) }),
      );
    }
    servicesKept = options.keepServices !== undefined;
    return result;
  } finally {
    const coldStarts = { coldStarts: 0, preInitialized: 0 };
    for (const runner of flow?.runners.values() ?? []) {
      const stats = runner.stats();
      coldStarts.coldStarts += stats.coldStarts;
      coldStarts.preInitialized += stats.preInitialized;
    }
    if (!servicesKept) {
      await flow?.stop();
      await database?.stop();
      phases.ended('stop');
    }
    rmSync(workDirectory, { recursive: true, force: true });
    options.onProfile?.(phases.profile({ timings: scheduler.timings(), figures: scheduler.figures() }, coldStarts));
  }
}
