/**
 * The run's second stage: DynamoDB Local started, the run's clock, ledger and recorders made, the fault plan's decider
 * wired in, and the local flow built from the model (tables, queues, relays, functions, event source mappings), each
 * subscriber watched by the recorders that tell the cause of a count too high.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { appendFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { ENV } from '../../lambda/contract/environment';
import { VirtualClock } from '../aws/clock';
import { startDynamoDbLocal } from '../aws/dynamodb-local';
import { WRITE_OPERATIONS } from '../aws/request-items';
import { ApplyAttribution } from '../check/apply-attribution';
import { failurePathsOf, faultsStillNeeded } from '../check/failure-paths';
import { HistoryRecorder } from '../check/history';
import { OwnClientWrites } from '../check/own-client-writes';
import type { ProxiedRequest, RequestFault } from '../faults/dynamodb-proxy';
import type { FaultPlan } from '../faults/fault-plan';
import { FaultSteering, steeredFaults, type BatchMessage, type LastReceiveProbe } from '../faults/fault-steering';
import type { ResourceKey } from '../model/flow-model';
import { shownName } from '../model/find-resource';
import { RunLedger } from '../observation/ledger';
import type { SeededScheduler } from '../schedule/seeded-scheduler';
import { buildLocalFlow, type LocalFlow } from './build-flow';
import type { SimulationOptions } from './options';
import type { PreparedApp, RunSettings } from './prepare';
import { writePrivateFile } from './private-file';
import { producerKeys } from './producer-driver';
import type { PhaseTimer } from './run-profile';
import type { RunDatabase } from './run-services';
import { newTableSuffix } from './table-suffix';
import { isProbed, probeTakes } from './last-receive-probe';
import { SIMULATION_DEFAULTS } from './options';

/** What the run started, for the run to stop it whatever happens: filled as each part starts. */
export interface StartedParts {
  database?: RunDatabase;
  flow?: LocalFlow;
}

/** The built flow and what records the run. */
export interface BuiltRun {
  readonly database: RunDatabase;
  readonly clientConfig: { readonly endpoint: string; readonly region: string; readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } };
  readonly client: DynamoDBClient;
  readonly clock: VirtualClock;
  readonly ledger: RunLedger;
  readonly history: HistoryRecorder;
  readonly ownClientWrites: OwnClientWrites;
  readonly attribution: ApplyAttribution;
  readonly flow: LocalFlow;
  /** Appended to every table's name against a DynamoDB Local the run did not start (./table-suffix.ts). @default none */
  readonly tableNameSuffix?: string;
  /** Whether an invocation of the function had a write applied that it did not see (a lost response, a crash after it). */
  readonly wroteUnseen: (functionKey: ResourceKey) => (invocationKey: string) => boolean;
  /** Ends the last-receive probes (the run settled) and says each probed subscriber's event (./last-receive-probe.ts). */
  readonly endProbes: () => LastReceiveProbe[];
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
): (functionKey: ResourceKey, invocationKey: string, request: ProxiedRequest, messages: readonly BatchMessage[]) => RequestFault {
  return (functionKey, invocationKey, request, messages) => {
    const planned = plannedFault(plan, invocationKey, request);
    // an event source mapping's invocation key ends with the receive count of its first message
    const invocation = { key: invocationKey, message: invocationKey.replace(/\|\d+$/, ''), messages };
    const fault = steering.decide(functionKey, invocation, request.operation, request.body.toString('utf8'), planned);
    if (fault === 'lose-response') onLostResponse(functionKey, request);
    return fault;
  };
}

/** Starts DynamoDB Local (into `started`) and builds the local flow (into `started` too); see the module comment. */
export async function buildRun(
  options: SimulationOptions,
  settings: RunSettings,
  app: PreparedApp,
  scheduler: SeededScheduler,
  phases: PhaseTimer,
  started: StartedParts,
): Promise<BuiltRun> {
  const { model, producers } = app;
  const { plan, region, concurrency } = settings;
  const database = options.dynamoDbEndpoint
    ? { endpoint: options.dynamoDbEndpoint, stop: async () => undefined }
    : await startDynamoDbLocal({ projectDirectory: options.cwd, allowAllInterfaces: options.dynamoDbAllInterfaces });
  started.database = database;
  phases.ended('DynamoDB Local start');
  const clientConfig = { endpoint: database.endpoint, region, credentials: { accessKeyId: 'simulator', secretAccessKey: 'simulator' } };
  const client = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  // frozen at the run's start: time moves only when the run moves it, so a seeded run does not depend on this machine's
  // speed, and with the same start its times are the same too
  const clock = VirtualClock.frozen(settings.startTime);
  const ledger = new RunLedger();
  /** `<function key>|<invocation key>` of the invocations that had a write applied that they did not see. */
  const writesUnseen = new Set<string>();
  // the fault decided for each request, read when DynamoDB's answer to it is heard
  const faultOfRequest = new WeakMap<object, string>();
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
  // a deployed table's key attribute names, by its name
  const keyNames = (tableName: string): string[] => model.tables.find((table) => flowBuilt?.tables.get(table.key)?.tableName === tableName)?.keySchema.map((key) => key.AttributeName) ?? [];
  const attribution = new ApplyAttribution(() => clock.now(), keyNames);
  ledger.addInvocationListener((mapping, invocation) => {
    const functionKey = model.eventSourceMappings.find((candidate) => candidate.key === mapping)?.function;
    const [first] = invocation.messages;
    if (functionKey !== undefined && first !== undefined) attribution.onInvocation(functionKey, `${mapping}|${first.messageId}|${first.receiveCount}`, invocation);
    // the consumer's answer at each receive the last-receive probe refused (./last-receive-probe.ts)
    if (functionKey !== undefined && first !== undefined) {
      const messages = invocation.messages.map((message) => ({ messageId: message.messageId, receiveCount: message.receiveCount, ...(message.origin?.eventId === undefined ? {} : { eventId: message.origin.eventId }) }));
      steering.onInvocationAnswered(functionKey, `${mapping}|${first.messageId}|${first.receiveCount}`, invocation.failedMessageIds, messages);
    }
  });
  const subscriberOf = (functionKey: string) => flowBuilt?.subscribers.find((subscriber) => subscriber.function?.key === functionKey);
  // steering learns from the ledger which failure paths each subscriber still misses
  const steering = new FaultSteering(plan.rates, (functionKey) => {
    const subscriber = subscriberOf(functionKey);
    if (subscriber === undefined || flowBuilt === undefined) return new Set();
    return faultsStillNeeded(failurePathsOf(subscriber, ledger, flowBuilt.transactionConflicts.refusedFor(functionKey)), steeredFaults(plan.rates));
  }, keyNames);
  const decideFault = faultDecider(plan, steering, (functionKey, request) => history.onLostResponse(functionKey, request.operation, request.body.toString('utf8'), subscriberNames));
  const tableNameSuffix = options.dynamoDbEndpoint ? newTableSuffix() : undefined;
  const flow = await buildLocalFlow(model, {
    client,
    streams,
    dynamoDbEndpoint: database.endpoint,
    clock,
    faults: plan,
    observer: ledger,
    region,
    concurrency,
    extraFunctions: producerKeys(producers.map(({ fn }) => fn)),
    // a DynamoDB Local we did not start may hold the tables of an earlier run (./table-suffix.ts)
    tableNameSuffix,
    decideFault: (functionKey, invocationKey, request, environment, messages) => {
      ownClientWrites.onRequest(functionKey, request.operation, request.body.toString('utf8'));
      // a served run's flow works without faults (simulate --serve: the operator's drill)
      const fault = plan.stopped ? 'none' : decideFault(functionKey, invocationKey, request, messages);
      attribution.onRequest(functionKey, invocationKey, request, fault, environment);
      if (plan.stopped) return fault;
      // the write is applied and the function does not see it: a retry meets its own write
      if (fault === 'lose-response' || fault === 'crash-after') writesUnseen.add(`${functionKey}|${invocationKey}`);
      faultOfRequest.set(request, fault);
      return fault;
    },
    // the calls outside the simulator, ordered against the invocation's DynamoDB requests: a lease effect made outside its lease
    onOutsideCall: (functionKey, invocationKey, call) => attribution.onOutsideCall(functionKey, invocationKey, call),
    onRequestAnswered: (functionKey, invocationKey, request, answer) => {
      attribution.onAnswered(functionKey, invocationKey, request, answer.applied);
      // the order of each function's commits: the order check reads its inbox records' (check/aggregate-order.ts)
      if (answer.applied) ledger.recordApplied(functionKey, request, invocationKey, clock.now());
      // a producer's retry that re-sends an event an earlier attempt committed re-ran that step (check/committed-twice.ts)
      ledger.recordOutboxRequest(functionKey, invocationKey, request, answer.applied, faultOfRequest.get(request), { keyNames, ...(answer.refusal === undefined ? {} : { refusal: answer.refusal }) });
    },
    // one seed, one run: the seed decides the order of every function's DynamoDB requests, at any concurrency
    scheduler,
    ...(app.policyEngine === undefined ? {} : { policyEngine: app.policyEngine }),
  });
  started.flow = flow;
  flowBuilt = flow;
  // the caller's check of what the flow is (a scenario's subscriber names), before any of its code runs
  options.onFlowBuilt?.(flow.subscribers.map((subscriber) => subscriber.name));
  // each function's first environment initializes while the run begins (on the core DynamoDB Local leaves free)
  for (const runner of flow.runners.values()) runner.initializeAhead();
  phases.ended('local flow');
  subscriberNames.push(...flow.subscribers.map((subscriber) => subscriber.name));
  for (const subscriber of flow.subscribers) {
    // no redrive policy: SQS never moves its messages, as if maxReceiveCount were unbounded
    const inboxTable = subscriber.environment[ENV.INBOX_TABLE_NAME];
    const mode = subscriber.environment[ENV.PROCESSING_MODE];
    if (subscriber.function !== undefined && inboxTable !== undefined && mode === 'transactional') {
      ownClientWrites.watch(subscriber.function.key, inboxTable, subscriber.environment[ENV.OUTBOX_TABLE_NAME]);
    }
    if (subscriber.function !== undefined && mode === 'aggregate') ownClientWrites.watchAggregate(subscriber.function.key, subscriber.environment[ENV.OUTBOX_TABLE_NAME]);
    const windowSeconds = Number(subscriber.environment[ENV.DEDUPLICATION_WINDOW_SECONDS]);
    if (subscriber.function !== undefined && mode !== undefined) {
      const outboxTable = subscriber.environment[ENV.OUTBOX_TABLE_NAME];
      attribution.watch(subscriber.function.key, {
        subscriber: subscriber.name,
        mode,
        ...(inboxTable === undefined ? {} : { inboxTable }),
        ...(Number.isFinite(windowSeconds) && windowSeconds > 0 ? { windowSeconds } : {}),
        ...(outboxTable === undefined ? {} : { outboxTable }),
      });
    }
    if (subscriber.function !== undefined) {
      // one event failed at every receive, its last included, then redriven (./last-receive-probe.ts)
      const lastReceiveProbe = isProbed(subscriber, options.maxSimulatedSeconds ?? SIMULATION_DEFAULTS.maxSimulatedSeconds);
      const maxSimulatedSeconds = options.maxSimulatedSeconds ?? SIMULATION_DEFAULTS.maxSimulatedSeconds;
      steering.addSubscriber(subscriber.function.key, subscriber.name, subscriber.queue.model.redrive?.maxReceiveCount ?? Number.MAX_SAFE_INTEGER, inboxTable === undefined ? [] : [inboxTable], {
        lastReceiveProbe,
        probeTakes: probeTakes(subscriber, settings.startTime, maxSimulatedSeconds),
      });
    }
  }
  for (const { fn } of producers) steering.addProducer(fn.key, shownName(fn));
  const wroteUnseen = (functionKey: ResourceKey) => (invocationKey: string) => writesUnseen.has(`${functionKey}|${invocationKey}`);
  const endProbes = () => steering.endProbes();
  return { database, clientConfig, client, clock, ledger, history, ownClientWrites, attribution, flow, wroteUnseen, endProbes, ...(tableNameSuffix === undefined ? {} : { tableNameSuffix }) };
}
