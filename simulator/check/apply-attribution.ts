/**
 * Which invocation applied an event again, and how: the cause an `effect-count` violation names when a count is above
 * what exactly-once allows. It is read from what the run recorded of each consumer invocation (its SQS records and
 * their receive counts, the simulated time, its outcome) and of each write request it sent (the operation, the tables
 * and inbox keys it names, the fault it met, and whether DynamoDB applied it, its reply lost or not):
 *
 * - an **application** of an event is an applied write of an invocation that carried it: the runtime's commit (the
 *   write naming the subscriber's inbox key `<subscriber>#<event id>`, or in aggregate mode the aggregate's Put whose
 *   processed-ids list names the event), a lease or multi-step effect's call (a write naming no inbox key), or a write
 *   of a transactional or aggregate consumer's own client left by an invocation that did not commit the event;
 * - each application after the first is told by what came before it: the earlier invocation wrote with its own client
 *   and failed (its write stayed), the earlier call's response was lost (a lost response retried), the earlier
 *   invocation crashed once the call was applied, at it or at a later write (a redelivery after a crash), the inbox
 *   record of the earlier commit had expired (the deduplication window shorter than the redelivery's delay), the two
 *   commits wrote different aggregate items (a key that differs between invocations of one event, e.g. computed from
 *   the processing time), the aggregate item's processed list had dropped the event, as many newer events of the
 *   aggregate having been applied in between as it keeps (aggregate mode's documented bound, `maxProcessedMessages`:
 *   ./processed-list-overrun.ts); for a lease or multi-step effect, the scenario's operator resolved the event's blocked step
 *   `TRY_AGAIN` after the earlier application (its decision, not the fault that blocked the step, let the effect run
 *   again: `operator-retried-applied-step`);
 * - an event committed once whose count is still too high ran its handler more than once for that one commit (earlier
 *   attempts refused, or failed before their commit): state kept between attempts (a module-level cache written back)
 *   carried their work into the committed values;
 * - an event committed once whose count is too LOW, its commit staging other writes (or none) than an earlier run of
 *   its handler did: the committing run read what the earlier run left in memory and skipped or under-applied it;
 * - an event committed once whose count is too LOW, its commit writing an item (a Put, or an update that sets values
 *   of the request only, both without a condition) that another environment wrote after this environment last read
 *   or wrote it: a lost update, from a copy kept in memory since an earlier invocation (two environments' module-level
 *   caches overwriting each other), or from a read in the same invocation (a read, then a write without a condition).
 *
 * - a lease or multi-step effect made by an HTTP call (which writes nothing to DynamoDB) outside the lease: the
 *   simulator hears each call a function makes to a service outside it, with how many DynamoDB requests its
 *   invocation had sent by then (./outside-calls.ts); a call made while the record of no event it was made for held a
 *   lease (before the claim, after the completion) is repeated by each redelivery, and told only when the event's
 *   applications name no mistake of their own: a window, lease or crash story (the handle ran again under a lease
 *   claimed afresh) is told first, a call a refused duplicate repeated (a token) notwithstanding; and not told when each
 *   invocation that repeated it claimed a lease of its own.
 *
 * Invocations are numbered per function in the order they ended: `invocation #7 (receive 2, at +180 s)`.
 */
import { AGGREGATE_ITEM, INBOX_ITEM, OUTBOX_ITEM, PROCESSING_RECORD, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { RequestFault } from '../faults/dynamodb-proxy';
import { requestTables } from '../faults/fault-steering';
import { describeFailure, type InvocationOutcome, type MessageOrigin } from '../observation/observer';
import { WRITE_OPERATIONS } from '../aws/request-items';
import { writtenOutboxEvents } from '../observation/outbox-writes';
import type { OutsideCall } from '../lambda/worker-protocol';
import { callsOutsideLease, holdsLease, leaseCallsText, type RuntimeWrite } from './outside-calls';
import { PROCESSED_LIST_SETTING, processedListOverrun, processedListOverrunText } from './processed-list-overrun';
import { fixFor, type AggregateReference, type CauseKind, type InvocationReference, type RequestReference, type SettingReference, type ViolationCause } from './violation-cause';

/** One event's story: in words, and as the structured cause. */
interface Told {
  readonly text: string;
  readonly cause: ViolationCause;
  /** For an aggregate's processed list that forgot the event: the events applied to the aggregate in between. @default none */
  readonly newer?: readonly string[];
}

/** How one application after the first came about. */
interface Again {
  readonly text: string;
  readonly kind: CauseKind;
  readonly fix: string;
  readonly requests?: readonly RequestReference[];
  readonly setting?: SettingReference;
  readonly aggregate?: AggregateReference;
  /** See {@link Told.newer}. */
  readonly newer?: readonly string[];
}

function requestReferences(writes: readonly { readonly operation: string; readonly tables: readonly string[]; readonly fault: RequestFault }[]): RequestReference[] {
  const counts = new Map<string, { operation: string; tables: readonly string[]; fault: RequestFault; count: number }>();
  for (const write of writes) {
    const key = `${write.operation}|${write.tables.join(',')}|${write.fault}`;
    const seen = counts.get(key) ?? { operation: write.operation, tables: write.tables, fault: write.fault, count: 0 };
    seen.count += 1;
    counts.set(key, seen);
  }
  return [...counts.values()].map(({ operation, tables, fault, count }) => ({ operation, tables: [...tables], count, ...(fault === 'none' ? {} : { fault }) }));
}


/** A consumer whose applications are attributed. */
export interface AttributedConsumer {
  readonly subscriber: string;
  /** `IEF_PROCESSING_MODE`: transactional, aggregate, lease or multi-step. */
  readonly mode: string;
  /** Its inbox table's local name. @default none (aggregate mode) */
  readonly inboxTable?: string;
  /**
   * `IEF_DEDUPLICATION_WINDOW_SECONDS` its function runs with; a window the runtime wrote on a record (set in code too)
   * takes its place when the run saw one. @default unknown
   */
  readonly windowSeconds?: number;
  /** The outbox table's local name its `tx.emit` appends to, when it publishes events. @default none */
  readonly outboxTable?: string;
}

interface WriteSeen {
  readonly index: number;
  readonly operation: string;
  readonly body: string;
  readonly tables: readonly string[];
  readonly fault: RequestFault;
  /** Its number in the order the function sent its invocation's requests. @default unknown */
  readonly sequence?: number;
  applied: boolean;
  /** When DynamoDB answered it, in the run's order of answers (every watched function's). */
  answered?: number;
}

/** A `GetItem` of an invocation: the item it read. */
interface ReadSeen {
  readonly index: number;
  /** `<table>|<key>` (see {@link itemId}). */
  readonly item: string;
  /** When DynamoDB answered it, in the run's order of answers. */
  answered?: number;
}

interface InvocationSeen {
  readonly number: number;
  /** Its place among the invocations of every watched function, in the order they ended (from 1). */
  readonly order: number;
  readonly atMs: number;
  readonly messages: readonly { readonly messageId: string; readonly receiveCount: number; readonly eventId?: string; readonly subject?: string }[];
  readonly outcome: InvocationOutcome;
  readonly failedMessageIds: ReadonlySet<string>;
  readonly writes: readonly WriteSeen[];
  readonly reads: readonly ReadSeen[];
  /** The number of the execution environment it ran in (per function). @default unknown */
  readonly environment?: number;
  /** Its HTTP calls outside the simulator, in the order it started them. */
  readonly calls: readonly OutsideCall[];
}

/** One application of an event (see the module comment). */
interface Application {
  readonly invocation: InvocationSeen;
  readonly kind: 'commit' | 'effect' | 'own-client';
  readonly writes: readonly WriteSeen[];
  /** For an own-client application after the first run of the handler in its invocation: the commit attempt before it that was not applied. */
  readonly rerunAfter?: WriteSeen;
}

/** A resolution the scenario's operator made of a blocked step (simulator/run/operator.ts). */
interface ResolutionSeen {
  readonly subscriber: string;
  readonly eventId: string;
  readonly step: string;
  readonly status: 'SUCCESS' | 'TRY_AGAIN';
  /** How many invocations (of every watched function) had ended when it was made. */
  readonly afterInvocations: number;
  readonly atMs: number;
}

/** An applied write of a consumer's invocation that put outbox events, made for one event the invocation carried (see {@link ApplyAttribution.followUps}). */
export interface FollowUpWrite {
  /** The event the consumer received, that the write was made for. */
  readonly receivedEventId: string;
  /** The invocation that made it, told by its receive of that event (`role` `applied`). */
  readonly invocation: InvocationReference;
  /** The outbox events it put, in request order. */
  readonly eventIds: readonly string[];
  /** Whether it is the runtime's commit of the received event (its `tx.emit`), not an outbox write of the consumer's own. */
  readonly inCommit: boolean;
  /** The request, with the fault injected on it. */
  readonly request: RequestReference;
}

/** The applications of each event per consumer function, and how each one after the first came about. */
export class ApplyAttribution {
  private readonly consumers = new Map<string, AttributedConsumer>();
  private readonly pending = new Map<string, WriteSeen[]>();
  private readonly pendingReads = new Map<string, ReadSeen[]>();
  private readonly pendingEnvironments = new Map<string, number>();
  private readonly pendingCalls = new Map<string, OutsideCall[]>();
  /** DynamoDB's answers so far, to the watched functions' writes and reads. */
  private answers = 0;
  private readonly invocations = new Map<string, InvocationSeen[]>();
  /** Invocations ended so far, of every watched function. */
  private ended = 0;
  /** The scenario's operator's resolutions of blocked steps, in the order it made them. */
  private readonly resolutions: ResolutionSeen[] = [];
  private readonly startMs: number;
  /** Per event a watched consumer emitted, the events it was emitted for (built once, when first asked). */
  private emitted: Map<string, string[]> | undefined;

  /**
   * `now` is the run's clock (times are told from the moment this was made); `keyAttributes` names a table's key
   * attributes by its local name.
   */
  public constructor(
    private readonly now: () => number,
    private readonly keyAttributes: (tableName: string) => readonly string[],
  ) {
    this.startMs = now();
  }

  /** Stops recording and forgets what was recorded (a served run goes on invoking after its checks). */
  public close(): void {
    this.emitted = undefined;
    this.consumers.clear();
    this.pending.clear();
    this.pendingReads.clear();
    this.pendingEnvironments.clear();
    this.pendingCalls.clear();
    this.invocations.clear();
    this.resolutions.length = 0;
  }

  /** Attributes the applications of the consumer function `functionKey`. */
  public watch(functionKey: string, consumer: AttributedConsumer): void {
    this.consumers.set(functionKey, consumer);
  }

  /**
   * A DynamoDB request of an invocation, and the fault decided for it; `environment` numbers the execution environment
   * the invocation runs in (per function).
   */
  public onRequest(
    functionKey: string,
    invocationKey: string,
    request: { readonly operation: string; readonly index: number; readonly body: Buffer; readonly sequence?: number },
    fault: RequestFault,
    environment?: number,
  ): void {
    if (!this.consumers.has(functionKey)) return;
    if (environment !== undefined) this.pendingEnvironments.set(`${functionKey}|${invocationKey}`, environment);
    if (request.operation === 'GetItem') {
      const read = readItem(request.body.toString('utf8'), this.keyAttributes);
      if (read === undefined) return;
      const reads = this.pendingReads.get(`${functionKey}|${invocationKey}`) ?? [];
      reads.push({ index: request.index, item: read });
      this.pendingReads.set(`${functionKey}|${invocationKey}`, reads);
      return;
    }
    if (!WRITE_OPERATIONS.has(request.operation)) return;
    const body = request.body.toString('utf8');
    const writes = this.pending.get(`${functionKey}|${invocationKey}`) ?? [];
    writes.push({ index: request.index, operation: request.operation, body, tables: requestTables(body), fault, ...(request.sequence === undefined ? {} : { sequence: request.sequence }), applied: false });
    this.pending.set(`${functionKey}|${invocationKey}`, writes);
  }

  /**
   * The scenario's operator resolved the blocked step `step` of `subscriber`'s record of `eventId` (`SUCCESS` or
   * `TRY_AGAIN`), now: a `TRY_AGAIN` of a step whose effect had been applied is the cause of the application the
   * redelivery then made (`operator-retried-applied-step`).
   */
  public onOperatorResolution(subscriber: string, eventId: string, step: string, status: 'SUCCESS' | 'TRY_AGAIN'): void {
    this.resolutions.push({ subscriber, eventId, step, status, afterInvocations: this.ended, atMs: this.now() });
  }

  /** An HTTP call an invocation started to a service outside the simulator. */
  public onOutsideCall(functionKey: string, invocationKey: string, call: OutsideCall): void {
    if (!this.consumers.has(functionKey)) return;
    const calls = this.pendingCalls.get(`${functionKey}|${invocationKey}`) ?? [];
    calls.push(call);
    this.pendingCalls.set(`${functionKey}|${invocationKey}`, calls);
  }

  /** Whether DynamoDB applied a request of an invocation. */
  public onAnswered(functionKey: string, invocationKey: string, request: { readonly index: number }, applied: boolean): void {
    const write = this.pending.get(`${functionKey}|${invocationKey}`)?.find((candidate) => candidate.index === request.index);
    if (write !== undefined) {
      write.applied = applied;
      this.answers += 1;
      write.answered = this.answers;
    }
    const read = this.pendingReads.get(`${functionKey}|${invocationKey}`)?.find((candidate) => candidate.index === request.index);
    if (read !== undefined) {
      this.answers += 1;
      read.answered = this.answers;
    }
  }

  /** An invocation ended (`invocationKey` as the event source mapping made it: `<mapping>|<first message id>|<its receive count>`). */
  public onInvocation(
    functionKey: string,
    invocationKey: string,
    invocation: {
      readonly messages: readonly { readonly messageId: string; readonly receiveCount: number; readonly origin?: MessageOrigin }[];
      readonly outcome: InvocationOutcome;
      readonly failedMessageIds: readonly string[];
    },
  ): void {
    if (!this.consumers.has(functionKey)) return;
    const seen = this.invocations.get(functionKey) ?? [];
    const writes = this.pending.get(`${functionKey}|${invocationKey}`) ?? [];
    const reads = this.pendingReads.get(`${functionKey}|${invocationKey}`) ?? [];
    const environment = this.pendingEnvironments.get(`${functionKey}|${invocationKey}`);
    const calls = this.pendingCalls.get(`${functionKey}|${invocationKey}`) ?? [];
    this.pendingCalls.delete(`${functionKey}|${invocationKey}`);
    this.pending.delete(`${functionKey}|${invocationKey}`);
    this.pendingReads.delete(`${functionKey}|${invocationKey}`);
    this.pendingEnvironments.delete(`${functionKey}|${invocationKey}`);
    this.ended += 1;
    seen.push({
      number: seen.length + 1,
      order: this.ended,
      atMs: this.now(),
      messages: invocation.messages.map(({ messageId, receiveCount, origin }) => ({
        messageId,
        receiveCount,
        ...(origin?.eventId === undefined ? {} : { eventId: origin.eventId }),
        ...(origin?.subject === undefined ? {} : { subject: origin.subject }),
      })),
      outcome: invocation.outcome,
      failedMessageIds: new Set(invocation.failedMessageIds),
      writes,
      reads,
      ...(environment === undefined ? {} : { environment }),
      calls,
    });
    this.invocations.set(functionKey, seen);
  }

  /** How the events of a count found too high were applied more than once, in words; undefined when the run shows nothing. */
  public cause(functionKey: string, eventIds: readonly string[]): string | undefined {
    const consumer = this.consumers.get(functionKey);
    if (consumer === undefined) return undefined;
    const told = eventIds.flatMap((eventId) => {
      const story = this.story(consumer, functionKey, eventId);
      return story === undefined ? [] : [`event ${eventId}: ${story.text}`];
    });
    return told.length === 0 ? undefined : told.join('; ');
  }

  /** The same causes as `cause`, one structured cause per event the run tells the story of. */
  public causes(functionKey: string, eventIds: readonly string[]): ViolationCause[] {
    const consumer = this.consumers.get(functionKey);
    if (consumer === undefined) return [];
    return eventIds.flatMap((eventId) => {
      const story = this.story(consumer, functionKey, eventId);
      return story === undefined ? [] : [story.cause];
    });
  }

  /**
   * Why the events of a count found too low were applied fewer times than committed, in words; undefined when the run
   * shows nothing (see {@link ApplyAttribution.shortfall}).
   */
  public shortCause(functionKey: string, eventIds: readonly string[]): string | undefined {
    const told = this.shortfalls(functionKey, eventIds).map(({ eventId, told: { text } }) => `event ${eventId}: ${text}`);
    return told.length === 0 ? undefined : told.join('; ');
  }

  /** The same causes as `shortCause`, one structured cause per event told. */
  public shortCauses(functionKey: string, eventIds: readonly string[]): ViolationCause[] {
    return this.shortfalls(functionKey, eventIds).map(({ told }) => told.cause);
  }

  private shortfalls(functionKey: string, eventIds: readonly string[]): { eventId: string; told: Told }[] {
    const consumer = this.consumers.get(functionKey);
    if (consumer === undefined) return [];
    return eventIds.flatMap((eventId) => {
      const told = this.shortfall(consumer, functionKey, eventId) ?? this.lostUpdate(consumer, functionKey, eventId);
      return told === undefined ? [] : [{ eventId, told }];
    });
  }

  /**
   * An event a transactional consumer committed once, whose commit staged other writes than an earlier run of its
   * handler for the same event did (a commit refused, or an invocation that failed before its commit): the committed
   * run read state the earlier run left in memory (a module-level cache, a set of the ids it saw) and skipped or
   * under-applied the event. A correct handler stages the same writes at every run (see {@link handlerWrites}).
   */
  private shortfall(consumer: AttributedConsumer, functionKey: string, eventId: string): Told | undefined {
    const carrying = (this.invocations.get(functionKey) ?? []).filter((invocation) => invocation.messages.some((message) => message.eventId === eventId));
    const attempts = carrying.flatMap((invocation) => commitAttempts(consumer, invocation, eventId).map((write) => ({ invocation, write })));
    const committed = attempts.filter(({ write }) => write.applied);
    if (committed.length !== 1) return undefined;
    const applied = committed[0]!;
    const staged = handlerWrites(applied.write.body, consumer.inboxTable);
    const earlier = attempts
      .slice(0, attempts.indexOf(applied))
      .filter(({ write }) => !write.applied && handlerWrites(write.body, consumer.inboxTable) !== staged && !this.readAfresh(consumer, applied.invocation, applied.write, write));
    if (earlier.length === 0) return undefined;
    const failed = new Map<InvocationSeen, Map<string, number>>();
    for (const { invocation, write } of earlier) {
      const reasons = failed.get(invocation) ?? new Map<string, number>();
      reasons.set(notApplied(write), (reasons.get(notApplied(write)) ?? 0) + 1);
      failed.set(invocation, reasons);
    }
    const told = [...failed].map(([invocation, reasons]) => `${this.label(invocation, eventId)}: ${[...reasons].map(([reason, count]) => `${count} ${reason}`).join(', ')}`);
    const what = staged === '[]' ? 'none of the writes' : 'other writes than';
    return {
      text:
        `committed once, by ${this.label(applied.invocation, eventId)}, with ${what} an earlier run of its handler staged for it (commits not applied: ${told.join('; ')}): ` +
        'the committing run read state the earlier run left in memory (a module-level cache or set kept across invocations, outside the transaction) and skipped or under-applied the event; ' +
        'compute each write from the event and what the transaction reads, never from memory',
      cause: {
        kind: 'state-kept-between-attempts',
        subscriber: consumer.subscriber,
        eventIds: [eventId],
        invocations: [...[...failed.keys()].map((invocation) => this.reference(invocation, eventId, 'not-applied')), this.reference(applied.invocation, eventId, 'applied')],
        requests: requestReferences([...earlier, applied].map(({ write }) => write)),
        fix: fixFor('state-kept-between-attempts'),
      },
    };
  }

  /**
   * True when every item `other`'s staged writes and the commit's differ on was read by the committing invocation
   * before its commit (and after `other`, when it was the same invocation's): the commit was computed from a fresh read
   * (a read-then-write handler retried), not from memory.
   */
  private readAfresh(consumer: AttributedConsumer, invocation: InvocationSeen, commit: WriteSeen, other: WriteSeen): boolean {
    const actions = (body: string): Map<string, string[]> => {
      const byText = new Map<string, string[]>();
      let staged: unknown[];
      try {
        staged = JSON.parse(handlerWrites(body, consumer.inboxTable)) as unknown[];
      } catch {
        return byText;
      }
      for (const action of staged) byText.set(JSON.stringify(action), writtenItems(JSON.stringify({ TransactItems: [action] }), this.keyAttributes));
      return byText;
    };
    const committed = actions(commit.body);
    const refused = actions(other.body);
    const differing = [...[...committed].filter(([text]) => !refused.has(text)), ...[...refused].filter(([text]) => !committed.has(text))];
    if (differing.length === 0 || differing.some(([, items]) => items.length === 0)) return false;
    // read after the refused attempt when it was the same invocation's, else anywhere before the commit
    const after = invocation.writes.includes(other) ? other.index : -1;
    const readBefore = new Set(invocation.reads.filter((read) => read.index > after && read.index < commit.index).map((read) => read.item));
    return differing.every(([, items]) => items.every((item) => readBefore.has(item)));
  }

  /**
   * An event a transactional consumer committed once, whose commit wrote an item from a stale copy: the write (a Put,
   * or an update that sets values of the request only, both without a condition) names an item its execution
   * environment had read, and an invocation in another environment wrote the item after this environment's last read
   * or write of it and before the commit. That write was lost. The last contact in an earlier invocation: a copy kept in
   * memory (a module-level cache, stale once another environment writes); in the committing invocation: a read, then a
   * write without a condition (`lost-update`).
   */
  private lostUpdate(consumer: AttributedConsumer, functionKey: string, eventId: string): Told | undefined {
    if (consumer.mode !== 'transactional') return undefined;
    const invocations = this.invocations.get(functionKey) ?? [];
    const committed = invocations.flatMap((invocation) =>
      invocation.messages.some((message) => message.eventId === eventId) ? commitAttempts(consumer, invocation, eventId).filter((write) => write.applied).map((write) => ({ invocation, write })) : [],
    );
    if (committed.length !== 1) return undefined;
    const { invocation, write } = committed[0]!;
    const environment = invocation.environment;
    if (environment === undefined || write.answered === undefined) return undefined;
    const commitAt = write.answered;
    for (const item of unconditionedItems(write.body, consumer, this.keyAttributes)) {
      const ours = invocations.filter((candidate) => candidate.environment === environment);
      const readEarlier = ours.flatMap((candidate) => candidate.reads.filter((read) => read.item === item && (read.answered ?? Infinity) < commitAt).map((read) => ({ invocation: candidate, at: read.answered! })));
      if (readEarlier.length === 0) continue;
      const wroteEarlier = ours.flatMap((candidate) =>
        candidate.writes.filter((other) => other.applied && other !== write && (other.answered ?? Infinity) < commitAt && writtenItems(other.body, this.keyAttributes).includes(item)).map((other) => ({ invocation: candidate, at: other.answered! })),
      );
      const last = [...readEarlier, ...wroteEarlier].reduce((latest, contact) => (contact.at > latest.at ? contact : latest));
      const between = invocations
        .filter((candidate) => candidate.environment !== undefined && candidate.environment !== environment)
        .flatMap((candidate) =>
          candidate.writes.filter((other) => other.applied && other.answered !== undefined && other.answered > last.at && other.answered < commitAt && writtenItems(other.body, this.keyAttributes).includes(item)).map((other) => ({ invocation: candidate, at: other.answered! })),
        )
        .sort((a, b) => a.at - b.at)[0];
      if (between === undefined) continue;
      const [table, key] = [item.slice(0, item.indexOf('|')), item.slice(item.indexOf('|') + 1)];
      // read in the committing invocation itself: a read-then-write race; else a copy kept across invocations
      const kind: CauseKind = last.invocation === invocation ? 'lost-update' : 'state-kept-between-attempts';
      return {
        text:
          kind === 'lost-update'
            ? `committed once, by ${this.label(invocation, eventId)}, which wrote ${table} item ${key} computed from its own earlier read of it, ` +
              `although ${this.anyLabel(between.invocation)}, in another environment, had written that item after the read (a lost update: a value computed from a read and written without a condition overwrites what another invocation wrote in between); ` +
              fixFor('lost-update')
            : `committed once, by ${this.label(invocation, eventId)}, which wrote ${table} item ${key} from what its execution environment kept in memory since ${this.anyLabel(last.invocation)}, ` +
              `although ${this.anyLabel(between.invocation)}, in another environment, had written that item since (a lost update: a module-level cache kept across invocations is stale once another environment writes the item); ` +
              'compute each write from the event and what the transaction reads, never from memory',
        cause: {
          kind,
          subscriber: consumer.subscriber,
          eventIds: [eventId],
          invocations: [this.anyReference(between.invocation, 'overwritten'), this.reference(invocation, eventId, 'applied')],
          requests: requestReferences([write]),
          fix: fixFor(kind),
        },
      };
    }
    return undefined;
  }

  /**
   * The events a watched consumer carried that it emitted `eventId` for: an applied write put its outbox item, and that
   * write is the commit of the carried event (`tx.emit`), or a write of its own client made for it. None for an event no
   * watched consumer emitted (a producer's).
   */
  public emittedFor(eventId: string): readonly string[] {
    if (this.emitted === undefined) {
      const emitted = new Map<string, string[]>();
      for (const [functionKey, invocations] of this.invocations) {
        const consumer = this.consumers.get(functionKey);
        if (consumer === undefined) continue;
        for (const invocation of invocations) {
          const carried = [...new Set(invocation.messages.flatMap((message) => (message.eventId === undefined ? [] : [message.eventId])))];
          for (const write of invocation.writes.filter((candidate) => candidate.applied)) {
            const put = writtenOutboxEvents(write.operation, Buffer.from(write.body));
            if (put.length === 0) continue;
            const madeForWhich = this.emittedBy(functionKey, consumer, invocation, carried, write).map(({ eventId }) => eventId);
            for (const emittedId of put) emitted.set(emittedId, [...new Set([...(emitted.get(emittedId) ?? []), ...madeForWhich])]);
          }
        }
      }
      this.emitted = emitted;
    }
    return this.emitted.get(eventId) ?? [];
  }

  /**
   * The carried events an applied write that put outbox events was made for, each with whether the write is the
   * runtime's commit of it (its `tx.emit`): an aggregate's commit lists earlier events too, it was made for the events
   * it added; a write naming no inbox key (an outbox write of the handler's own) was made for the event it names.
   */
  private emittedBy(functionKey: string, consumer: AttributedConsumer, invocation: InvocationSeen, carried: readonly string[], write: WriteSeen): { eventId: string; inCommit: boolean }[] {
    if (consumer.mode === 'aggregate' && isAggregateCommit(write)) {
      return carried.filter((carriedId) => isCommitOf(consumer, write, carriedId) && this.addsToAggregate(functionKey, consumer, write, carriedId)).map((eventId) => ({ eventId, inCommit: true }));
    }
    return carried.flatMap((carriedId): { eventId: string; inCommit: boolean }[] =>
      isCommitOf(consumer, write, carriedId) ? [{ eventId: carriedId, inCommit: true }] : namesNoInbox(consumer, write) && madeFor(consumer, invocation, write, carriedId) ? [{ eventId: carriedId, inCommit: false }] : [],
    );
  }

  /**
   * The follow-ups a watched transactional or aggregate consumer committed: each applied write of its invocations that
   * put outbox events, once per event the invocation carried that it was made for (see {@link emittedFor}), in the
   * order DynamoDB applied them. None for another mode, or a function not watched.
   */
  public followUps(functionKey: string): FollowUpWrite[] {
    const consumer = this.consumers.get(functionKey);
    if (consumer === undefined || (consumer.mode !== 'transactional' && consumer.mode !== 'aggregate')) return [];
    const found: { answered: number; followUp: FollowUpWrite }[] = [];
    for (const invocation of this.invocations.get(functionKey) ?? []) {
      const carried = [...new Set(invocation.messages.flatMap((message) => (message.eventId === undefined ? [] : [message.eventId])))];
      for (const write of invocation.writes) {
        if (!write.applied) continue;
        const eventIds = writtenOutboxEvents(write.operation, Buffer.from(write.body));
        if (eventIds.length === 0) continue;
        for (const { eventId, inCommit } of this.emittedBy(functionKey, consumer, invocation, carried, write)) {
          found.push({
            answered: write.answered ?? Number.MAX_SAFE_INTEGER,
            followUp: { receivedEventId: eventId, invocation: this.reference(invocation, eventId, 'applied'), eventIds, inCommit, request: requestReferences([write])[0]! },
          });
        }
      }
    }
    // a stable sort: a write whose answer the run did not place keeps the order of its invocation's end
    return found.sort((a, b) => a.answered - b.answered).map(({ followUp }) => followUp);
  }

  private story(consumer: AttributedConsumer, functionKey: string, eventId: string): Told | undefined {
    const carrying = (this.invocations.get(functionKey) ?? []).filter((invocation) => invocation.messages.some((message) => message.eventId === eventId));
    const told = this.storyOfApplications(consumer, functionKey, eventId, carrying);
    // an HTTP call made outside the lease (or a step): the cause when the applications the run saw name no mistake (a
    // window, lease or crash story explains the count; a call every delivery made, such as a token, is no effect then)
    const outside = consumer.mode === 'lease' || consumer.mode === 'multi-step' ? this.outsideLease(consumer, carrying, eventId) : undefined;
    return told !== undefined && told.cause.kind !== 'applied-again' ? told : (outside ?? told);
  }

  /** The event's story from its applications, the calls outside the lease left out (see {@link story}). */
  private storyOfApplications(consumer: AttributedConsumer, functionKey: string, eventId: string, carrying: readonly InvocationSeen[]): Told | undefined {
    const applications = carrying.flatMap((invocation) => applicationsIn(consumer, invocation, eventId, (write) => this.addsToAggregate(functionKey, consumer, write, eventId)));
    if (applications.length >= 2) {
      const again = applications.slice(1).map((application, index) => this.again(consumer, functionKey, applications[index]!, application, eventId));
      // the first cause that names a mistake (not the plain "applied again") is the violation's
      const named = again.find((candidate) => candidate.kind !== 'applied-again') ?? again[0]!;
      const invocations = applications.map((application, index) => this.reference(application.invocation, eventId, index === 0 ? 'applied' : 'applied-again'));
      return {
        text: `applied by ${this.label(applications[0]!.invocation, eventId)}${describeWrites(applications[0]!)}; ${again.map((candidate) => candidate.text).join('; ')}`,
        cause: {
          kind: named.kind,
          subscriber: consumer.subscriber,
          eventIds: [eventId],
          invocations,
          requests: named.requests ?? requestReferences(applications.flatMap((application) => application.writes)),
          ...(named.setting === undefined ? {} : { setting: named.setting }),
          ...(named.aggregate === undefined ? {} : { aggregate: named.aggregate }),
          fix: named.fix,
        },
        ...(named.newer === undefined ? {} : { newer: named.newer }),
      };
    }
    // one application, a write in it applied twice: the SDK resent a write whose response was lost (within the invocation)
    if (applications.length === 1 && applications[0]!.kind !== 'commit') {
      const resent = sdkResent(applications[0]!.writes);
      if (resent !== undefined && applications[0]!.kind === 'own-client') {
        // a transactional or aggregate consumer's own client: the write outside the transaction is the mistake
        const invocation = applications[0]!.invocation;
        return {
          text:
            `applied ${timesText(resends(applications[0]!.writes, resent).applied)} by ${this.label(invocation, eventId)}: the ${resent.operation} on ${resent.tables.join(', ')} it sent with its own client${consumer.mode === 'aggregate' ? ', in apply(),' : ''} was applied by DynamoDB, ${lostResponsesText(resends(applications[0]!.writes, resent).lost)} ` +
            `(a write outside the transaction): ${fixFor('write-outside-transaction')}`,
          cause: {
            kind: 'write-outside-transaction',
            subscriber: consumer.subscriber,
            eventIds: [eventId],
            invocations: [this.reference(invocation, eventId, 'applied')],
            requests: requestReferences(applications[0]!.writes.filter((write) => write.body === resent.body)),
            fix: fixFor('write-outside-transaction'),
          },
        };
      }
      if (resent !== undefined) {
        const invocation = applications[0]!.invocation;
        return {
          text:
            `applied ${timesText(resends(applications[0]!.writes, resent).applied)} by ${this.label(invocation, eventId)}: its ${resent.operation} on ${resent.tables.join(', ')} was applied by DynamoDB, ${lostResponsesText(resends(applications[0]!.writes, resent).lost)} ` +
            `(a non-idempotent write re-run by an SDK retry after a lost response): ${fixFor('sdk-retry-after-lost-response', consumer.mode)}`,
          cause: {
            kind: 'sdk-retry-after-lost-response',
            subscriber: consumer.subscriber,
            eventIds: [eventId],
            invocations: [this.reference(invocation, eventId, 'applied')],
            requests: requestReferences(applications[0]!.writes.filter((write) => write.body === resent.body)),
            fix: fixFor('sdk-retry-after-lost-response', consumer.mode),
          },
        };
      }
    }
    // a lease or multi-step effect the run cannot see (an HTTP call): its completed inbox record claimed again after the window
    const reclaimed = applications.length < 2 ? this.reclaimedAfterWindow(consumer, carrying, eventId) : undefined;
    if (reclaimed !== undefined) return reclaimed;
    // one commit, a count too high: the handler ran for it more than once, and what it kept carried the earlier runs
    const attempts = carrying.flatMap((invocation) => commitAttempts(consumer, invocation, eventId).map((write) => ({ invocation, write })));
    const committing = attempts.find(({ write }) => write.applied);
    // a run whose writes differ only where the committing run read the items afresh is a correct read-then-write retry
    const kept = committing === undefined ? attempts : attempts.filter((attempt) => attempt === committing || !this.readAfresh(consumer, committing.invocation, committing.write, attempt.write));
    const bodies = new Set(kept.map(({ write }) => handlerWrites(write.body, consumer.inboxTable)));
    if (applications.length === 1 && bodies.size > 1) {
      const failed = new Map<InvocationSeen, Map<string, number>>();
      for (const { invocation, write } of attempts.filter((attempt) => !attempt.write.applied)) {
        const reasons = failed.get(invocation) ?? new Map<string, number>();
        reasons.set(notApplied(write), (reasons.get(notApplied(write)) ?? 0) + 1);
        failed.set(invocation, reasons);
      }
      const told = [...failed].map(([invocation, reasons]) => `${this.label(invocation, eventId)}: ${[...reasons].map(([reason, count]) => `${count} ${reason}`).join(', ')}`);
      const text =
        `committed once, by ${this.label(applications[0]!.invocation, eventId)}, yet its handler ran ${bodies.size} times with different writes` +
        (told.length === 0 ? '' : ` (commits not applied: ${told.join('; ')})`) +
        ': the committed values carried the work of the runs that did not commit, so the handler keeps state between invocations or attempts ' +
        '(a module-level cache written back); compute each write from the event and what the transaction reads, never from memory';
      return {
        text,
        cause: {
          kind: 'state-kept-between-attempts',
          subscriber: consumer.subscriber,
          eventIds: [eventId],
          invocations: [...[...failed.keys()].map((invocation) => this.reference(invocation, eventId, 'not-applied')), this.reference(applications[0]!.invocation, eventId, 'applied')],
          requests: requestReferences(attempts.map(({ write }) => write)),
          fix: fixFor('state-kept-between-attempts'),
        },
      };
    }
    return undefined;
  }

  /**
   * A lease or multi-step consumer's HTTP calls made for the event outside every lease its invocations held, repeated
   * (by two invocations, or twice by one): the `effect-outside-lease` (`effect-outside-step`) cause; undefined when
   * there is none (see ./outside-calls.ts).
   */
  private outsideLease(consumer: AttributedConsumer, carrying: readonly InvocationSeen[], eventId: string): Told | undefined {
    const made = carrying.flatMap((invocation) => {
      const carried = [...new Set(invocation.messages.flatMap((message) => (message.eventId === undefined ? [] : [message.eventId])))];
      const subjects = new Map(invocation.messages.flatMap((message) => (message.eventId === undefined || message.subject === undefined ? [] : [[message.eventId, message.subject] as const])));
      const runtimeWrites: RuntimeWrite[] = invocation.writes.flatMap((write) => {
        const event = inboxEventOf(consumer, write, carried);
        return event === undefined ? [] : [{ eventId: event, sequence: write.sequence, applied: write.applied, body: write.body }];
      });
      // the invocation held a lease it claimed for the event (a claim, a takeover): its handle ran too
      const leased = runtimeWrites.some((write) => write.eventId === eventId && write.applied && holdsLease(write.body));
      return callsOutsideLease(invocation.calls, runtimeWrites, carried, subjects)
        .filter((call) => call.eventIds.includes(eventId))
        .map((call) => ({ invocation, call, leased }));
    });
    const step = consumer.mode === 'multi-step';
    const told = leaseCallsText(made.map(({ invocation, call, leased }) => ({ invocation: this.label(invocation, eventId), call, leased })), step);
    if (told === undefined) return undefined;
    const kind: CauseKind = step ? 'effect-outside-step' : 'effect-outside-lease';
    const invocations = [...new Set(told.made.map(({ index }) => made[index]!.invocation))];
    return {
      text: `${told.text}: ${fixFor(kind)}`,
      cause: {
        kind,
        subscriber: consumer.subscriber,
        eventIds: [eventId],
        invocations: invocations.map((invocation, index) => this.reference(invocation, eventId, index === 0 ? 'applied' : 'applied-again')),
        requests: [],
        calls: told.calls,
        fix: fixFor(kind),
      },
    };
  }

  /**
   * Whether an aggregate's applied commit listing the event added it to its item's processed ids: the item's previous
   * applied commit did not list it. Previous in the order DynamoDB applied them (its answers; the order invocations ended,
   * then requests were sent, when an answer's place is unknown): invocations run at once, and one that ends first may
   * have committed after another's commit added the event. A later event's commit keeps the earlier ids in the list; it
   * is no application of them (the runtime skipped them, as listed).
   */
  private addsToAggregate(functionKey: string, consumer: AttributedConsumer, write: WriteSeen, eventId: string): boolean {
    const ordered = this.aggregateCommits(functionKey, write);
    const at = ordered.indexOf(write);
    const previous = at > 0 ? ordered[at - 1] : undefined;
    return previous === undefined || !isCommitOf(consumer, previous, eventId);
  }

  /**
   * The applied commits of the aggregate item `write` commits to, `write` among them, in the order DynamoDB applied them
   * (see {@link addsToAggregate}).
   */
  private aggregateCommits(functionKey: string, write: WriteSeen): WriteSeen[] {
    const item = itemKeyOf([write], this.keyAttributes);
    const commits = (this.invocations.get(functionKey) ?? []).flatMap((invocation) =>
      invocation.writes.filter((candidate) => candidate === write || (candidate.applied && isAggregateCommit(candidate) && itemKeyOf([candidate], this.keyAttributes) === item)),
    );
    // a stable sort: the writes whose answer the run did not place keep the order of their invocations' ends
    const ordered = commits.every((candidate) => candidate.answered !== undefined) ? [...commits].sort((a, b) => a.answered! - b.answered!) : commits;
    return ordered;
  }

  /**
   * An aggregate's commit of the event applied again because the item's processed list had forgotten the earlier one
   * (./processed-list-overrun.ts): the `processed-list-overrun` story; undefined when the commits do not show it.
   */
  private overrun(consumer: AttributedConsumer, functionKey: string, earlier: Application, later: Application, eventId: string, by: string): Again | undefined {
    const [first, again] = [earlier, later].map((application) => application.writes.find((write) => write.applied && isAggregateCommit(write) && isCommitOf(consumer, write, eventId)));
    if (first === undefined || again === undefined) return undefined;
    const ordered = this.aggregateCommits(functionKey, again);
    const overrun = processedListOverrun(
      ordered.map((write) => write.body),
      ordered.indexOf(first),
      ordered.indexOf(again),
      eventId,
    );
    const aggregate = aggregateReference(again, this.keyAttributes);
    if (overrun === undefined || aggregate === undefined) return undefined;
    return {
      kind: 'processed-list-overrun',
      fix: fixFor('processed-list-overrun'),
      setting: { name: PROCESSED_LIST_SETTING, value: overrun.bound, newerApplied: overrun.newer.length },
      aggregate,
      newer: overrun.newer,
      text: `${by}: ${processedListOverrunText(overrun, `${aggregate.table} ${JSON.stringify(aggregate.key)}`, this.label(earlier.invocation, eventId))}`,
    };
  }

  /**
   * The events applied to the aggregate of `eventId` between its first application and the one that applied it again
   * because the aggregate's processed list had forgotten it (`processed-list-overrun`); none when no such story is told.
   */
  public appliedBetween(functionKey: string, eventId: string): readonly string[] {
    const consumer = this.consumers.get(functionKey);
    return consumer === undefined ? [] : (this.story(consumer, functionKey, eventId)?.newer ?? []);
  }

  /** How `later` came to apply the event again after `earlier`. */
  private again(consumer: AttributedConsumer, functionKey: string, earlier: Application, later: Application, eventId: string): Again {
    const by = `applied again by ${this.label(later.invocation, eventId)}`;
    if (later.kind === 'own-client') {
      const outbox = consumer.outboxTable !== undefined && later.writes.some((write) => write.tables.includes(consumer.outboxTable!));
      const kind: CauseKind = outbox ? 'outbox-write-outside-transaction' : 'write-outside-transaction';
      // the same invocation ran the handler again: its commit was refused and the runtime retried it (contention retry)
      const rerun = later.rerunAfter !== undefined && later.invocation === earlier.invocation;
      const after = rerun
        ? `ran the handler once and its commit was ${notApplied(later.rerunAfter!)}, so the runtime ran the handler again in the same invocation to retry the commit`
        : endOf(earlier.invocation, eventId);
      return {
        kind,
        fix: fixFor(kind),
        requests: requestReferences(later.writes),
        text:
          `${by} with its own client (${siteList(later.writes)}), after ${this.label(earlier.invocation, eventId)} ${after}: ` +
          (consumer.mode === 'aggregate'
            ? 'a write outside the transaction, in apply(), is not undone when the commit fails, nor stopped by the processed ids when the event comes again (return the change as the state from apply() instead)'
            : 'a write outside the transaction is not undone when the commit fails, nor stopped by the inbox record when the event comes again (its own client: write through the transaction)'),
      };
    }
    if (earlier.kind === 'commit' && later.kind === 'commit') {
      // a commit leaves the inbox record (or the aggregate's id) that answers every later copy: what let this one through
      const delaySeconds = Math.round((later.invocation.atMs - earlier.invocation.atMs) / 1000);
      // the window the runtime used: the inbox record's expiry it wrote (a window set in code too), else the environment's
      const window = windowUsed(consumer, writtenWindowSeconds(consumer, earlier, eventId));
      if (window !== undefined && delaySeconds > window.seconds) {
        return {
          kind: 'deduplication-window-expired',
          fix: fixFor('deduplication-window-expired'),
          setting: { name: window.setting, value: window.seconds, observedDelay: delaySeconds },
          text: `${by} after the inbox record of the apply by ${this.label(earlier.invocation, eventId)} expired (window ${window.seconds} s, redelivered after ${delaySeconds} s): the deduplication window must cover every redelivery`,
        };
      }
      const [first, second] = [itemKeyOf(earlier.writes, this.keyAttributes), itemKeyOf(later.writes, this.keyAttributes)];
      if (consumer.mode === 'aggregate' && first !== second) {
        return {
          kind: 'aggregate-key-differs',
          fix: fixFor('aggregate-key-differs'),
          text: `${by} to another item: ${first ?? 'unknown'} first, then ${second ?? 'unknown'} (the aggregate's key differs between invocations of one event: located from something other than the event, e.g. the processing time)`,
        };
      }
      // the aggregate's processed list had forgotten the event: its documented bound, not a mistake in the handler
      const overrun = consumer.mode === 'aggregate' ? this.overrun(consumer, functionKey, earlier, later, eventId, by) : undefined;
      if (overrun !== undefined) return overrun;
      return { kind: 'applied-again', fix: fixFor('applied-again'), text: `${by}: its commit was applied although ${this.label(earlier.invocation, eventId)} had committed it` };
    }
    if (consumer.mode === 'transactional' || consumer.mode === 'aggregate') {
      // an earlier run's write with its own client, then the commit: the own client is what applied it twice (a
      // transactional or aggregate consumer has no steps, leases or calls to key: other modes' advice does not apply)
      if (earlier.kind === 'own-client') {
        const outbox = consumer.outboxTable !== undefined && earlier.writes.some((write) => write.tables.includes(consumer.outboxTable!));
        const kind: CauseKind = outbox ? 'outbox-write-outside-transaction' : 'write-outside-transaction';
        return {
          kind,
          fix: fixFor(kind),
          requests: requestReferences(earlier.writes),
          text:
            `${by} through its commit, after ${this.label(earlier.invocation, eventId)} wrote with its own client (${siteList(earlier.writes)}) and ${endOf(earlier.invocation, eventId)}: ` +
            (consumer.mode === 'aggregate'
              ? 'a write outside the transaction, in apply(), is not undone when the commit fails (return the change as the state from apply() instead)'
              : 'a write outside the transaction is not undone when the commit fails (its own client: write through the transaction)'),
        };
      }
      return { kind: 'applied-again', fix: fixFor('applied-again'), text: `${by}, after ${this.label(earlier.invocation, eventId)} ${endOf(earlier.invocation, eventId)}` };
    }
    // the scenario's operator resolved the event's blocked step TRY_AGAIN after the earlier application: its decision
    // let the redelivery run the effect again, whatever fault had blocked the step
    const retried = this.resolutions.find(
      (resolution) =>
        resolution.status === 'TRY_AGAIN' &&
        resolution.subscriber === consumer.subscriber &&
        resolution.eventId === eventId &&
        resolution.afterInvocations >= earlier.invocation.order &&
        resolution.afterInvocations < later.invocation.order,
    );
    if (retried !== undefined) {
      return {
        kind: 'operator-retried-applied-step',
        fix: fixFor('operator-retried-applied-step'),
        text:
          `${by}, after the scenario's operator resolved the event's blocked step '${retried.step}' TRY_AGAIN (at +${Math.round((retried.atMs - this.startMs) / 1000)} s), ` +
          `although ${this.label(earlier.invocation, eventId)} had applied its effect${describeWrites(earlier)}: the operator's decision ran the effect again`,
      };
    }
    // a lease or multi-step effect run again after the invocation that completed it, or crashed after it: its inbox
    // record (completed, or the claim a crash left, which expires at the window too) had expired, and the event was claimed afresh
    const delaySeconds = Math.round((later.invocation.atMs - earlier.invocation.atMs) / 1000);
    const left = leftRecord(earlier.invocation, eventId);
    // the window the runtime wrote on the event's processing record (a window set in code too), else the environment's
    const window = windowUsed(consumer, writtenRecordWindowSeconds(consumer, [earlier.invocation, later.invocation], eventId));
    if (window !== undefined && delaySeconds > window.seconds && left !== undefined) {
      return {
        kind: 'deduplication-window-expired',
        fix: fixFor('deduplication-window-expired'),
        setting: { name: window.setting, value: window.seconds, observedDelay: delaySeconds },
        text: `${by} after the inbox record of ${this.label(earlier.invocation, eventId)}, ${left}, expired (window ${window.seconds} s, redelivered after ${delaySeconds} s): the deduplication window must cover every redelivery`,
      };
    }
    const lost = earlier.writes.find((write) => write.fault === 'lose-response');
    if (lost !== undefined) {
      return {
        kind: 'lost-response-retried',
        fix: fixFor('lost-response-retried'),
        requests: requestReferences([lost]),
        text: `${by}: the response of ${this.label(earlier.invocation, eventId)}'s ${lost.operation} on ${lost.tables.join(', ')} was lost after DynamoDB applied it, and the failure was retried (a lost response retried: an unknown outcome must not run the effect again)`,
      };
    }
    // the earlier invocation crashed after its effect was applied: at the effect's write once applied, or at a later
    // write (a lease's completion it died before sending)
    const outcome = earlier.invocation.outcome;
    if (outcome.kind === 'crashed' && (outcome.afterCommit || earlier.writes.some((write) => write.applied && write.index < outcome.atRequest))) {
      return {
        kind: 'redelivery-after-crash',
        fix: fixFor('redelivery-after-crash'),
        text: `${by}: ${this.label(earlier.invocation, eventId)} crashed after DynamoDB applied its write, and the redelivery ran it again (a redelivery after a crash)`,
      };
    }
    return { kind: 'applied-again', fix: fixFor('applied-again', consumer.mode), text: `${by}, after ${this.label(earlier.invocation, eventId)} ${endOf(earlier.invocation, eventId)}` };
  }

  /**
   * A lease or multi-step consumer's inbox record of the event claimed again (an applied write naming its inbox key) by an
   * invocation later than the window after one that completed the event, or crashed after claiming it: the record had
   * expired, and the effect ran again.
   */
  private reclaimedAfterWindow(consumer: AttributedConsumer, carrying: readonly InvocationSeen[], eventId: string): Told | undefined {
    const claimed = carrying.filter((invocation) => invocation.writes.some((write) => write.applied && isCommitOf(consumer, write, eventId)));
    // the window the runtime wrote on the event's processing record (a window set in code too), else the environment's
    const used = windowUsed(consumer, writtenRecordWindowSeconds(consumer, claimed, eventId));
    const window = used?.seconds;
    if (window === undefined || (consumer.mode !== 'lease' && consumer.mode !== 'multi-step')) return undefined;
    for (const [index, completed] of claimed.entries()) {
      const left = leftRecord(completed, eventId);
      if (left === undefined) continue;
      const again = claimed.slice(index + 1).find((later) => (later.atMs - completed.atMs) / 1000 > window);
      if (again === undefined) continue;
      const delaySeconds = Math.round((again.atMs - completed.atMs) / 1000);
      return {
        text: `${left === 'which completed it' ? 'completed' : 'claimed, then left by a crash,'} by ${this.label(completed, eventId)}; claimed and run again by ${this.label(again, eventId)} after its inbox record expired (window ${window} s, redelivered after ${delaySeconds} s): the deduplication window must cover every redelivery`,
        cause: {
          kind: 'deduplication-window-expired',
          subscriber: consumer.subscriber,
          eventIds: [eventId],
          invocations: [this.reference(completed, eventId, 'applied'), this.reference(again, eventId, 'applied-again')],
          requests: requestReferences(again.writes.filter((write) => write.applied && isCommitOf(consumer, write, eventId))),
          setting: { name: used?.setting ?? ENVIRONMENT_WINDOW_SETTING, value: window, observedDelay: delaySeconds },
          fix: fixFor('deduplication-window-expired'),
        },
      };
    }
    return undefined;
  }

  private reference(invocation: InvocationSeen, eventId: string, role: InvocationReference['role']): InvocationReference {
    const receive = invocation.messages.find((message) => message.eventId === eventId)?.receiveCount;
    return { number: invocation.number, ...(receive === undefined ? {} : { receive }), atSeconds: Math.round((invocation.atMs - this.startMs) / 1000), role };
  }

  /** An invocation's reference, told by its first message (it need not carry the violation's event). */
  private anyReference(invocation: InvocationSeen, role: InvocationReference['role']): InvocationReference {
    const receive = invocation.messages[0]?.receiveCount;
    return { number: invocation.number, ...(receive === undefined ? {} : { receive }), atSeconds: Math.round((invocation.atMs - this.startMs) / 1000), role };
  }

  /** An invocation in words, told by its first message. */
  private anyLabel(invocation: InvocationSeen): string {
    return `invocation #${invocation.number} (receive ${invocation.messages[0]?.receiveCount ?? '?'}, at +${Math.round((invocation.atMs - this.startMs) / 1000)} s)`;
  }

  private label(invocation: InvocationSeen, eventId: string): string {
    const receive = invocation.messages.find((message) => message.eventId === eventId)?.receiveCount;
    return `invocation #${invocation.number} (receive ${receive ?? '?'}, at +${Math.round((invocation.atMs - this.startMs) / 1000)} s)`;
  }
}

/** The event's inbox key as a request body names it. */
function inboxKeyText(consumer: AttributedConsumer, eventId: string): string {
  return JSON.stringify({ S: `${consumer.subscriber}${INBOX_ITEM.KEY_SEPARATOR}${eventId}` }).slice(1, -1);
}

/** Whether a write is the runtime's commit of the event (see the module comment). */
function isCommitOf(consumer: AttributedConsumer, write: WriteSeen, eventId: string): boolean {
  if (consumer.mode === 'aggregate') return write.body.includes(JSON.stringify(`${eventId}${AGGREGATE_ITEM.PROCESSED_MESSAGE_SEPARATOR}`).slice(0, -1));
  return consumer.inboxTable !== undefined && write.tables.includes(consumer.inboxTable) && write.body.includes(inboxKeyText(consumer, eventId));
}

/** The request bodies of `writes` that were applied and commit `eventId` for `consumer`, parsed (a body that is not JSON is left out). */
function* appliedCommitBodies(consumer: AttributedConsumer, writes: readonly WriteSeen[], eventId: string): Generator<unknown> {
  for (const write of writes) {
    if (!write.applied || !isCommitOf(consumer, write, eventId)) continue;
    let body: unknown;
    try {
      body = JSON.parse(write.body);
    } catch {
      continue;
    }
    yield body;
  }
}

/**
 * The deduplication window a commit's inbox record was written with, in whole seconds: its expiry (`expiresAt`, epoch
 * seconds) less the time of the invocation that committed it; undefined when no applied write of `application` puts
 * the event's inbox record with an expiry.
 */
function writtenWindowSeconds(consumer: AttributedConsumer, application: Application, eventId: string): number | undefined {
  for (const body of appliedCommitBodies(consumer, application.writes, eventId)) {
    const items = (body as { TransactItems?: { Put?: { Item?: Record<string, { S?: string; N?: string }> } }[] }).TransactItems ?? [];
    for (const { Put } of items) {
      const item = Put?.Item;
      if (item?.[TABLE_SCHEMA.PARTITION_KEY]?.S !== recordKey(consumer.subscriber, eventId)) continue;
      const expiresAt = Number(item[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]?.N);
      if (Number.isFinite(expiresAt)) return Math.round(expiresAt - application.invocation.atMs / 1000);
    }
  }
  return undefined;
}

/**
 * The deduplication window a lease or multi-step consumer's processing record of the event was written with, in
 * seconds: the `deduplicationWindowSeconds` its applied claim among `invocations` put on the record (the runtime writes
 * the window it runs with there, however it was configured); undefined when none of them claimed it.
 */
function writtenRecordWindowSeconds(consumer: AttributedConsumer, invocations: readonly InvocationSeen[], eventId: string): number | undefined {
  for (const invocation of invocations) {
    for (const body of appliedCommitBodies(consumer, invocation.writes, eventId)) {
      const item = (body as { Item?: Record<string, { S?: string; N?: string }> }).Item;
      if (item?.[TABLE_SCHEMA.PARTITION_KEY]?.S !== recordKey(consumer.subscriber, eventId)) continue;
      const seconds = Number(item[PROCESSING_RECORD.DEDUPLICATION_WINDOW_SECONDS_ATTRIBUTE]?.N);
      if (Number.isFinite(seconds) && seconds > 0) return seconds;
    }
  }
  return undefined;
}

/** The environment's name of the deduplication window; a window the runtime wrote that differs from it was set in the handler's `config`. */
const ENVIRONMENT_WINDOW_SETTING = 'IEF_DEDUPLICATION_WINDOW_SECONDS';
/** The window's name in the consumer factories' `config` (`createTransactionalConsumer`, `createLeaseConsumer`, `createMultiStepConsumer`). */
const CODE_WINDOW_SETTING = 'deduplicationWindowSeconds';

/**
 * How far a window read from an inbox record's expiry (less the time of the invocation that wrote it, which the run
 * tells at the invocation's end) may be from the environment's and still be the environment's.
 */
const WRITTEN_WINDOW_TOLERANCE_SECONDS = 5;

/**
 * The deduplication window the consumer ran with and the setting to name: the window the runtime wrote (`written`)
 * when the run saw it, else the environment's; named as the environment's unless the written one differs from it.
 */
function windowUsed(consumer: AttributedConsumer, written: number | undefined): { readonly seconds: number; readonly setting: string } | undefined {
  const environment = consumer.windowSeconds;
  if (environment !== undefined && (written === undefined || Math.abs(written - environment) <= WRITTEN_WINDOW_TOLERANCE_SECONDS)) {
    return { seconds: environment, setting: ENVIRONMENT_WINDOW_SETTING };
  }
  return written === undefined ? undefined : { seconds: written, setting: CODE_WINDOW_SETTING };
}

/** Whether a write is an aggregate consumer's commit (of any event): it writes the processed-ids list. */
function isAggregateCommit(write: WriteSeen): boolean {
  return write.body.includes(JSON.stringify(AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE));
}

function namesNoInbox(consumer: AttributedConsumer, write: WriteSeen): boolean {
  return consumer.inboxTable === undefined || !write.tables.includes(consumer.inboxTable);
}

/** The event's commit attempts in an invocation: those sent, applied or not (transactional mode). */
function commitAttempts(consumer: AttributedConsumer, invocation: InvocationSeen, eventId: string): WriteSeen[] {
  if (consumer.mode !== 'transactional') return [];
  return invocation.writes.filter((write) => isCommitOf(consumer, write, eventId));
}

/** The inbox key's event of a write of the runtime (a commit, a claim), when it names one of `eventIds`. */
function inboxEventOf(consumer: AttributedConsumer, write: WriteSeen, eventIds: readonly string[]): string | undefined {
  return eventIds.find((eventId) => isCommitOf(consumer, write, eventId));
}

/**
 * Whether a write naming no inbox key was made for the event: its body names the event's id; else (a body naming no
 * event of the batch) the invocation carried only this event, or the body names the subject (aggregate) of exactly one
 * event of the batch (a handler writes about its aggregate: a batch's handlers may all run before the first commit),
 * or the nearest write of the runtime names it: the next commit attempt (a transactional handler writes before its
 * commit), the previous claim (a lease effect runs after it).
 */
function madeFor(consumer: AttributedConsumer, invocation: InvocationSeen, write: WriteSeen, eventId: string): boolean {
  const carried = [...new Set(invocation.messages.flatMap((message) => (message.eventId === undefined ? [] : [message.eventId])))];
  const named = carried.filter((candidate) => mentions(write.body, candidate));
  if (named.length > 0) return named.includes(eventId);
  if (carried.length === 1) return carried[0] === eventId;
  const bySubject = carried.filter((candidate) => {
    const subject = invocation.messages.find((message) => message.eventId === candidate)?.subject;
    return subject !== undefined && mentions(write.body, subject);
  });
  if (bySubject.length === 1) return bySubject[0] === eventId;
  const runtimeWrites = invocation.writes.filter((candidate) => !namesNoInbox(consumer, candidate));
  const nearest =
    consumer.mode === 'transactional'
      ? runtimeWrites.find((candidate) => candidate.index > write.index)
      : [...runtimeWrites].reverse().find((candidate) => candidate.index < write.index);
  return nearest !== undefined && inboxEventOf(consumer, nearest, carried) === eventId;
}

/** Whether `body` names `eventId` whole (not as the start of a longer id: `order-1` in `order-10`). */
function mentions(body: string, eventId: string): boolean {
  return new RegExp(`${eventId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(body);
}

/**
 * The applications of the event in one invocation (see the module comment). `adds` tells whether an aggregate's commit
 * listing the event added it to its item's processed ids (see {@link ApplyAttribution.addsToAggregate}).
 */
function applicationsIn(consumer: AttributedConsumer, invocation: InvocationSeen, eventId: string, adds: (write: WriteSeen) => boolean): Application[] {
  const outside = invocation.writes.filter((write) => write.applied && namesNoInbox(consumer, write) && madeFor(consumer, invocation, write, eventId));
  if (consumer.mode === 'transactional' || consumer.mode === 'aggregate') {
    // a write of its own client happens at every run of the handler, whatever the inbox says: an application each time,
    // and a refused commit retried in the invocation (contention retry) runs the handler again: one application per run
    if (consumer.mode === 'transactional' && outside.length > 0) return ownClientRuns(invocation, outside, commitAttempts(consumer, invocation, eventId));
    // an aggregate's commit names no inbox either: its own-client writes are those that carry no processed-ids list
    const ownClient = consumer.mode === 'aggregate' ? outside.filter((write) => !isAggregateCommit(write)) : [];
    if (ownClient.length > 0) return ownClientRuns(invocation, ownClient, invocation.writes.filter((write) => isCommitOf(consumer, write, eventId)));
    // an aggregate's commits of later events (later in the batch, or in a later invocation that carried the event again
    // and skipped it) list the event too: its commit is the one that added it to the item's processed ids
    const commit = invocation.writes.find((write) => write.applied && isCommitOf(consumer, write, eventId) && (consumer.mode !== 'aggregate' || adds(write)));
    return commit === undefined ? [] : [{ invocation, kind: 'commit', writes: [commit] }];
  }
  return outside.length === 0 ? [] : [{ invocation, kind: 'effect', writes: outside }];
}

/**
 * A transactional or aggregate consumer's own-client writes for an event, one application per run of its handler (or
 * `apply()`): a run ends with a commit attempt, so the writes between two attempts are one run's.
 */
function ownClientRuns(invocation: InvocationSeen, outside: readonly WriteSeen[], attempts: readonly WriteSeen[]): Application[] {
  const runs = new Map<number, WriteSeen[]>();
  for (const write of outside) {
    const run = attempts.filter((attempt) => attempt.index < write.index).length;
    runs.set(run, [...(runs.get(run) ?? []), write]);
  }
  return [...runs.entries()]
    .sort(([a], [b]) => a - b)
    .map(([run, writes], index) => {
      const before = attempts[run - 1];
      return index > 0 && before !== undefined && !before.applied ? { invocation, kind: 'own-client' as const, writes, rerunAfter: before } : { invocation, kind: 'own-client' as const, writes };
    });
}

function siteList(writes: readonly WriteSeen[]): string {
  const counts = new Map<string, number>();
  for (const write of writes) for (const table of write.tables) counts.set(`${table}|${write.operation}`, (counts.get(`${table}|${write.operation}`) ?? 0) + 1);
  return [...counts].map(([site, count]) => `${site.split('|')[0]}: ${count} ${site.split('|')[1]}`).join(', ');
}

function describeWrites(application: Application): string {
  return application.kind === 'commit' ? '' : ` (${siteList(application.writes)})`;
}

/** What became of the event in an invocation, in words. */
function endOf(invocation: InvocationSeen, eventId: string): string {
  const failure = describeFailure(invocation.outcome);
  if (failure !== undefined) return failure.replace(/^the (function|invocation) /, '');
  const message = invocation.messages.find((candidate) => candidate.eventId === eventId);
  return message !== undefined && invocation.failedMessageIds.has(message.messageId) ? 'reported the record as failed' : 'returned';
}

/**
 * How a lease or multi-step invocation left the event's inbox record for the next delivery: completed (`returned`), or
 * claimed by a process that crashed (the claim stays until it expires, at the deduplication window like a completed
 * record); undefined when it released it (it reported the record as failed, or threw: the next delivery claims afresh
 * whatever the window).
 */
function leftRecord(invocation: InvocationSeen, eventId: string): string | undefined {
  if (invocation.outcome.kind === 'crashed') return 'which crashed after the effect';
  return endOf(invocation, eventId) === 'returned' ? 'which completed it' : undefined;
}

function notApplied(write: WriteSeen): string {
  switch (write.fault) {
    case 'conflict':
      return 'refused by a transaction conflict';
    case 'crash-before':
      return 'crashed before it was sent';
    case 'throttle':
      return 'throttled';
    default:
      return 'refused';
  }
}

/**
 * The write the SDK resent after a lost response, within one application: an applied write whose response was lost,
 * followed by an applied write of the same body (the SDK retries a request with the same payload).
 */
/** How many times the SDK's resends of `resent` (same body) were applied, and how many of their responses were lost. */
function resends(writes: readonly WriteSeen[], resent: WriteSeen): { readonly applied: number; readonly lost: number } {
  const same = writes.filter((write) => write.applied && write.body === resent.body);
  return { applied: same.length, lost: same.filter((write) => write.fault === 'lose-response').length };
}

/** `twice`, `3 times`. */
function timesText(times: number): string {
  return times === 2 ? 'twice' : `${times} times`;
}

/** How the SDK came to resend a write: its response lost once, or several times. */
function lostResponsesText(lost: number): string {
  return lost === 1 ? "its response lost, and the SDK's retry sent it again" : `its response lost ${lost} times, and the SDK's retry sent it again each time`;
}

function sdkResent(writes: readonly WriteSeen[]): WriteSeen | undefined {
  return writes.find((write, index) => write.applied && write.fault === 'lose-response' && writes.slice(index + 1).some((later) => later.applied && later.body === write.body));
}

/**
 * The handler's staged writes of a commit: its actions on tables other than the inbox (the runtime's inbox record differs
 * at each run), an event it emits (`tx.emit`) without what the runtime stamps on it at each run: the envelope's `time`,
 * the item's write time and its expiry (they move with the clock between two runs of a correct handler).
 */
function handlerWrites(body: string, inboxTable: string | undefined): string {
  try {
    const request = JSON.parse(body) as { TransactItems?: Record<string, { TableName?: string; Item?: Record<string, { S?: string }> }>[] };
    const staged = (request.TransactItems ?? []).filter((action) => !Object.values(action).some((write) => write.TableName === inboxTable));
    return JSON.stringify(staged.map((action) => (action.Put?.Item?.[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] === undefined ? action : { ...action, Put: { ...action.Put, Item: emittedEvent(action.Put.Item) } })));
  } catch {
    return body;
  }
}

/** An outbox item a handler emitted, without the runtime's per-run stamps (see {@link handlerWrites}). */
function emittedEvent(item: Record<string, { S?: string }>): Record<string, unknown> {
  const { [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: _writtenAt, [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: _expiresAt, ...kept } = item;
  const envelope = item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S;
  if (envelope === undefined) return kept;
  try {
    const { time: _time, ...rest } = JSON.parse(envelope) as Record<string, unknown>;
    return { ...kept, [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: rest };
  } catch {
    return kept;
  }
}

/** The key of the item the event's aggregate Put wrote, as `{"pk":"…"}`, from the table's key attributes. */
function itemKeyOf(writes: readonly WriteSeen[], keyAttributes: (tableName: string) => readonly string[]): string | undefined {
  for (const write of writes) {
    let request: { TableName?: string; Item?: Record<string, Record<string, unknown>>; TransactItems?: { Put?: { TableName?: string; Item?: Record<string, Record<string, unknown>> } }[] };
    try {
      request = JSON.parse(write.body) as typeof request;
    } catch {
      continue;
    }
    // the aggregate's Put comes first in a transaction with its emitted events
    const put = request.Item !== undefined ? { TableName: request.TableName, Item: request.Item } : request.TransactItems?.[0]?.Put;
    if (put?.Item === undefined || put.TableName === undefined) continue;
    const item = put.Item;
    return JSON.stringify(Object.fromEntries(keyAttributes(put.TableName).map((name) => [name, Object.values(item[name] ?? {})[0]])));
  }
  return undefined;
}

/** The aggregate item an aggregate's commit wrote: its table and key (see {@link itemKeyOf}); undefined for a body it cannot read. */
function aggregateReference(write: WriteSeen, keyAttributes: (tableName: string) => readonly string[]): AggregateReference | undefined {
  const key = itemKeyOf([write], keyAttributes);
  let request: { TableName?: string; Item?: unknown; TransactItems?: { Put?: { TableName?: string } }[] };
  try {
    request = JSON.parse(write.body) as typeof request;
  } catch {
    return undefined;
  }
  const table = request.Item !== undefined ? request.TableName : request.TransactItems?.[0]?.Put?.TableName;
  return key === undefined || table === undefined ? undefined : { table, key: JSON.parse(key) as Record<string, unknown> };
}

/** An item as `<table>|{"<key attribute>":"<value>",…}`, from a table name and a key (or a whole item). */
function itemId(tableName: string, key: Record<string, unknown>, keyAttributes: (tableName: string) => readonly string[]): string {
  const names = keyAttributes(tableName);
  const chosen = names.length > 0 ? names : Object.keys(key).sort();
  return `${tableName}|${JSON.stringify(Object.fromEntries(chosen.map((name) => [name, Object.values((key[name] ?? {}) as Record<string, unknown>)[0]])))}`;
}

/** The item a `GetItem` reads (see {@link itemId}), undefined for a body it cannot read. */
function readItem(body: string, keyAttributes: (tableName: string) => readonly string[]): string | undefined {
  try {
    const request = JSON.parse(body) as { TableName?: string; Key?: Record<string, unknown> };
    return request.TableName === undefined || request.Key === undefined ? undefined : itemId(request.TableName, request.Key, keyAttributes);
  } catch {
    return undefined;
  }
}

interface WriteAction {
  readonly TableName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
  readonly UpdateExpression?: string;
  readonly ConditionExpression?: string;
}

/** A write request's actions: a transaction's Put, Update and Delete, or a single PutItem, UpdateItem or DeleteItem. */
function writeActions(body: string): { readonly kind: 'Put' | 'Update' | 'Delete'; readonly action: WriteAction }[] {
  let request: WriteAction & { TransactItems?: Record<string, WriteAction>[] };
  try {
    request = JSON.parse(body) as typeof request;
  } catch {
    return [];
  }
  if (request.TransactItems !== undefined) {
    return request.TransactItems.flatMap((item) => (['Put', 'Update', 'Delete'] as const).flatMap((kind) => (item[kind] === undefined ? [] : [{ kind, action: item[kind]! }])));
  }
  if (request.Item !== undefined) return [{ kind: 'Put', action: request }];
  if (request.Key === undefined) return [];
  return [{ kind: request.UpdateExpression === undefined ? 'Delete' : 'Update', action: request }];
}

/** The items a write request writes (see {@link itemId}). */
function writtenItems(body: string, keyAttributes: (tableName: string) => readonly string[]): string[] {
  return writeActions(body).flatMap(({ action }) => {
    const key = action.Key ?? action.Item;
    return action.TableName === undefined || key === undefined ? [] : [itemId(action.TableName, key, keyAttributes)];
  });
}

/**
 * The items a commit's handler wrote with a value of its own, whatever the item held: a Put or an update with no ADD,
 * without a condition (the inbox record and the emitted events aside). Such a write is only as right as the copy it
 * was computed from.
 */
function unconditionedItems(body: string, consumer: AttributedConsumer, keyAttributes: (tableName: string) => readonly string[]): string[] {
  return writeActions(body).flatMap(({ kind, action }) => {
    if (kind === 'Delete' || action.TableName === undefined || action.ConditionExpression !== undefined) return [];
    if (action.TableName === consumer.inboxTable || action.TableName === consumer.outboxTable) return [];
    if (kind === 'Update' && !setsValuesOnly(action.UpdateExpression ?? '')) return [];
    const key = action.Key ?? action.Item;
    return key === undefined ? [] : [itemId(action.TableName, key, keyAttributes)];
  });
}

/**
 * Whether an update expression only sets attributes to values of the request (`SET a = :a, b = :b`, a REMOVE beside):
 * no ADD, no SET computed from what the item holds (`a = a + :n`, `if_not_exists(...)`, `list_append(...)`).
 */
function setsValuesOnly(expression: string): boolean {
  if (/\b(ADD|DELETE)\b/i.test(expression)) return false;
  const set = /\bSET\b([\s\S]*?)(?=\bREMOVE\b|$)/i.exec(expression)?.[1];
  if (set === undefined) return false;
  return set.split(',').every((assignment) => {
    const value = assignment.split('=')[1];
    return value !== undefined && !/[A-Za-z#(]/.test(value.replace(/:[A-Za-z0-9_]+/g, ''));
  });
}
