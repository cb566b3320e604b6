/**
 * One verify run against a deployed app, in stages: find the flow (./deployed-flow.ts) → note the dead-letter queues'
 * counts → run the scenario's producers with ids unique to the run (./produce.ts) → wait until the flow is quiet
 * (./settle.ts; at its time limit, the run stops with what it waited for: {@link NotQuietResult}) → read what the run left (./observe.ts) → the simulator's checks (./verify-checks.ts) → clean up what
 * the run created, when asked (./cleanup.ts). The flow topic's subscriptions it found no subscriber for (another account or
 * Region: ./topic-subscriptions.ts) leave the verdict NOT PROVEN; each found subscriber's events are those its deployed
 * subscription's filter takes (./subscription-filters.ts), a difference from its Operator output named. It injects no fault and changes nothing it did not create. Its commands are
 * real: every subscriber acts on them as on real traffic; it warns so before sending any, and refuses stacks outside
 * the accounts `--account` names. What it could not see is said in {@link VerifyResult.unproven} (./verdict.ts).
 */
import { probesNotExercised, untalliedEffects, unseenEffects } from './unseen-effects';
import type { DeadLetterFinding } from '../check/dead-letters';
import type { Violation } from '../check/invariants';
import type { ProducerFigures } from '../observation/run-facts';
import { scenarioProducers, type SimulationScenario } from '../run/scenario';
import { CleanupPartlyFailedError, cleanUpRun, LATER_RUN_CLEANS_ITS_OWN } from './cleanup';
import type { VerifyClients } from './clients';
import { findDeployedFlow, findProducerFunction, NoDeployedFlowError, type DeployedFlow } from './deployed-flow';
import { appliedByInbox, DeadLettersUnreadError, deadLetterQueuesOf, inboxCommitGroups, messagesOn, probeEffects, readDeadLetters, runEventReader, takenEvents, type RunEvent } from './observe';
import { dataRefsOf } from './offloaded-data';
import { produce } from './produce';
import { producerOutboxes, producerOutboxesUnchecked } from './producer-outboxes';
import { classifyRunEvents, type DerivedRunEvent } from './derived-events';
import { defaultTimeoutSeconds, readQueueSettings } from './queue-settings';
import { newRunId } from './run-ids';
import { NotQuietError, otherTrafficLine, waitUntilQuiet, type HeldByOtherTraffic } from './settle';
import { refuseEndpointsOutsideAws, refuseSubscriptionsElsewhere, subscriptionsNotSeen, type TopicSubscription } from './topic-subscriptions';
import { filterDifferenceLine, narrowedFilterLines, readSubscriptionFilters, type FilterDifference } from './subscription-filters';
import { checkVerifiedRun, type VerifiedSubscriber } from './verify-checks';
import { verifyVerdict } from './verdict';

/** What a verify run is told. */
export interface VerifyOptions {
  readonly scenario: SimulationScenario;
  readonly stacks?: readonly string[];
  readonly count: number;
  readonly seed: string;
  readonly cleanup: boolean;
  /**
   * How long to wait for the flow to be quiet (`--timeout`).
   * @default derived from the deployed queues: maxReceiveCount x visibility timeout, per hop, plus a margin, at least 600 s (./queue-settings.ts)
   */
  readonly timeoutSeconds?: number;
  readonly pollSeconds: number;
  /** @default a new one (./run-ids.ts) */
  readonly runId?: string;
  /**
   * The accounts the run may send commands into (`--account`): a stack of the flow in any other refuses the run before
   * any command is sent. Required: without it verify refuses the run, naming the accounts the stacks it found are in
   * (review v11, V11-5: a shell left signed in to production must not be written to by default).
   */
  readonly accounts?: readonly string[];
  /**
   * The endpoints outside AWS (an https URL, a mail address, a phone number) a subscription of the flow's topics may
   * deliver the run's events to (`--allow-endpoint`): any other such subscription refuses the run before any command
   * is sent (./topic-subscriptions.ts). @default none
   */
  readonly allowedEndpoints?: readonly string[];
  readonly onProgress: (line: string) => void;
  /** Hears the warning before the first command (that the commands are real). @default onProgress */
  readonly onWarning?: (line: string) => void;
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
  /**
   * Per lease, multi-step or aggregate subscriber, the run's events it took that its effect probe gives no tally for
   * (sorted): their effects were not counted, and the verdict is NOT PROVEN (./unseen-effects.ts). @default none
   */
  readonly effectsNotTallied?: Readonly<Record<string, readonly string[]>>;
  /**
   * The subscribers whose deployed subscription filters otherwise than their Operator output says: the run's events
   * were matched with the subscription's (./subscription-filters.ts). @default none
   */
  readonly filterDifferences?: readonly FilterDifference[];
  /** What `--cleanup` removed. @default not asked, not run (see {@link VerifyResult.cleanupSkipped}), or failed */
  readonly cleanedUp?: readonly string[];
  /** Why `--cleanup` removed nothing: the verdict is not OK, so what the run left is kept as its evidence. @default not asked, or run */
  readonly cleanupSkipped?: string;
  /** Why `--cleanup` failed part way (the verdict stands). @default not asked, or it did not fail */
  readonly cleanupFailed?: string;
  /**
   * What verify could not see that might have failed, one sentence each (a dead-letter queue it could not read whole,
   * a subscriber that keeps no inbox and has no probe): the verdict is then not OK (./verdict.ts). @default none
   */
  readonly unproven?: readonly string[];
  /**
   * The scenario's producers (their `function`) that have a `probe`, which verify does not run: the producer side of
   * the outbox (simulate's `dual-write` check: a business change committed without its event) is not checked against
   * the deployed app. @default no producer of the scenario has a probe
   */
  readonly producerProbesNotRun?: readonly string[];
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
  /** With `--cleanup`: why nothing was removed (no verdict). @default not asked */
  readonly cleanupSkipped?: string;
}

/** A verify run's outcome: checked, or stopped at its time limit. */
export type VerifyOutcome = VerifyResult | NotQuietResult;

/** Whether the run stopped at its time limit. */
export function isNotQuiet(outcome: VerifyOutcome): outcome is NotQuietResult {
  return 'notQuiet' in outcome;
}

/** An ARN's account (`arn:<partition>:<service>:<region>:<account>:...`). */
const ARN_ACCOUNT = /^arn:[^:]+:[^:]+:[^:]*:(\d{12}):/;
/**
 * An SQS queue URL's account, in any form SQS gives: `https://sqs.<region>.amazonaws.com[.cn]/<account>/<name>`, the
 * legacy `https://<region>.queue.amazonaws.com/<account>/<name>`, a VPC endpoint's
 * `https://vpce-....sqs.<region>.vpce.amazonaws.com/<account>/<name>`, a served run's `http://127.0.0.1:<port>/<account>/<name>`:
 * the path's first part, whatever the host.
 */
const QUEUE_URL_ACCOUNT = /^https?:\/\/[^/]+\/(\d{12})\/[^/]+$/;
/** The Operator outputs' fields that hold a queue URL. */
const QUEUE_URL_FIELD = /queueUrl$/i;

/** Every string of the flow's Operator outputs, with the field that holds it. */
function operatorValues(flow: Pick<DeployedFlow, 'subscribers' | 'flows'>): { readonly field: string; readonly value: string }[] {
  const found: { field: string; value: string }[] = [];
  const visit = (value: unknown, field: string): void => {
    if (typeof value === 'string') found.push({ field, value });
    else if (Array.isArray(value)) value.forEach((item) => visit(item, field));
    else if (typeof value === 'object' && value !== null) Object.entries(value).forEach(([key, item]) => visit(item, key));
  };
  visit((flow.subscribers ?? []).map((subscriber) => subscriber.deployment), '');
  visit(flow.flows ?? [], '');
  return found;
}

/**
 * The accounts the resources the flow's Operator outputs name are in (its subscribers' queues, dead-letter queues,
 * tables and topics given by URL or ARN, its relays' dead-letter queues), sorted: a subscriber another team deployed
 * in another account may be subscribed across accounts. A table named without an ARN is in the caller's account.
 */
export function resourceAccounts(flow: Pick<DeployedFlow, 'subscribers' | 'flows'>): string[] {
  const found = new Set<string>();
  for (const { value } of operatorValues(flow)) {
    const account = ARN_ACCOUNT.exec(value)?.[1] ?? QUEUE_URL_ACCOUNT.exec(value)?.[1];
    if (account !== undefined) found.add(account);
  }
  return [...found].sort();
}

/** The queue URLs of the flow's Operator outputs whose account cannot be read (no 12-digit account as their path's first part), sorted. */
export function unreadableQueueUrls(flow: Pick<DeployedFlow, 'subscribers' | 'flows'>): string[] {
  return [...new Set(operatorValues(flow).filter(({ field, value }) => QUEUE_URL_FIELD.test(field) && !QUEUE_URL_ACCOUNT.test(value)).map(({ value }) => value))].sort();
}

/**
 * The guard against a production account (`--account`): throws {@link NoDeployedFlowError} when `allowed` names
 * accounts and a stack of the flow is in another (or its account is unknown), or a resource its Operator outputs name
 * (a subscriber's queues, by URL or ARN) is in another ({@link resourceAccounts}), or is a queue URL whose account
 * cannot be read ({@link unreadableQueueUrls}). Nothing is sent before it.
 */
export function refuseOtherAccounts(flow: Pick<DeployedFlow, 'stackNames' | 'accounts' | 'stackAccounts'> & Partial<Pick<DeployedFlow, 'subscribers' | 'flows'>>, allowed: readonly string[] | undefined): void {
  if (allowed === undefined || allowed.length === 0) return;
  const accounts = flow.accounts ?? [];
  const unknownStacks = flow.stackAccounts === undefined ? [] : flow.stackNames.filter((name) => flow.stackAccounts![name] === undefined);
  if (unknownStacks.length > 0) {
    throw new NoDeployedFlowError(`the account of stack(s) ${unknownStacks.join(', ')} is unknown (its stack id names none): --account (${allowed.join(', ')}) allows only stacks known to be in those accounts; verify sends nothing`);
  }
  if (accounts.length === 0 || !accounts.every((account) => allowed.includes(account))) {
    throw new NoDeployedFlowError(
      `the flow's stacks (${flow.stackNames.join(', ')}) are in account(s) ${accounts.join(', ') || 'unknown'}, not only in ${allowed.join(', ')} (--account): verify sends nothing there`,
    );
  }
  const unreadable = unreadableQueueUrls({ subscribers: flow.subscribers ?? [], flows: flow.flows ?? [] });
  if (unreadable.length > 0) {
    throw new NoDeployedFlowError(
      `the flow's Operator outputs name queue(s) whose account verify cannot read from the URL (${unreadable.join(', ')}): --account (${allowed.join(', ')}) allows only queues known to be in those accounts; verify sends nothing`,
    );
  }
  const elsewhere = resourceAccounts({ subscribers: flow.subscribers ?? [], flows: flow.flows ?? [] }).filter((account) => !allowed.includes(account));
  if (elsewhere.length > 0) {
    throw new NoDeployedFlowError(
      `the flow's Operator outputs name resources (a subscriber's queues, across accounts) in account(s) ${elsewhere.join(', ')}, not only in ${allowed.join(', ')} (--account): the run's events would reach them (and --cleanup would delete there); verify sends nothing`,
    );
  }
}

/**
 * The secure default (review v11, V11-5): verify's commands are real, so it sends none unless `--account` names the
 * accounts it may write to. Throws {@link NoDeployedFlowError} naming the flag and the accounts the stacks found with
 * these credentials are in.
 */
export function refuseWithoutAccounts(flow: Pick<DeployedFlow, 'accounts' | 'stackNames'>, allowed: readonly string[] | undefined): void {
  if (allowed !== undefined && allowed.length > 0) return;
  const accounts = flow.accounts ?? [];
  throw new NoDeployedFlowError(
    `no --account: verify's commands are real (the producers commit them, every subscriber acts on them), so it sends them only into the accounts --account names; the stacks these credentials reach (${flow.stackNames.join(', ')}) are in account(s) ${accounts.join(', ') || 'unknown'}: if ${accounts.length > 1 ? 'they are' : 'it is'} a sandbox, not production, run again with ${accounts.length === 0 ? '--account <sandbox account id>' : accounts.map((account) => `--account ${account}`).join(' ')}; verify sends nothing`,
  );
}

/** Runs the scenario against the deployed app (see the module comment). */
export async function runVerify(clients: VerifyClients, options: VerifyOptions): Promise<VerifyOutcome> {
  const runId = options.runId ?? newRunId(Date.now());
  const { scenario } = options;
  let flow = await findDeployedFlow(clients, options.stacks, scenarioProducers(scenario).map((producer) => producer.function));
  refuseWithoutAccounts(flow, options.accounts);
  const producers = scenarioProducers(scenario).map((producer) => ({ producer, functionName: findProducerFunction(flow, producer.function, options.stacks).physicalId }));
  if (producers.length === 0) throw new NoDeployedFlowError("the scenario has no producer: verify drives the deployed flow through the scenario's producer functions");
  // the flow topic's subscriptions whose queue is no subscriber found here (another account or Region): unproven
  const listed: TopicSubscription[] = [];
  const unlisted: string[] = [];
  const notSeen = await subscriptionsNotSeen(clients, flow, listed, unlisted);
  // an Operator output it could not read, a queue nothing (or several functions) consumes: review v11, V11-9 and V11-8
  notSeen.push(...(flow.notProven ?? []));
  // a producer committing into an outbox no flow or found subscriber names: its subscribers were not found (review r12, R12-5)
  const ownOutboxes = await producerOutboxes(clients, producers);
  notSeen.push(...producerOutboxesUnchecked(flow, ownOutboxes));
  const unknown = Object.keys(scenario.effects ?? {}).filter((name) => !flow.subscribers.some((subscriber) => subscriber.name === name));
  // a probe of a subscriber not found: a typo, unless the topic has subscribers verify cannot see (it may be one of them)
  if (unknown.length > 0 && notSeen.length === 0) throw new NoDeployedFlowError(`the scenario has effect probes for ${unknown.join(', ')}, which no deployed subscriber is; deployed: ${flow.subscribers.map((subscriber) => subscriber.name).join(', ')}`);
  if (unknown.length > 0) {
    notSeen.push(
      `the scenario's effect probes for ${unknown.join(', ')} name no subscriber found in the stacks verify could read (found: ${flow.subscribers.map((subscriber) => subscriber.name).join(', ')}): they may be the subscribers above it could not see; their effects were not checked`,
    );
  }
  const accounts = flow.accounts ?? [];
  refuseOtherAccounts(flow, options.accounts);
  // a subscriber in another account is seen only by its subscription: --account refuses it too (review v11, V11-4)
  refuseSubscriptionsElsewhere(listed, options.accounts);
  // an https/email/sms endpoint has no account to check: refused unless --allow-endpoint names it (review r13, R13-4)
  refuseEndpointsOutsideAws(listed, options.allowedEndpoints ?? []);
  // which of the run's events each subscriber must apply: what its deployed subscription takes, not what its Operator
  // output says (review v11, V11-6); a subscription verify could not read leaves the verdict NOT PROVEN
  const filters = await readSubscriptionFilters(clients, flow, listed, unlisted);
  flow = filters.flow;
  notSeen.push(...filters.notProven);
  options.onProgress(`run ${runId}: ${flow.subscribers.length} subscriber(s) in ${flow.stackNames.join(', ')}`);
  (options.onWarning ?? options.onProgress)(
    `warning: the run's commands are real: the deployed producers commit them and every subscriber acts on them as on real traffic (mails sent, payments taken, calls outside AWS) in account(s) ${accounts.join(', ') || 'unknown'}; never run verify against production (--account <id> refuses any other account)`,
  );
  for (const line of notSeen) options.onProgress(`not seen: ${line}`);
  for (const difference of filters.differences) options.onProgress(`filter policy differs: ${filterDifferenceLine(difference)}`);
  const queueSettings = await readQueueSettings(clients, flow);
  const derived = defaultTimeoutSeconds(flow, queueSettings);
  let timeoutSeconds = options.timeoutSeconds ?? derived.seconds;
  options.onProgress(
    options.timeoutSeconds === undefined
      ? `waiting up to ${timeoutSeconds}s for the flow to be quiet (derived: ${derived.why}; --timeout sets it)`
      : `waiting up to ${timeoutSeconds}s for the flow to be quiet (--timeout; the default derived from the deployed queues is ${derived.seconds}s: ${derived.why}${timeoutSeconds < derived.seconds ? ': an event that fails every receive may not reach a DLQ, and a verdict, before the limit' : ''})`,
  );
  const deadLetterBaseline = new Map<string, number>();
  const relayDeadLetterQueues = [
    ...flow.flows.flatMap((item) => (item.relayDeadLetterQueueUrl === undefined ? [] : [item.relayDeadLetterQueueUrl])),
    ...(flow.orderedRelayDeadLetterQueues ?? []).map((queue) => queue.url),
  ];
  for (const url of new Set([...flow.subscribers.flatMap(deadLetterQueuesOf), ...relayDeadLetterQueues])) deadLetterBaseline.set(url, await messagesOn(clients, url));

  const minted = new Set<string>();
  const figures = await produce(clients, producers, { count: options.count, seed: options.seed, runId }, (done, total) => options.onProgress(`producing: ${done}/${total} command(s)`), minted);
  const probes = scenario.effects ?? {};
  // the producer's outbox is scanned once per run; an outbox a subscriber emits into, at every read
  const readEvents = runEventReader(clients, flow, runId, ownOutboxes.map((item) => item.outboxTable));
  const classify = (events: ReadonlyMap<string, RunEvent>) => classifyRunEvents(events, runId, new Map(flow.subscribers.map((subscriber) => [subscriber.name, takenEvents(subscriber, events)])));
  // the run's events known: an ordered subscriber's FIFO queue dead-letters an aggregate's events one after another
  const again = defaultTimeoutSeconds(flow, queueSettings, await readEvents());
  if (again.seconds > derived.seconds) {
    if (options.timeoutSeconds === undefined) timeoutSeconds = again.seconds;
    options.onProgress(
      options.timeoutSeconds === undefined
        ? `waiting up to ${timeoutSeconds}s instead, derived again from the run's events (${again.why})`
        : `the default derived again from the run's events is ${again.seconds}s (${again.why})${options.timeoutSeconds < again.seconds ? `: --timeout ${options.timeoutSeconds} may end before a failing aggregate's last event reaches a DLQ` : ''}`,
    );
  }
  let held: HeldByOtherTraffic | undefined;
  try {
    held = await waitUntilQuiet(clients, flow, {
      timeoutSeconds,
      pollSeconds: options.pollSeconds,
      queueSettings,
      probes,
      deadLetterBaseline,
      readEvents,
      onProgress: options.onProgress,
    });
  } catch (error) {
    if (!(error instanceof NotQuietError)) throw error;
    const events = await readEvents();
    return {
      runId,
      seed: options.seed,
      stacks: flow.stackNames,
      producer: figures,
      notQuiet: { reason: error.message, timeoutSeconds: error.timeoutSeconds, waitingFor: error.waitingFor },
      committedEvents: events.size,
      ...classify(events),
      ...(options.cleanup ? { cleanupSkipped: notQuietCleanupSkippedReason(runId) } : {}),
    };
  }

  const events = await readEvents();
  const verified: VerifiedSubscriber[] = [];
  const unproven: string[] = [...notSeen];
  // at the limit, only other traffic on queues whose subscribers acknowledged every run event: checked, not proven (review r13, R13-3)
  if (held !== undefined) unproven.push(otherTrafficLine(held.otherTraffic, timeoutSeconds));
  // the run's events the app's filter takes that a narrowed deployed subscription did not deliver: not checked (review r12b, R12B-1)
  unproven.push(...narrowedFilterLines(flow.subscribers, events));
  const unread = new Map<string, number>();
  const notTallied: Record<string, readonly string[]> = {};
  const unreadTaken = new Set<string>();
  for (const subscriber of flow.subscribers) {
    const taken = takenEvents(subscriber, events);
    const probe = probes[subscriber.name];
    let deadLetters;
    try {
      deadLetters = await readDeadLetters(clients, subscriber, events);
    } catch (error) {
      if (!(error instanceof DeadLettersUnreadError)) throw error;
      // its checks would read the unread dead letters as none: it is left out of them, and the verdict says why
      unproven.push(`${subscriber.name}: ${error.message}; its events were not checked`);
      unread.set(subscriber.name, taken.size);
      for (const id of taken) unreadTaken.add(id);
      continue;
    }
    const applied = await appliedByInbox(clients, subscriber, taken);
    const unseen = unseenEffects(subscriber.name, subscriber.deployment, probe !== undefined, taken.size, applied !== undefined);
    if (unseen !== undefined) unproven.push(unseen);
    const effectProbe = probe === undefined ? undefined : await probeEffects(clients, probe, subscriber, taken, events);
    // a lease/multi-step/aggregate subscriber's taken events its probe counts nothing for (review r13, R13-9)
    const untallied = untalliedEffects(subscriber.name, subscriber.deployment, applied !== undefined, taken, effectProbe);
    if (untallied !== undefined) {
      unproven.push(untallied.line);
      notTallied[subscriber.name] = untallied.eventIds;
    }
    verified.push({
      subscriber,
      taken,
      deadLetters,
      onQueue: await messagesOn(clients, subscriber.deployment.queueUrl),
      ...(applied === undefined ? {} : { applied }),
      ...(effectProbe === undefined ? {} : { effectProbe }),
      ...(subscriber.deployment.ordered === true ? { commitGroups: await inboxCommitGroups(clients, subscriber, taken) } : {}),
    });
  }
  // a probed subscriber whose filter took none of the run's events: its probe never ran over one (review v11, V11-2)
  unproven.push(...probesNotExercised(verified.map(({ subscriber, taken }) => ({ name: subscriber.name, taken: taken.size })), new Set(Object.keys(probes)), events.size));
  // an offloaded event whose data verify could not read: the probes and `malformed` saw it without (./offloaded-data.ts)
  const withoutData = [...events.values()].filter((item) => item.dataUnread !== undefined);
  if (withoutData.length > 0) {
    unproven.push(
      `the data of ${withoutData.length} offloaded event(s) of the run could not be read, so the effect probes and the malformed check saw them without it: ${withoutData
        .slice(0, 3)
        .map((item) => `${item.event.id}: ${item.dataUnread!}`)
        .join('; ')}${withoutData.length > 3 ? '; ...' : ''}`,
    );
  }
  // verify does not run the producer probes (the dual-write check): said, in the report and --json (review r12, R12-3)
  const probedProducers = scenarioProducers(scenario).filter((producer) => producer.probe !== undefined).map((producer) => producer.function);
  const eventsById = new Map([...events].map(([id, item]) => [id, item.event]));
  const malformed = scenario.malformed;
  const violations = checkVerifiedRun(verified, eventsById, (id) => malformed !== undefined && eventsById.has(id) && malformed(eventsById.get(id)!), {
    expectConsumed: scenario.expectConsumed ?? [],
    publishedOutside: scenario.publishedOutside ?? [],
    takenElsewhere: unreadTaken,
  });
  const checked: VerifyResult = {
    runId,
    seed: options.seed,
    stacks: flow.stackNames,
    producer: figures,
    committedEvents: events.size,
    ...classify(events),
    subscribers: [
      ...verified.map(({ subscriber, taken, deadLetters, effectProbe }) => ({
        name: subscriber.name,
        events: taken.size,
        deadLettered: deadLetters.length,
        ...(effectProbe === undefined || 'error' in effectProbe ? {} : { effectsApplied: effectProbe.tallies.reduce((sum, tally) => sum + tally.applied, 0) }),
      })),
      ...[...unread].map(([name, events]) => ({ name, events, deadLettered: 0 })),
    ],
    deadLetters: Object.fromEntries(verified.map(({ subscriber, deadLetters }) => [subscriber.name, deadLetters])),
    violations,
    effectsNotCounted: flow.subscribers.filter((subscriber) => probes[subscriber.name] === undefined).map((subscriber) => subscriber.name),
    ...(Object.keys(notTallied).length === 0 ? {} : { effectsNotTallied: notTallied }),
    ...(filters.differences.length === 0 ? {} : { filterDifferences: filters.differences }),
    ...(unproven.length === 0 ? {} : { unproven }),
    ...(probedProducers.length === 0 ? {} : { producerProbesNotRun: probedProducers }),
  };
  if (!options.cleanup) return checked;
  return cleanUpIfOk(checked, () => cleanUpRun(clients, flow, runId, new Set(events.keys()), minted, classify(events).derivedEvents, dataRefsOf(events.values())));
}

/**
 * `--cleanup` after the checks (review r12, R12-6): only an OK run is cleaned up, since the dead letters and outbox
 * items a VIOLATED or NOT PROVEN verdict points at are its evidence ({@link VerifyResult.cleanupSkipped} says so); a
 * cleanup that fails leaves the verdict standing ({@link VerifyResult.cleanupFailed}), so the exit code and `--json`
 * are the verdict's.
 */
export async function cleanUpIfOk(checked: VerifyResult, cleanUp: () => Promise<readonly string[]>): Promise<VerifyResult> {
  const { status } = verifyVerdict(checked);
  if (status !== 'OK') return { ...checked, cleanupSkipped: cleanupSkippedReason(status, checked.runId) };
  try {
    return { ...checked, cleanedUp: await cleanUp() };
  } catch (error) {
    // failed part way: what it removed is said too (review r12b, R12B-7)
    if (error instanceof CleanupPartlyFailedError) return { ...checked, cleanedUp: error.lines, cleanupFailed: cleanupFailedReason(error) };
    return { ...checked, cleanupFailed: cleanupFailedReason(error) };
  }
}

/** Why `--cleanup` removed nothing when the flow was not quiet in time (review r12b, R12B-7: it said nothing). */
export function notQuietCleanupSkippedReason(runId: string): string {
  return `removed nothing: the flow was not quiet in time, so no verdict (only an OK run is cleaned up) and the run's events may still be moving; once it is quiet, look with dlq list and remove the run's items by hand (their keys and event ids hold the run id ${runId}): ${LATER_RUN_CLEANS_ITS_OWN}`;
}

/** Why `--cleanup` removed nothing: the verdict is not OK, and what the run left is what it points at. */
export function cleanupSkippedReason(status: string, runId: string): string {
  return `kept everything of the run (its dead letters, outbox items and the other items whose key holds its ids): the verdict is ${status}, and they are what it points at (dlq show, replay); once diagnosed, redrive or remove them by hand (their keys and event ids hold the run id ${runId}); a later run cleans up only its own`;
}

/** What a `--cleanup` that failed part way says: why, and what may be left. */
export function cleanupFailedReason(error: unknown): string {
  const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return `${why}; part of the run's items and dead letters may already be removed and the rest stay (they hold the run id and harm no later run): remove them by hand; a later run cleans up only its own`;
}
