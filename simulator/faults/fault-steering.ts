/**
 * Steers faults to the subscribers that have not met them. Random faults at the default rates may miss a subscriber's
 * failure paths altogether (a run with few transaction conflicts never fails a record of some subscriber, so a wrapper
 * that swallows failures passes), and an OK would then prove nothing about them. So, per subscriber consumer, each
 * fault its rates allow that the random plan has not yet given it is injected once, at a write of its function (one of
 * its inbox records, `<subscriber>#<event id>`, the claim or the commit, when the write names one; the aggregate's
 * item in aggregate mode), one per invocation:
 *
 * - `conflict`: the write is refused with a transaction conflict, as DynamoDB refuses one that meets an ongoing
 *   transaction, and so is every write of that inbox record for the rest of the invocation (an item contended
 *   throughout), so the runtime's own conflict retries give up and the record fails, to be retried by SQS: steered
 *   when the throttle rate is above 0, both being DynamoDB refusing a request;
 * - `lose-response`: the write is applied and its response lost (the lost-response rate above 0);
 * - `crash-before` and `crash-after`: the process dies before the write is sent, and after it was applied (the crash
 *   rate above 0).
 *
 * A steered fault that fails the receive (a conflict, a crash) goes to an event (or, for a write naming no inbox record,
 * a message) that had fewer than half of its queue's `maxReceiveCount` - 1 such faults before (one when it is 3 or 4,
 * two when it is 5 or 6, none below 3), so steering leaves most of the receives to the run's own faults and never
 * exhausts them alone; decided in the order the run's requests reach the proxies, which the seeded
 * scheduler makes a function of the seed.
 */
import type { RequestFault } from './dynamodb-proxy';
import type { FaultRates } from './fault-plan';

/** The faults steering injects, in the order it gives them to a subscriber. */
export const STEERED_FAULTS = ['conflict', 'lose-response', 'crash-before', 'crash-after'] as const;

/** A fault steering may inject. */
export type SteeredFault = (typeof STEERED_FAULTS)[number];

/** The steered faults after which the message is received again. */
const FAILS_THE_RECEIVE: ReadonlySet<SteeredFault> = new Set(['conflict', 'crash-before', 'crash-after']);

/** The writes a fault can be steered to (a transaction conflict refuses these). */
const STEERABLE_OPERATIONS: ReadonlySet<string> = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems']);

/** The steered faults the rates allow. */
export function steeredFaults(rates: FaultRates): SteeredFault[] {
  return STEERED_FAULTS.filter((fault) => (fault === 'conflict' ? rates.throttle : fault === 'lose-response' ? rates.lostResponse : rates.crash) > 0);
}

interface SteeredSubscriber {
  readonly name: string;
  readonly inboxKey: RegExp;
  /** The faults it met, random or steered. */
  readonly met: Set<RequestFault>;
  /** How many faults that fail the receive were steered to each event (or message). */
  readonly failedReceives: Map<string, number>;
  /** How many it may get (see the module comment). */
  readonly failedReceivesAllowed: number;
}

/** Steering state of one run (see the module comment). */
export class FaultSteering {
  private readonly subscribers = new Map<string, SteeredSubscriber>();
  private readonly invocationsSteered = new Set<string>();
  /** `<function key>|<invocation key>|<event id>` of the inbox records a conflict was steered to: refused until the invocation ends. */
  private readonly contended = new Set<string>();
  private readonly allowed: readonly SteeredFault[];

  public constructor(rates: FaultRates) {
    this.allowed = steeredFaults(rates);
  }

  /** Steers faults to the consumer function `functionKey` of subscriber `name`, whose queue has `maxReceiveCount`. */
  public addSubscriber(functionKey: string, name: string, maxReceiveCount: number): void {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const failedReceivesAllowed = maxReceiveCount < 3 ? 0 : Math.floor((maxReceiveCount - 1) / 2);
    this.subscribers.set(functionKey, { name, inboxKey: new RegExp(`"S":"${escaped}#([^"#]+)"`), met: new Set(), failedReceives: new Map(), failedReceivesAllowed });
  }

  /**
   * The fault for a DynamoDB request (`planned` is the random plan's decision, noted as met when it is a fault): a
   * steered one when the request is a write of a subscriber's function still missing a fault, else `planned`.
   * `message` names the message the invocation handles across its receives (an invocation key without its receive
   * count): the unit a write that names no inbox record is steered by.
   */
  public decide(functionKey: string, invocation: { readonly key: string; readonly message: string }, operation: string, body: string, planned: RequestFault): RequestFault {
    const subscriber = this.subscribers.get(functionKey);
    if (subscriber === undefined || !STEERABLE_OPERATIONS.has(operation)) {
      if (planned !== 'none') subscriber?.met.add(planned);
      return planned;
    }
    const target = subscriber.inboxKey.exec(body)?.[1] ?? `message ${invocation.message}`;
    // a contended item stays contended for the invocation, whatever the plan drew for the write
    if (this.contended.has(`${functionKey}|${invocation.key}|${target}`)) return 'conflict';
    if (planned !== 'none') {
      subscriber.met.add(planned);
      return planned;
    }
    if (this.invocationsSteered.has(`${functionKey}|${invocation.key}`)) return planned;
    const failedReceives = subscriber.failedReceives.get(target) ?? 0;
    const next = this.allowed.find((fault) => !subscriber.met.has(fault) && (!FAILS_THE_RECEIVE.has(fault) || failedReceives < subscriber.failedReceivesAllowed));
    if (next === undefined) return planned;
    subscriber.met.add(next);
    if (FAILS_THE_RECEIVE.has(next)) subscriber.failedReceives.set(target, failedReceives + 1);
    this.invocationsSteered.add(`${functionKey}|${invocation.key}`);
    if (next === 'conflict') this.contended.add(`${functionKey}|${invocation.key}|${target}`);
    return next;
  }
}
