/**
 * The run's books: every report of the simulated services ({@link SimulationObserver}) is recorded here, and the
 * figures of the summary table and the inputs of the invariant checks are read from it. It never judges; the checks do.
 */
import type { FaultKind } from '../faults/fault-plan';
import type { ResourceKey } from '../model/flow-model';
import { describeFailure, type AppPublish, type AppSend, type InvocationOutcome, type MessageOrigin, type SimulationObserver } from './observer';
import { committedInboxEvents } from './inbox-commits';
import { InjectedReceiveFailures } from './injected-receives';
import { businessItems, writtenOutboxEvents, writtenTables, type OutboxRequest } from './outbox-writes';
import { jsonLine, loggedRecordOutcomes, RETRIED_OUTCOMES } from './record-outcomes';
import { PROCESSING_RECORD } from '../../lambda/contract/wire-format';

/** The runtime's EMF counters, summed over a function's batches (namespace `IdempotentEventFlow`). */
export interface RuntimeCounters {
  Processed: number;
  Duplicates: number;
  Failed: number;
  Blocked: number;
  DeadLettered: number;
  AlreadyBlocked: number;
}

const RUNTIME_COUNTER_NAMES: readonly (keyof RuntimeCounters)[] = ['Processed', 'Duplicates', 'Failed', 'Blocked', 'DeadLettered', 'AlreadyBlocked'];

/** What the ledger knows about one event mapping (one consumer). */
export interface MappingFigures {
  invocations: number;
  /** Messages handed to the function, counting every receive. */
  deliveries: number;
  /** Deliveries of a message that had been received before (receive count > 1). */
  redeliveries: number;
  /** Invocations that threw, crashed or timed out. */
  failedInvocations: number;
}

/** A record the runtime logged as to be retried (`failed`, `skipped`) in an invocation that returned. */
export interface LoggedRetry {
  readonly messageId: string;
  readonly eventId?: string;
  /** What the runtime logged: the outcome, and its error or detail. */
  readonly logged: string;
  /** Whether the invocation's response reported it (`batchItemFailures`); false means the mapping deleted it: acknowledged. */
  readonly reported: boolean;
}

function emptyCounters(): RuntimeCounters {
  return { Processed: 0, Duplicates: 0, Failed: 0, Blocked: 0, DeadLettered: 0, AlreadyBlocked: 0 };
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** An invocation of an event source mapping as the ledger hears it. */
export interface InvocationReport {
  readonly messages: readonly { readonly messageId: string; readonly receiveCount: number; readonly origin?: MessageOrigin }[];
  readonly outcome: InvocationOutcome;
  readonly failedMessageIds: readonly string[];
  readonly output?: readonly string[];
}

/** Records what happened; read by the report and the checks. */
/** A processing record's lease expiry as a request writes it on an item (lambda/contract/wire-format.ts). */
const LEASE_EXPIRY = new RegExp(`"${PROCESSING_RECORD.LEASE_EXPIRES_AT_ATTRIBUTE}":\\{"N":"(\\d+)"\\}`, 'g');

export class RunLedger implements SimulationObserver {
  /** Event ids each relay published (and how often). */
  public readonly published = new Map<ResourceKey, Map<string, number>>();
  public streamRecords = 0;
  /** How often a relay's catch-up with its table gave up at its real-time limit (simulator/run/relay-catch-up.ts). */
  public catchUpLimitMet = 0;
  /** Per subscription: the events that matched its filter policy and were put on its queue. */
  public readonly matchedEvents = new Map<ResourceKey, Set<string>>();
  /** Per subscription: the matched events SNS delivered to its queue (not those it could not deliver). */
  public readonly deliveredEvents = new Map<ResourceKey, Set<string>>();
  /**
   * Per subscription: the events at least one of whose messages its consumer deleted from the subscription's queue
   * after handling it (acknowledged). A deletion after the runtime dead-lettered that receive is not one of these.
   */
  public readonly acknowledgedEvents = new Map<ResourceKey, Set<string>>();
  /**
   * Per subscription: the events a receive of which the consumer answered as handled (its invocation returned without
   * the message in `batchItemFailures`, and the runtime had not dead-lettered or found blocked that receive), whether or
   * not the mapping's delete then succeeded (a lost delete leaves a message whose effect is done).
   */
  public readonly handledEvents = new Map<ResourceKey, Set<string>>();
  /**
   * Per subscription, in order: the events each returned invocation answered as handled (not in `batchItemFailures`),
   * together; a receive the runtime dead-lettered or found blocked is no application, so it is not among them (its
   * event may be applied later, by a redrive). The deletions of one batch say nothing of the order its events were
   * applied in, so an order check (check/aggregate-order.ts) reads these groups, not `acknowledgedEvents`.
   */
  public readonly answeredTogether = new Map<ResourceKey, string[][]>();
  /**
   * Per function: each event whose inbox record a request of the function committed (DynamoDB applied it), with the
   * position of its first commit among the function's: the order in which the consumer applied its events, inside one
   * batch too (./inbox-commits.ts).
   */
  public readonly inboxCommits = new Map<ResourceKey, Map<string, number>>();
  /** The outbox events each function's applied requests wrote, by function (see ./outbox-writes.ts). */
  public readonly outboxWrites = new Map<ResourceKey, Set<string>>();
  /**
   * The same, per function and invocation key (a producer driven by the run: `producer|<command>|<attempt>`), in the
   * order they were applied: which events each attempt of a command committed.
   */
  public readonly outboxWritesByInvocation = new Map<ResourceKey, Map<string, string[]>>();
  /**
   * Every request of an invocation that put outbox events, applied or refused by DynamoDB (a condition that failed:
   * the event was there already), in the order they were answered: per function and invocation key. A producer's retry
   * that re-sends an event an earlier attempt committed shows that it derives the id and re-ran that step
   * (check/committed-twice.ts).
   */
  public readonly outboxRequestsByInvocation = new Map<ResourceKey, Map<string, OutboxRequest[]>>();
  /**
   * Per function: the longest lease its applied requests wrote on a processing record (the lease's expiry less the
   * run's clock when DynamoDB applied it), in whole seconds: the lease the runtime used, however it was configured.
   */
  public readonly leaseSecondsWritten = new Map<ResourceKey, number>();
  /**
   * Per subscription: the events a message of which was deleted because the runtime had dead-lettered it, or had found
   * it already blocked for an operator by another copy's delivery (`already-blocked`): no effect promised.
   */
  public readonly deadLetterDeletedEvents = new Map<ResourceKey, Set<string>>();
  /** Per queue: the dead letters put on it during the run (by the runtime, by SQS after maxReceiveCount, by SNS). */
  public readonly deadLettersReceived = new Map<ResourceKey, number>();
  /** Per queue: messages SQS moved to the dead-letter queue after maxReceiveCount. */
  public readonly redriven = new Map<ResourceKey, number>();
  /**
   * Stream records each relay gave up on: the events, why, and the dead-letter queue their dead letter went to
   * (none: discarded, lost).
   */
  public readonly relayGaveUp: { relay: ResourceKey; eventIds: readonly string[]; reason: string; deadLetterQueue?: ResourceKey }[] = [];
  /** Messages SNS put on a subscription's dead-letter queue because it could not deliver them. */
  public snsDeadLettered = 0;
  /** Messages SNS could not deliver and had no dead-letter queue for: lost, with why. */
  public readonly undeliverable: { subscription: ResourceKey; eventId?: string; reason: string }[] = [];
  /** Messages that outlived their queue's retention: lost. */
  public readonly expired: { queue: ResourceKey; messageId: string; eventId?: string; expiredAt?: number }[] = [];
  public readonly mappings = new Map<ResourceKey, MappingFigures>();
  /** Faults by the resource they hit, then by kind. */
  public readonly faults = new Map<ResourceKey, Map<FaultKind, number>>();
  /** The runtime's own EMF counters per function. */
  public readonly runtimeCounters = new Map<ResourceKey, RuntimeCounters>();
  /**
   * Per subscription and event: whether every failed receive of its messages failed at a fault the run injected
   * (./injected-receives.ts), for the dead letters a queue retrying too few times leaves.
   */
  public readonly receiveFailures = new InjectedReceiveFailures();
  /** Why a message last failed (by SQS message id), from the invocation outcome or the runtime's log line. */
  public readonly lastFailure = new Map<string, string>();
  /**
   * Per event mapping: the records the runtime's own outcome line said were to be retried, in invocations that
   * returned, each with whether the batch response reported them (correlated per invocation, not across the run).
   */
  public readonly loggedRetries = new Map<ResourceKey, LoggedRetry[]>();
  /**
   * Per event mapping: the records invocations that returned reported in `batchItemFailures` with no outcome line of
   * the runtime's about them (its log level above WARN hides them, or the handler is not the runtime's): failed records
   * the run knows of from the batch response alone.
   */
  public readonly reportedUnlogged = new Map<ResourceKey, number>();
  /** The consumer-queue receives the runtime sent to a dead-letter queue: `<message id>#<receive count>`, or `<message id>#*` when it did not say which receive. */
  private readonly runtimeDeadLetters = new Set<string>();
  /** The consumer-queue receives the runtime logged as `already-blocked` (`<message id>#<receive count>`): acknowledged, no effect promised. */
  private readonly alreadyBlockedReceives = new Set<string>();
  private readonly outputSinks: ((functionKey: ResourceKey, line: string, stream: 'stdout' | 'stderr') => void)[] = [];
  /** The messages the functions sent with their own SQS clients, in order. */
  public readonly appSends: AppSend[] = [];
  /** The messages the functions published with their own SNS clients, in order. */
  public readonly appPublishes: AppPublish[] = [];

  /** Also sends every function output line to `sink` (the log file). */
  public addOutputSink(sink: (functionKey: ResourceKey, line: string, stream: 'stdout' | 'stderr') => void): void {
    this.outputSinks.push(sink);
  }
  /** Who else hears each invocation of an event source mapping (`simulate --serve` prints them). */
  private readonly invocationListeners: ((mapping: ResourceKey, invocation: InvocationReport) => void)[] = [];

  /** Adds a listener of every invocation reported from now on (after the ledger has booked it). */
  public addInvocationListener(listener: (mapping: ResourceKey, invocation: InvocationReport) => void): void {
    this.invocationListeners.push(listener);
  }


  public onAppSend(send: AppSend): void {
    this.appSends.push(send);
  }

  public onAppPublish(publish: AppPublish): void {
    this.appPublishes.push(publish);
  }

  public onStreamRecord(relay: ResourceKey, record: { readonly eventId?: string; readonly published: boolean; readonly duplicate: boolean }): void {
    this.streamRecords += 1;
    if (!record.published || record.eventId === undefined) return;
    const published = getOrCreate(this.published, relay, () => new Map<string, number>());
    // `duplicate`: the relay published this record twice (an injected at-least-once redelivery)
    published.set(record.eventId, (published.get(record.eventId) ?? 0) + (record.duplicate ? 2 : 1));
  }

  public onFanOut(subscription: ResourceKey, delivery: { readonly eventId?: string; readonly matched: boolean; readonly copies: number }): void {
    if (!delivery.matched || delivery.eventId === undefined) return;
    getOrCreate(this.matchedEvents, subscription, () => new Set()).add(delivery.eventId);
    if (delivery.copies > 0) getOrCreate(this.deliveredEvents, subscription, () => new Set()).add(delivery.eventId);
  }

  public onRelayGaveUp(relay: ResourceKey, records: { readonly eventIds: readonly string[]; readonly reason: string; readonly deadLetterQueue?: ResourceKey }): void {
    this.relayGaveUp.push({ relay, ...records });
  }

  public onEnqueued(queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin }): void {
    if (message.origin.via === 'sns-dead-letter') this.snsDeadLettered += 1;
    const source = message.origin.deadLetterOf;
    if (message.origin.via === 'sns-dead-letter' || message.origin.via === 'redrive' || source !== undefined) this.deadLettersReceived.set(queue, (this.deadLettersReceived.get(queue) ?? 0) + 1);
    if (message.origin.via === 'send-message' && source !== undefined) this.runtimeDeadLetters.add(`${source.messageId}#${source.receiveCount ?? '*'}`);
  }

  public onDeleted(_queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin; readonly receiveCount: number }): void {
    const { subscription, eventId, via } = message.origin;
    // only a deletion from the subscription's own queue acknowledges (a message SNS put there, or one the operator
    // moved back there from a dead-letter queue), not a deletion from a dead-letter queue
    if ((via !== 'sns' && via !== 'moved-back') || subscription === undefined || eventId === undefined) return;
    const receive = `${message.messageId}#${message.receiveCount}`;
    const deadLettered = this.runtimeDeadLetters.has(receive) || this.runtimeDeadLetters.has(`${message.messageId}#*`) || this.alreadyBlockedReceives.has(receive);
    getOrCreate(deadLettered ? this.deadLetterDeletedEvents : this.acknowledgedEvents, subscription, () => new Set()).add(eventId);
  }

  public onUndeliverable(subscription: ResourceKey, message: { readonly eventId?: string; readonly reason: string }): void {
    this.undeliverable.push({ subscription, ...message });
  }

  public onRedriven(queue: ResourceKey): void {
    this.redriven.set(queue, (this.redriven.get(queue) ?? 0) + 1);
  }

  public onExpired(queue: ResourceKey, message: { readonly messageId: string; readonly origin: MessageOrigin; readonly expiredAt?: number }): void {
    this.expired.push({ queue, messageId: message.messageId, eventId: message.origin.eventId, ...(message.expiredAt === undefined ? {} : { expiredAt: message.expiredAt }) });
  }

  public onInvocation(mapping: ResourceKey, invocation: InvocationReport): void {
    this.bookInvocation(mapping, invocation);
    for (const listener of this.invocationListeners) listener(mapping, invocation);
  }

  private bookInvocation(mapping: ResourceKey, invocation: InvocationReport): void {
    this.receiveFailures.onInvocation(mapping, invocation);
    if (invocation.outcome.kind === 'returned' && invocation.output !== undefined) {
      this.recordLoggedRetries(mapping, invocation);
      this.recordAlreadyBlocked(invocation.messages, invocation.output);
    }
    if (invocation.outcome.kind === 'returned') this.recordHandled(invocation.messages, invocation.failedMessageIds);
    const figures = getOrCreate(this.mappings, mapping, () => ({ invocations: 0, deliveries: 0, redeliveries: 0, failedInvocations: 0 }));
    figures.invocations += 1;
    figures.deliveries += invocation.messages.length;
    figures.redeliveries += invocation.messages.filter((message) => message.receiveCount > 1).length;
    const reason = describeFailure(invocation.outcome);
    if (reason !== undefined) {
      figures.failedInvocations += 1;
      for (const message of invocation.messages) this.lastFailure.set(message.messageId, reason);
    } else {
      for (const messageId of invocation.failedMessageIds) {
        if (!this.lastFailure.has(messageId)) this.lastFailure.set(messageId, 'reported as a batch item failure');
      }
    }
  }

  /** Notes the events of the receives a returned invocation answered as handled (see {@link handledEvents}). */
  private recordHandled(messages: readonly { readonly messageId: string; readonly receiveCount: number; readonly origin?: MessageOrigin }[], failedMessageIds: readonly string[]): void {
    const failed = new Set(failedMessageIds);
    const groups = new Map<ResourceKey, string[]>();
    for (const { messageId, receiveCount, origin } of messages) {
      if (failed.has(messageId) || origin?.subscription === undefined || origin.eventId === undefined) continue;
      const receive = `${messageId}#${receiveCount}`;
      if (this.runtimeDeadLetters.has(receive) || this.runtimeDeadLetters.has(`${messageId}#*`) || this.alreadyBlockedReceives.has(receive)) continue;
      getOrCreate(groups, origin.subscription, () => []).push(origin.eventId);
      getOrCreate(this.handledEvents, origin.subscription, () => new Set()).add(origin.eventId);
    }
    for (const [subscription, eventIds] of groups) getOrCreate(this.answeredTogether, subscription, () => []).push(eventIds);
  }

  /** Notes the receives the runtime logged as `already-blocked`: their deletion acknowledges no effect. */
  private recordAlreadyBlocked(messages: readonly { readonly messageId: string; readonly receiveCount: number }[], output: readonly string[]): void {
    for (const [messageId, logged] of loggedRecordOutcomes(output)) {
      if (logged.outcome !== 'already-blocked') continue;
      const message = messages.find((candidate) => candidate.messageId === messageId);
      if (message !== undefined) this.alreadyBlockedReceives.add(`${messageId}#${message.receiveCount}`);
    }
  }

  private recordLoggedRetries(
    mapping: ResourceKey,
    invocation: { readonly messages: readonly { readonly messageId: string; readonly origin?: MessageOrigin }[]; readonly failedMessageIds: readonly string[]; readonly output?: readonly string[] },
  ): void {
    const reported = new Set(invocation.failedMessageIds);
    const outcomes = loggedRecordOutcomes(invocation.output ?? []);
    const unlogged = invocation.messages.filter((message) => reported.has(message.messageId) && !outcomes.has(message.messageId)).length;
    if (unlogged > 0) this.reportedUnlogged.set(mapping, (this.reportedUnlogged.get(mapping) ?? 0) + unlogged);
    for (const [messageId, logged] of outcomes) {
      if (!RETRIED_OUTCOMES.has(logged.outcome)) continue;
      // a line about a message of another batch (a handler that logs for others) is not this invocation's witness
      const message = invocation.messages.find((candidate) => candidate.messageId === messageId);
      if (message === undefined) continue;
      const retries = getOrCreate(this.loggedRetries, mapping, () => []);
      retries.push({ messageId, eventId: message.origin?.eventId, logged: logged.detail ? `${logged.outcome} (${logged.detail})` : logged.outcome, reported: reported.has(messageId) });
    }
  }

  public onFault(kind: FaultKind, subject: ResourceKey, detail?: { readonly messageId?: string; readonly count?: number; readonly invocationKey?: string }): void {
    const byKind = getOrCreate(this.faults, subject, () => new Map<FaultKind, number>());
    byKind.set(kind, (byKind.get(kind) ?? 0) + (detail?.count ?? 1));
    if (detail?.invocationKey !== undefined) this.receiveFailures.onFault(detail.invocationKey, kind);
    // handled, yet back on the queue: if SQS moves it after maxReceiveCount receives, this is why
    if (kind === 'lost-delete' && detail?.messageId !== undefined) this.lastFailure.set(detail.messageId, 'handled, but its delete was lost (an injected fault)');
  }

  /**
   * Books a request of a producer's (or any function's) invocation that put outbox events and that DynamoDB answered,
   * applied or not, with the fault injected on it (`lose-response`, `crash-after`: the invocation did not see it
   * applied): see {@link outboxRequestsByInvocation}; with `items`, the business items it writes and those whose condition
   * refused it (from the refusal's body), the keys of a Put read with `keyNames` of its table.
   */
  public recordOutboxRequest(
    functionKey: ResourceKey,
    invocationKey: string,
    request: { readonly operation: string; readonly body: Buffer },
    applied: boolean,
    fault?: string,
    items?: { readonly keyNames: (table: string) => readonly string[]; readonly refusal?: Buffer },
  ): void {
    const eventIds = writtenOutboxEvents(request.operation, request.body);
    if (eventIds.length === 0) return;
    const requests = getOrCreate(this.outboxRequestsByInvocation, functionKey, () => new Map<string, OutboxRequest[]>());
    const business = items === undefined ? { written: [], refused: [] } : businessItems(request.operation, request.body, items.keyNames, applied ? undefined : items.refusal);
    const entry: OutboxRequest = {
      operation: request.operation,
      tables: writtenTables(request.operation, request.body),
      eventIds,
      applied,
      ...(fault === undefined || fault === 'none' ? {} : { fault }),
      ...(business.written.length === 0 ? {} : { items: business.written }),
      ...(business.refused.length === 0 ? {} : { refusedItems: business.refused }),
    };
    requests.set(invocationKey, [...(requests.get(invocationKey) ?? []), entry]);
  }

  /**
   * Books a request of a function's invocation that DynamoDB applied (its reply lost or the process crashed after it
   * included), in the order the proxies heard them answered: the inbox records it committed (see {@link inboxCommits}),
   * and the outbox events it wrote (see {@link outboxWrites}), by its invocation when `invocationKey` is given (see
   * {@link outboxWritesByInvocation}).
   */
  public recordApplied(functionKey: ResourceKey, request: { readonly operation: string; readonly body: Buffer }, invocationKey?: string, nowMilliseconds?: number): void {
    if (nowMilliseconds !== undefined) {
      for (const match of request.body.toString('utf8').matchAll(LEASE_EXPIRY)) {
        const seconds = Math.round((Number(match[1]) - nowMilliseconds) / 1000);
        if (seconds > (this.leaseSecondsWritten.get(functionKey) ?? 0)) this.leaseSecondsWritten.set(functionKey, seconds);
      }
    }
    const written = writtenOutboxEvents(request.operation, request.body);
    if (written.length > 0) {
      const events = getOrCreate(this.outboxWrites, functionKey, () => new Set<string>());
      for (const eventId of written) events.add(eventId);
      if (invocationKey !== undefined) {
        const byInvocation = getOrCreate(this.outboxWritesByInvocation, functionKey, () => new Map<string, string[]>());
        byInvocation.set(invocationKey, [...(byInvocation.get(invocationKey) ?? []), ...written]);
      }
    }
    const eventIds = committedInboxEvents(request.operation, request.body);
    if (eventIds.length === 0) return;
    const commits = getOrCreate(this.inboxCommits, functionKey, () => new Map<string, number>());
    for (const eventId of eventIds) if (!commits.has(eventId)) commits.set(eventId, commits.size + 1);
  }

  public onFunctionOutput(functionKey: ResourceKey, line: string, stream: 'stdout' | 'stderr'): void {
    for (const sink of this.outputSinks) sink(functionKey, line, stream);
    const parsed = jsonLine(line);
    if (parsed === undefined) return;
    if (typeof parsed._aws === 'object' && parsed._aws !== null) {
      const counters = getOrCreate(this.runtimeCounters, functionKey, emptyCounters);
      for (const name of RUNTIME_COUNTER_NAMES) {
        const value = parsed[name];
        if (typeof value === 'number') counters[name] += value;
      }
      return;
    }
    const messageId = parsed.sqsMessageId;
    if (typeof messageId === 'string' && parsed.outcome === 'failed') {
      const error = parsed.error as { name?: unknown; message?: unknown } | undefined;
      const detail = error !== undefined ? `${String(error.name ?? 'Error')}: ${String(error.message ?? '')}` : String(parsed.detail ?? parsed.message ?? 'failed');
      this.lastFailure.set(messageId, `the runtime reported: ${detail}`);
    }
  }

  /** Faults of every kind that hit any of `subjects`, by kind. */
  public faultsByKind(subjects: readonly (ResourceKey | undefined)[]): Partial<Record<FaultKind, number>> {
    const byKind: Partial<Record<FaultKind, number>> = {};
    for (const subject of subjects) {
      if (subject === undefined) continue;
      for (const [kind, count] of this.faults.get(subject) ?? []) byKind[kind] = (byKind[kind] ?? 0) + count;
    }
    return byKind;
  }

  /** Faults of `kind` summed over every subject. */
  public faultsOfKind(kind: FaultKind): number {
    let total = 0;
    for (const byKind of this.faults.values()) total += byKind.get(kind) ?? 0;
    return total;
  }

  /** Total of all faults injected. */
  public totalFaults(): number {
    let total = 0;
    for (const byKind of this.faults.values()) for (const count of byKind.values()) total += count;
    return total;
  }
}
