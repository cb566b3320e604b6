/**
 * Steers faults to the functions that have not met them. Random faults at the default rates may miss a subscriber's
 * failure paths altogether (a run with few transaction conflicts never fails a record of some subscriber, so a wrapper
 * that swallows failures passes), and an OK would then prove nothing about them. So:
 *
 * - each fault the rates allow is injected once at each of the APP'S WRITE SITES of a subscriber's consumer and of a
 *   producer the scenario drives: a write operation and the tables it names, when one of them is not the
 *   subscriber's inbox (a transactional commit with its business writes; a lease or multi-step effect's call; a
 *   producer's commit). A mistake that only one such write shows (an effect call retried after an unknown outcome, a
 *   producer's random event id retried after a commit) then meets its fault in a small run;
 * - at the runtime's own sites (its inbox alone: a claim, a completion) a fault is steered only while the subscriber
 *   still misses a failure path that fault makes it meet (counted from the ledger), up to {@link EXTRA_MEETINGS} times.
 *
 * The faults, in this order (a crash redelivers the whole batch, so the run gets more invocations for the rest):
 *
 * - `crash-before` and `crash-after`: the process dies before the write is sent, and after it was applied (the crash
 *   rate above 0);
 * - `conflict`: the write is refused with a transaction conflict, as DynamoDB refuses one that meets an ongoing
 *   transaction, and so is every write of that target for the rest of the invocation (an item contended throughout;
 *   a duplicate copy of the event in the batch writes it too, so the conflict fails and is charged to each copy), and
 *   every read of an item that write named (its key; a Query of its table setting its partition key to the item's
 *   value) is throttled (else the aggregate consumer's retry re-reads the aggregate
 *   and may find its event applied meanwhile by a duplicate copy: acknowledged, no record failed); only those items'
 *   reads, since the later records of the batch read their own, and only while every other message of the batch (a
 *   read names no record, so it may be theirs) may lose that receive: none at its last, each within its conflict
 *   budget, which the refusal is charged to; so the runtime's own contention retries give
 *   up and the record fails, to be retried by SQS: steered when the throttle rate is above 0, both being DynamoDB
 *   refusing a request;
 * - `lose-response`: the write is applied and its response lost (the lost-response rate above 0).
 *
 * One per invocation, and steering stays out of the way of what it tests: a planned crash in an invocation it steered
 * a fault to is dropped (it would hide a conflict's failed record), and a target whose write it applied unseen
 * (`lose-response`, `crash-after`) gets no further steered fault, so its retry runs as the app's would. A fault that
 * fails the receive (a conflict, a crash) goes to a target (the inbox record the write names, `<subscriber>#<event
 * id>`, else the one the invocation named last, since a lease or multi-step consumer claims before its effect call, so
 * that a copy of the event the operator redrove, a new message, is still that event; else the message the invocation
 * handles) that had fewer than half of its queue's `maxReceiveCount` - 1
 * such faults (none for 2, and one crash for 1: a queue that retries nothing loses a valid event to a process that
 * dies, which the run must show; never a conflict, which needs a concurrent writer of the item and so cannot be the
 * app's only outcome: a valid event dead-lettered by steered conflicts alone would be the simulator's doing, not the
 * app's), in its first receives only (a path still missing may take a later one); on the ordered
 * path that budget is the aggregate's whose sequence fence the write names (`<subscriber>@sequence#<aggregate>`), since
 * a FIFO message waits behind its group's failed one and loses a receive with it; and only while every message whose
 * receive the fault fails (a crash: the whole batch; a conflict: its event's and, on a FIFO queue, the rest of that
 * group's, the runtime stopping a group at its first failure) had fewer than that many such faults steered to it, so no
 * message loses more of its receives to steering than one target may, whichever event of its batch the faults were
 * steered to (a FIFO batch holds several aggregates' messages: at concurrency 1, all of them), and none of them is at
 * its last receive (`ApproximateReceiveCount` = `maxReceiveCount`: a message behind its group's failed one is first
 * written there, and a fault then would be its dead letter's last failure, the simulator's), but at `maxReceiveCount` 1,
 * where every receive is the last and its one crash is the point; and to a producer's command once:
 * steering leaves the later receives to the run's own faults and never exhausts them alone (but by a crash for a queue
 * with `maxReceiveCount` 1). Decided in the order the run's requests reach the proxies, which the seeded scheduler makes a function
 * of the seed.
 *
 * The budget keeps steering away from every message's last receive, so a consumer that gives up only there (drops the
 * record from `batchItemFailures` when `ApproximateReceiveCount` reaches `maxReceiveCount`: SQS deletes it, its effect
 * never done) would pass. So each subscriber given a LAST-RECEIVE PROBE ({@link FaultSteering.addSubscriber}: a
 * standard queue with a redrive policy, not in aggregate mode, when conflicts are steered) has ONE event failed at every
 * receive, its last included: the first event whose inbox record a write names while its message is at its first
 * receive. Each write naming that event's inbox record (a transactional commit; a lease or multi-step claim, so its
 * effect call never runs) is refused with a conflict, whatever the plan drew, so only that event's record fails (a
 * standard queue's failed record fails no other; a write naming no inbox record is left alone: it may be the next
 * record's); no crash, planned or steered, goes to a batch holding that event (it would fail the others too, and hide the
 * record's failure); no read is throttled for it; and the steering above never counts it (budgets, sites met). A correct
 * consumer reports the record failed each time, and SQS moves the message to the dead-letter queue; the run then
 * redrives it ({@link FaultSteering.endProbes}, simulator/run/operate.ts) and expects it applied once. Every copy of the
 * event (an SNS duplicate too) is failed until the probes end. A FIFO queue is left out: a dead-lettered FIFO message lets
 * its group's later messages pass, which the ordered path's checks do not take as the probe's. The event is never one a
 * write named before (another copy of it, at a later receive, may have applied it), nor one whose own envelope `time` is
 * too old for `dlq redrive`'s window rule to take its dead letter ({@link SteeredSubscriberOptions.probeTakes}).
 */
import type { RequestFault } from './dynamodb-proxy';
import type { FaultRates } from './fault-plan';
import { sequenceFenceKey } from '../../lambda/contract/ordered-wire-format';
import { keyValue, queriedPartitionValue } from '../aws/key-condition';

/** The faults steering injects, in the order it gives them to a subscriber. */
export const STEERED_FAULTS = ['crash-before', 'crash-after', 'conflict', 'lose-response'] as const;

/** A fault steering may inject. */
export type SteeredFault = (typeof STEERED_FAULTS)[number];

/** The steered faults after which the message is received again. */
const FAILS_THE_RECEIVE: ReadonlySet<SteeredFault> = new Set(['conflict', 'crash-before', 'crash-after']);

/** How often each fault is steered to each write site. */
const MEETINGS_PER_SITE = 1;

/** How often more a fault is steered to a function whose failure paths still miss what it makes them meet. */
const EXTRA_MEETINGS = 2;

/** The steered faults after which the write is applied and the function does not know it: their retry is what they test. */
const APPLIED_UNSEEN: ReadonlySet<SteeredFault> = new Set(['lose-response', 'crash-after']);

/** The writes a fault can be steered to (a transaction conflict refuses these). */
const STEERABLE_OPERATIONS: ReadonlySet<string> = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems']);

/** The reads of a contended target refused for the rest of its invocation (see {@link FaultSteering.decide}). */
const CONTENDED_READS: ReadonlySet<string> = new Set(['GetItem', 'BatchGetItem', 'TransactGetItems', 'Query']);

/** Whether a steered fault is a crash (it fails the whole batch). */
function isCrash(fault: SteeredFault): boolean {
  return fault === 'crash-before' || fault === 'crash-after';
}

/** The steered faults the rates allow. */
export function steeredFaults(rates: FaultRates): SteeredFault[] {
  return STEERED_FAULTS.filter((fault) => (fault === 'conflict' ? rates.throttle : fault === 'lose-response' ? rates.lostResponse : rates.crash) > 0);
}

interface SteeredFunction {
  readonly name: string;
  /** A subscriber's inbox record key, `<subscriber>#<event id>`, whose event id is the steering target. */
  readonly inboxKey?: RegExp;
  /** An ordered subscriber's sequence fence key: its aggregate holds the budget of failed receives of its events. */
  readonly fenceKey?: RegExp;
  /** Its inbox tables: a site that writes only these is the runtime's own (a claim, a completion). */
  readonly inboxTables: ReadonlySet<string>;
  /** How often it met each fault at each write site (`<site>|<fault>`), random or steered. */
  readonly met: Map<string, number>;
  /** How many faults that fail the receive were steered to each event (or message, or command; or aggregate on the ordered path). */
  readonly failedReceives: Map<string, number>;
  /** The targets a write applied unseen was steered to: left alone since, so that their retry shows what it does. */
  readonly leftAlone: Set<string>;
  /** How often each fault was steered beyond its meetings per site, for a failure path still missing. */
  readonly extra: Map<SteeredFault, number>;
  /** How many it may get (see the module comment). */
  readonly failedReceivesAllowed: number;
  /** How many of those may be conflicts: never all of a queue's receives (see the module comment). */
  readonly conflictsAllowed: number;
  /** Its queue's `maxReceiveCount`: a message at that receive gets no steered fault that fails it (unbounded for a producer). */
  readonly maxReceiveCount: number;
  /** The invocations each target was written in so far: its receives (or a producer command's attempts) seen. */
  readonly receivesSeen: Map<string, Set<string>>;
  /**
   * Its last-receive probe, when it has one (see the module comment and {@link SteeredProbe}). @default none
   */
  readonly probe?: SteeredProbe;
}

/** A subscriber's last-receive probe while the run steers it. */
interface SteeredProbe {
  /** The event chosen, once one is. */
  eventId?: string;
  /** The highest receive a write of it was refused at. */
  lastReceive?: number;
  /** The writes of it refused so far. */
  refusedWrites?: number;
  /** The events any write named before one was chosen (none of them is chosen: another copy may have applied it). */
  readonly named: Set<string>;
  /** Whether dlq redrive's window rule takes an event by its own time ({@link SteeredSubscriberOptions.probeTakes}). */
  readonly takes: (eventTime: number | undefined) => boolean;
  /** The invocations a write of its event was refused in, with the event's copies in their batches, until each answers. */
  readonly refusedIn: Map<string, readonly BatchMessage[]>;
  /** The copies of its event an answer acknowledged while the probes ran ({@link FaultSteering.onInvocationAnswered}). */
  readonly acknowledged: ProbeAcknowledgement[];
}

/** A copy of the probe's event that its consumer's batch response acknowledged at a receive where the run refused the event's write. */
export interface ProbeAcknowledgement {
  /** The SQS message id of the copy. */
  readonly messageId: string;
  /** Its `ApproximateReceiveCount` at that receive. */
  readonly receiveCount: number;
}

/** A subscriber's last-receive probe, as {@link FaultSteering.endProbes} gives it. */
export interface LastReceiveProbe {
  /** The consumer function's key. */
  readonly functionKey: string;
  /** The subscriber's name. */
  readonly subscriber: string;
  /** The event failed at every receive; undefined when no event was chosen (none reached a write at its first receive). */
  readonly eventId?: string;
  /** The highest receive (`ApproximateReceiveCount`) at which a write of the event was refused. @default none: no event chosen */
  readonly lastReceive?: number;
  /**
   * The writes of the event the probe refused (each a transaction conflict counted in the run's faults: the runtime
   * retries a conflict within a receive, so a few dozen per receive). @default none: no event chosen
   */
  readonly refusedWrites?: number;
  /**
   * The copies of the event the consumer acknowledged (a returned invocation whose batch response left them out of
   * `batchItemFailures`) at a receive where the run refused the event's write: nothing committed them. @default none
   */
  readonly acknowledged?: readonly ProbeAcknowledgement[];
}

/** Options of {@link FaultSteering.addSubscriber}. */
export interface SteeredSubscriberOptions {
  /**
   * Give the subscriber a last-receive probe (see the module comment): only for a standard queue with a redrive policy
   * whose dead letters the run can redrive (not aggregate mode). It is steered only when conflicts are (the throttle rate
   * above 0). @default false
   */
  readonly lastReceiveProbe?: boolean;
  /**
   * Whether `dlq redrive`'s window rule would take a dead letter of an event whose envelope `time` is `eventTime` (epoch
   * milliseconds; undefined when unknown) when the run redrives it: an event it would refuse is never the probe's.
   * @default every event
   */
  readonly probeTakes?: (eventTime: number | undefined) => boolean;
}

/** A write site: the operation and the tables its request names, e.g. `TransactWriteItems Inbox,Ledger`. */
export function writeSite(operation: string, body: string): string {
  return `${operation} ${requestTables(body).join(',')}`;
}

/** The tables a DynamoDB request names, sorted. */
export function requestTables(body: string): string[] {
  const tables = new Set<string>();
  try {
    const request = JSON.parse(body) as { TableName?: unknown; TransactItems?: Array<Record<string, { TableName?: unknown } | undefined>> };
    if (typeof request.TableName === 'string') tables.add(request.TableName);
    for (const item of request.TransactItems ?? []) {
      for (const action of Object.values(item)) if (typeof action?.TableName === 'string') tables.add(action.TableName);
    }
  } catch {
    // not JSON: the operation alone is the site
  }
  return [...tables].sort();
}

/** The least `maxReceiveCount` a subscriber's queue needs for a transaction conflict to be steered to it (below it, only a crash at 1). */
export const MIN_RECEIVES_STEERED = 3;

/** How many faults that fail a receive steering gives one target of a subscriber whose queue has `maxReceiveCount`, and how many of them may be conflicts (see the module comment). */
function receiveBudget(maxReceiveCount: number): { readonly failedReceivesAllowed: number; readonly conflictsAllowed: number } {
  // a queue that retries nothing (maxReceiveCount 1) dead-letters a valid event when its process dies, as AWS will:
  // one steered crash shows it, and the run names the event it lost (unapplied-event); a conflict is not steered
  // there, since only a concurrent writer makes one and the event would be lost to the simulator's injection alone
  const conflictsAllowed = maxReceiveCount < MIN_RECEIVES_STEERED ? 0 : Math.floor((maxReceiveCount - 1) / 2);
  return { conflictsAllowed, failedReceivesAllowed: maxReceiveCount === 1 ? 1 : conflictsAllowed };
}

/**
 * The steered faults the rates allow that steering can give a subscriber whose queue has `maxReceiveCount` (@default
 * no redrive policy: unbounded): below {@link MIN_RECEIVES_STEERED}, no conflict, and no crash at 2 (each would
 * dead-letter a valid event by the simulator's injection alone).
 */
export function steeredFaultsTo(rates: FaultRates, maxReceiveCount: number = Number.MAX_SAFE_INTEGER): SteeredFault[] {
  const { failedReceivesAllowed, conflictsAllowed } = receiveBudget(maxReceiveCount);
  return steeredFaults(rates).filter((fault) => (fault === 'conflict' ? conflictsAllowed > 0 : !FAILS_THE_RECEIVE.has(fault) || failedReceivesAllowed > 0));
}

/** The invocation a request of a steered function belongs to (see {@link FaultSteering.decide}). */
export interface SteeredInvocation {
  /** The invocation's key: an event source mapping's ends with the receive count of its batch's first message. */
  readonly key: string;
  /** The message (or command) the invocation handles across its receives: its key without the receive count or attempt. */
  readonly message: string;
  /**
   * The messages of the invocation's SQS batch: a fault that fails the receive fails theirs too (a crash the whole
   * batch, a conflict its target's record and, on a FIFO queue, the rest of its group), so each message's own budget
   * counts it, and none of them may be at its last receive.
   * @default none: only the target's budget counts
   */
  readonly messages?: readonly BatchMessage[];
}

/** A message of an invocation's SQS batch, as steering weighs it (see {@link SteeredInvocation.messages}). */
export interface BatchMessage {
  /** Its SQS message id. */
  readonly messageId: string;
  /** Its `ApproximateReceiveCount` at this receive: 1 for the first. */
  readonly receiveCount: number;
  /** The id of the event its body carries. @default unknown: a conflict is counted against every message of the batch */
  readonly eventId?: string;
  /** Its FIFO message group. @default none: a standard queue's message, whose failed record fails no other */
  readonly groupId?: string;
  /** Its event's envelope `time`, epoch milliseconds. @default unknown */
  readonly eventTime?: number;
}

/**
 * The messages of `messages` whose receive a steered `fault` to the event `target` fails: a crash fails the whole batch;
 * a conflict fails the target's record, every other copy of the event in the batch too (a duplicate delivery: the
 * runtime runs it in the same lane after the first fails, and its write meets the same contended item), and, on a
 * FIFO queue, every later record of its group (the runtime stops a group at its first failure); every message when
 * the target's is not in the batch.
 */
function messagesFailedBy(fault: SteeredFault, target: string, messages: readonly BatchMessage[]): readonly BatchMessage[] {
  if (fault !== 'conflict') return messages;
  const index = messages.findIndex((message) => message.eventId === target);
  if (index < 0) return messages;
  const { groupId } = messages[index]!;
  return messages.filter((message, position) => message.eventId === target || (groupId !== undefined && position >= index && message.groupId === groupId));
}

/** An item a request names: its table and the attributes (DynamoDB JSON) it gives, its key's at least. */
interface ItemKey {
  readonly table: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  /**
   * The attributes that may be its partition key: its table's, when the table's key schema is known; else every
   * attribute a key gives (an Update's, Delete's or ConditionCheck's) or, for a Put's item, every attribute it has.
   * @default none (a read's key)
   */
  readonly partitionKeys?: readonly string[];
}

type Action = { TableName?: unknown; Item?: unknown; Key?: unknown };

/** A table's key attribute names, the partition key first; none when its key schema is unknown. */
export type KeyNamesOf = (tableName: string) => readonly string[];

function itemKey(action: Action | undefined, attributes: unknown, keyNamesOf?: KeyNamesOf): ItemKey[] {
  if (typeof action?.TableName !== 'string' || typeof attributes !== 'object' || attributes === null) return [];
  const item = { table: action.TableName, attributes: attributes as Record<string, unknown> };
  if (keyNamesOf === undefined) return [item];
  const [partitionKey] = keyNamesOf(action.TableName);
  return [{ ...item, partitionKeys: partitionKey === undefined ? Object.keys(attributes) : [partitionKey] }];
}

function parse(body: string): Record<string, unknown> {
  try {
    const request: unknown = JSON.parse(body);
    return typeof request === 'object' && request !== null ? (request as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The items a write request names (a Put's item, an Update's, Delete's or ConditionCheck's key), each transaction
 * action's too; `keyNamesOf` names each table's key (@default unknown for every table: see {@link ItemKey.partitionKeys}).
 */
export function writtenItems(body: string, keyNamesOf: KeyNamesOf = () => []): ItemKey[] {
  const request = parse(body) as Action & { TransactItems?: Array<Record<string, Action | undefined>> };
  const items = itemKey(request, request.Item ?? request.Key, keyNamesOf);
  for (const entry of request.TransactItems ?? []) for (const action of Object.values(entry)) items.push(...itemKey(action, action?.Item ?? action?.Key, keyNamesOf));
  return items;
}

/**
 * Whether a read request names one of `items`: a GetItem's, BatchGetItem's or TransactGetItems' key whose every
 * attribute the item has, or a Query of the item's table (not an index) whose key condition sets the item's partition
 * key equal to the item's value (a value the item merely has elsewhere, a status or a number, names other items too).
 */
export function readsAny(body: string, items: readonly ItemKey[]): boolean {
  const request = parse(body) as Action & { RequestItems?: Record<string, { Keys?: unknown[] } | undefined>; TransactItems?: Array<{ Get?: Action }>; IndexName?: unknown };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const keys = [...itemKey(request, request.Key)];
  for (const [table, read] of Object.entries(request.RequestItems ?? {})) for (const key of read?.Keys ?? []) keys.push(...itemKey({ TableName: table }, key));
  for (const entry of request.TransactItems ?? []) keys.push(...itemKey(entry.Get, entry.Get?.Key));
  const named = keys.some((key) => items.some((item) => item.table === key.table && Object.entries(key.attributes).every(([name, value]) => same(item.attributes[name], value))));
  if (named || typeof request.TableName !== 'string' || request.Key !== undefined || request.IndexName !== undefined) return named;
  return items.some(
    (item) =>
      item.table === request.TableName &&
      (item.partitionKeys ?? []).some((name) => {
        const value = keyValue(item.attributes[name]);
        return value !== undefined && queriedPartitionValue(request, name) === value;
      }),
  );
}

/** Steering state of one run (see the module comment). */
export class FaultSteering {
  private readonly functions = new Map<string, SteeredFunction>();
  /** `<function key>|<invocation key>` of the invocations a fault was steered to: one each. */
  private readonly invocationsSteered = new Set<string>();
  /** `<function key>|<invocation key>|<target>` of the targets a conflict was steered to: refused until the invocation ends. */
  private readonly contended = new Set<string>();
  /** `<function key>|<invocation key>` → the items its steered conflict's write named, and the batch's messages that conflict did not fail. */
  private readonly contendedItems = new Map<string, { readonly items: readonly ItemKey[]; readonly others: readonly BatchMessage[]; charged: boolean }>();
  /** `<function key>|<message id>` → how many faults that fail the receive steering put in invocations whose batch held the message. */
  private readonly failedReceivesOfMessage = new Map<string, number>();
  /** `<function key>|<invocation key>` → the event id of the inbox record the invocation's last request named. */
  private readonly eventOfInvocation = new Map<string, string>();
  private readonly allowed: readonly SteeredFault[];
  /** Whether {@link FaultSteering.endProbes} was called. */
  private probesEnded = false;

  /**
   * @param rates the run's fault rates: the faults steered are those whose rates are above 0
   * @param stillNeeded the faults that would make the function's subscriber meet a failure path it has not met yet (its
   * path counts so far): each is steered up to {@link EXTRA_MEETINGS} more times, e.g. a conflict whose failed record a
   * crash of its invocation hid @default none
   * @param keyNamesOf each table's key attribute names (by the name requests give it), the partition key first: a
   * Query refused as a read of a contended item names that item's partition key value @default unknown for every
   * table (any attribute of a written item may be its partition key)
   */
  public constructor(
    rates: FaultRates,
    private readonly stillNeeded: (functionKey: string) => ReadonlySet<SteeredFault> = () => new Set(),
    private readonly keyNamesOf: KeyNamesOf = () => [],
  ) {
    this.allowed = steeredFaults(rates);
  }

  /**
   * Steers faults to the consumer function `functionKey` of subscriber `name`, whose queue has `maxReceiveCount` and
   * whose inbox is `inboxTables` (local names).
   */
  public addSubscriber(functionKey: string, name: string, maxReceiveCount: number, inboxTables: readonly string[] = [], options: SteeredSubscriberOptions = {}): void {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const { failedReceivesAllowed, conflictsAllowed } = receiveBudget(maxReceiveCount);
    const fenceKey = new RegExp(`"S":"${sequenceFenceKey(escaped, '([^"]+)')}"`);
    const probe =
      options.lastReceiveProbe === true && this.allowed.includes('conflict')
        ? { probe: { named: new Set<string>(), takes: options.probeTakes ?? (() => true), refusedIn: new Map<string, readonly BatchMessage[]>(), acknowledged: [] } }
        : {};
    this.functions.set(functionKey, { name, inboxTables: new Set(inboxTables), inboxKey: new RegExp(`"S":"${escaped}#([^"#]+)"`), fenceKey, met: new Map(), leftAlone: new Set(), extra: new Map(), receivesSeen: new Map(), failedReceives: new Map(), failedReceivesAllowed, conflictsAllowed, maxReceiveCount, ...probe });
  }

  /**
   * Ends the last-receive probes (the run settled: their events are in the dead-letter queues, or were acknowledged) and
   * says which event each probed subscriber had failed: from now on those events are left to the plan, so that a
   * redriven copy is applied.
   */
  public endProbes(): LastReceiveProbe[] {
    this.probesEnded = true;
    return [...this.functions].flatMap(([functionKey, steered]) =>
      steered.probe === undefined
        ? []
        : [
            {
              functionKey,
              subscriber: steered.name,
              ...(steered.probe.eventId === undefined ? {} : { eventId: steered.probe.eventId }),
              ...(steered.probe.lastReceive === undefined ? {} : { lastReceive: steered.probe.lastReceive }),
              ...(steered.probe.refusedWrites === undefined ? {} : { refusedWrites: steered.probe.refusedWrites }),
              ...(steered.probe.acknowledged.length === 0 ? {} : { acknowledged: [...steered.probe.acknowledged] }),
            },
          ],
    );
  }

  /**
   * Hears an invocation's answer (`failedMessageIds`: the messages its batch response reported failed, every message of
   * the batch when it threw, timed out or crashed): a copy of a probe's event in a batch where the run refused the event's
   * write, left out of them, was acknowledged although nothing committed it, whatever SQS does with it after (a lost
   * delete, another copy dead-lettered): {@link endProbes} names it. So is a copy of the chosen event in `messages` (the
   * batch, with each message's event id) left out of them while the probes run, though no write of it was made.
   */
  public onInvocationAnswered(functionKey: string, invocationKey: string, failedMessageIds: readonly string[], messages: readonly BatchMessage[] = []): void {
    const probe = this.functions.get(functionKey)?.probe;
    if (probe === undefined) return;
    const refused = probe.refusedIn.get(invocationKey) ?? [];
    probe.refusedIn.delete(invocationKey);
    // and every other copy of the chosen event in the batch while the probes run, a write of it made or not (a consumer
    // that gives up before calling the runtime makes none): nothing can have committed it
    const eventId = probe.eventId;
    const held = this.probesEnded || eventId === undefined ? [] : messages.filter((message) => message.eventId === eventId && !refused.some((copy) => copy.messageId === message.messageId));
    const failed = new Set(failedMessageIds);
    for (const copy of [...refused, ...held]) if (!failed.has(copy.messageId)) probe.acknowledged.push({ messageId: copy.messageId, receiveCount: copy.receiveCount });
  }

  /**
   * The last-receive probe's decision for a write (see the module comment): `conflict` for a write naming the probe's event's inbox record,
   * choosing that event at the first write naming an inbox record of a message at its first receive; `none` for a planned
   * crash in a batch holding the event; else undefined (the steering below decides).
   */
  private probeDecision(steered: SteeredFunction, invocation: SteeredInvocation, named: string | undefined, target: string, planned: RequestFault): RequestFault | undefined {
    const probe = steered.probe;
    if (probe === undefined || this.probesEnded) return undefined;
    const messages = invocation.messages ?? [];
    const chosen = named === undefined ? undefined : messages.find((message) => message.eventId === named);
    // a FIFO message is never chosen (see the module comment), whatever the caller asked; nor an event a write named
    // before (another copy may have applied it: the chosen copy would then be acknowledged as a duplicate), nor one whose
    // own time dlq redrive's window rule would refuse
    if (probe.eventId === undefined && named !== undefined) {
      if (chosen?.receiveCount === 1 && chosen.groupId === undefined && !probe.named.has(named) && probe.takes(chosen.eventTime)) probe.eventId = named;
      else probe.named.add(named);
    }
    if (probe.eventId === undefined) return undefined;
    // only a write naming its inbox record: a write naming none takes the event the invocation named last as its target,
    // which after the probe's failed record may be the next record's own (its handler's write before its commit)
    if (named === probe.eventId && chosen !== undefined) probe.lastReceive = Math.max(probe.lastReceive ?? 0, chosen.receiveCount);
    // the event's copies in this batch: the consumer's answer must report each failed (onInvocationAnswered)
    if (named === probe.eventId) probe.refusedIn.set(invocation.key, messages.filter((message) => message.eventId === named));
    if (named === probe.eventId) {
      probe.refusedWrites = (probe.refusedWrites ?? 0) + 1;
      return 'conflict';
    }
    if ((planned === 'crash-before' || planned === 'crash-after') && this.holdsProbe(steered, invocation)) return 'none';
    // nor does the steering below take the probe's event as the target of such a write
    if (target === probe.eventId) return planned;
    return undefined;
  }

  /** Whether the invocation's batch holds a message of the subscriber's probed event, while the probes run. */
  private holdsProbe(steered: SteeredFunction, invocation: SteeredInvocation): boolean {
    const eventId = steered.probe?.eventId;
    return eventId !== undefined && !this.probesEnded && (invocation.messages ?? []).some((message) => message.eventId === eventId);
  }

  /** Steers faults to the producer function `functionKey`, whose commands are retried: one failed attempt per command. */
  public addProducer(functionKey: string, name: string): void {
    this.functions.set(functionKey, { name, inboxTables: new Set(), met: new Map(), leftAlone: new Set(), extra: new Map(), receivesSeen: new Map(), failedReceives: new Map(), failedReceivesAllowed: 1, conflictsAllowed: 1, maxReceiveCount: Number.MAX_SAFE_INTEGER });
  }

  /**
   * The fault for a DynamoDB request (`planned` is the random plan's decision, noted as met at its site when it is a
   * fault): a steered one when the request is a write of a steered function whose site still misses a fault,
   * `throttle` for a read of a target a conflict contends in this invocation, else `planned`. `message` names the message (or command) the invocation handles across its receives (an invocation key
   * without its receive count or attempt): the unit a write that names no inbox record is steered by.
   */
  public decide(functionKey: string, invocation: SteeredInvocation, operation: string, body: string, planned: RequestFault): RequestFault {
    const steered = this.functions.get(functionKey);
    if (steered === undefined) return planned;
    // a write naming no inbox record (a lease or multi-step consumer's effect call) is the event's its invocation named
    // last (its claim): a redriven copy of the event is a new message, and must not start the event's budget again
    const named = steered.inboxKey?.exec(body)?.[1];
    const invocationId = `${functionKey}|${invocation.key}`;
    if (named !== undefined) this.eventOfInvocation.set(invocationId, named);
    const target = named ?? this.eventOfInvocation.get(invocationId) ?? `message ${invocation.message}`;
    // a contended item's reads are refused too (throttled) for the rest of the invocation, so that a retry which
    // re-reads it (the aggregate consumer's) cannot find its event applied by another copy meanwhile and acknowledge it
    if (CONTENDED_READS.has(operation)) return this.contendedRead(steered, functionKey, invocation, body) ? 'throttle' : planned;
    if (!STEERABLE_OPERATIONS.has(operation)) return planned;
    // the last-receive probe's event is refused at every write, and its batch gets no crash (see the module comment)
    const probed = this.probeDecision(steered, invocation, named, target, planned);
    if (probed !== undefined) return probed;
    const site = writeSite(operation, body);
    // the failed receives are counted per aggregate on the ordered path (see the module comment), else per target
    const aggregate = steered.fenceKey?.exec(body)?.[1];
    const budgetKey = aggregate === undefined ? target : `aggregate ${aggregate}`;
    const receives = steered.receivesSeen.get(target) ?? new Set<string>();
    steered.receivesSeen.set(target, receives.add(invocation.key));
    // a contended item stays contended for the invocation, whatever the plan drew for the write
    if (this.contended.has(`${functionKey}|${invocation.key}|${target}`)) return 'conflict';
    // a planned crash would hide what follows the fault steered to this invocation (a conflict's failed record)
    if ((planned === 'crash-before' || planned === 'crash-after') && this.invocationsSteered.has(`${functionKey}|${invocation.key}`)) return 'none';
    if (planned !== 'none') {
      this.meets(steered, site, planned);
      return planned;
    }
    if (this.invocationsSteered.has(`${functionKey}|${invocation.key}`) || steered.leftAlone.has(target)) return planned;
    const failedReceives = steered.failedReceives.get(budgetKey) ?? 0;
    // a fault that fails the receive only within the budget, and only in the target's first receives: the later ones
    // are left to the run's own faults, which may fail them too
    const early = receives.size <= steered.failedReceivesAllowed;
    // every message whose receive the fault fails within its own budget too, and none at its last receive: a fault
    // steered at one event fails the receive of others (a crash, the whole batch; on the ordered path at concurrency 1,
    // every aggregate's message is in one batch), and a message failed at its last receive is dead-lettered, its last
    // failure the simulator's (a message behind a FIFO group's failed one reaches its last receive with its first write)
    const messages = invocation.messages ?? [];
    const messageKeysFailedBy = (fault: SteeredFault) => messagesFailedBy(fault, target, messages).map((message) => `${functionKey}|${message.messageId}`);
    const withinBudget = (fault: SteeredFault) => {
      if (!FAILS_THE_RECEIVE.has(fault)) return true;
      // (a queue that retries nothing, maxReceiveCount 1, is the exception: every receive is its last, and its one crash is the point)
      if (steered.maxReceiveCount > 1 && messagesFailedBy(fault, target, messages).some((message) => message.receiveCount >= steered.maxReceiveCount)) return false;
      const messageKeys = messageKeysFailedBy(fault);
      const messagesFailed = Math.max(0, ...messageKeys.map((key) => this.failedReceivesOfMessage.get(key) ?? 0));
      return Math.max(failedReceives, messagesFailed) < (fault === 'conflict' ? steered.conflictsAllowed : steered.failedReceivesAllowed);
    };
    // a crash in a batch holding the last-receive probe's event would fail the others with it and hide its failed record
    const probeBatch = this.holdsProbe(steered, invocation);
    const affordable = this.allowed.filter((fault) => withinBudget(fault) && (early || !FAILS_THE_RECEIVE.has(fault)) && !(probeBatch && isCrash(fault)));
    // every fault at each of the app's write sites; at the runtime's own (its inbox alone) only what a path still needs
    const appSite = requestTables(body).some((table) => !steered.inboxTables.has(table));
    let next = appSite ? affordable.find((fault) => (steered.met.get(`${site}|${fault}`) ?? 0) < MEETINGS_PER_SITE) : undefined;
    if (next === undefined) {
      const needed = this.stillNeeded(functionKey);
      // a path still missing may take a later receive of the target, within its budget
      next = this.allowed.find((fault) => withinBudget(fault) && needed.has(fault) && (steered.extra.get(fault) ?? 0) < EXTRA_MEETINGS && !(probeBatch && isCrash(fault)));
      if (next === undefined) return planned;
      steered.extra.set(next, (steered.extra.get(next) ?? 0) + 1);
    }
    this.meets(steered, site, next);
    if (APPLIED_UNSEEN.has(next)) steered.leftAlone.add(target);
    if (FAILS_THE_RECEIVE.has(next)) {
      steered.failedReceives.set(budgetKey, failedReceives + 1);
      for (const key of messageKeysFailedBy(next)) this.failedReceivesOfMessage.set(key, (this.failedReceivesOfMessage.get(key) ?? 0) + 1);
    }
    this.invocationsSteered.add(`${functionKey}|${invocation.key}`);
    if (next === 'conflict') {
      this.contended.add(`${functionKey}|${invocation.key}|${target}`);
      const failed = new Set(messagesFailedBy('conflict', target, messages).map((message) => message.messageId));
      this.contendedItems.set(`${functionKey}|${invocation.key}`, { items: writtenItems(body, this.keyNamesOf), others: messages.filter((message) => !failed.has(message.messageId)), charged: false });
    }
    return next;
  }

  /**
   * Whether a read of the invocation is refused as a read of the item its steered conflict contends: it names one of the
   * items the conflicting write named (not "whatever the invocation reads next": the later records of its batch read
   * their own items), and every other message of the batch it might be the read of (a read names no record) is within
   * its conflict budget and not at its last receive, since the refusal could fail its receive: charged to each of them
   * at the first refusal.
   */
  private contendedRead(steered: SteeredFunction, functionKey: string, invocation: SteeredInvocation, body: string): boolean {
    const contended = this.contendedItems.get(`${functionKey}|${invocation.key}`);
    if (contended === undefined || !readsAny(body, contended.items)) return false;
    if (contended.charged) return true;
    const keys = contended.others.map((message) => `${functionKey}|${message.messageId}`);
    if (steered.maxReceiveCount > 1 && contended.others.some((message) => message.receiveCount >= steered.maxReceiveCount)) return false;
    if (keys.some((key) => (this.failedReceivesOfMessage.get(key) ?? 0) >= steered.conflictsAllowed)) return false;
    for (const key of keys) this.failedReceivesOfMessage.set(key, (this.failedReceivesOfMessage.get(key) ?? 0) + 1);
    contended.charged = true;
    return true;
  }

  private meets(steered: SteeredFunction, site: string, fault: RequestFault): void {
    steered.met.set(`${site}|${fault}`, (steered.met.get(`${site}|${fault}`) ?? 0) + 1);
  }
}
