/**
 * Steers faults to the subscribers that have not met them. Random faults at the default rates may miss a subscriber's
 * failure paths altogether (a run with few transaction conflicts never fails a record of some subscriber, so a wrapper
 * that swallows failures passes), and an OK would then prove nothing about them. So, per subscriber consumer, each
 * fault its rates allow that the random plan has not yet given it is injected once, at a write of one of its inbox
 * records (`<subscriber>#<event id>`: the claim or the commit), each on another event and in another invocation:
 *
 * - `conflict`: the write is refused with a transaction conflict, as DynamoDB refuses one that meets an ongoing
 *   transaction, and so is every write of that inbox record for the rest of the invocation (an item contended
 *   throughout), so the runtime's own conflict retries give up and the record fails, to be retried by SQS: steered
 *   when the throttle rate is above 0, both being DynamoDB refusing a request;
 * - `lose-response`: the write is applied and its response lost (the lost-response rate above 0);
 * - `crash-before` and `crash-after`: the process dies before the write is sent, and after it was applied (the crash
 *   rate above 0).
 *
 * One fault per event at most (so no event is pushed towards its queue's `maxReceiveCount` by steering); decided in
 * the order the run's requests reach the proxies, which the seeded scheduler makes a function of the seed.
 */
import type { RequestFault } from './dynamodb-proxy';
import type { FaultRates } from './fault-plan';

/** The faults steering injects, in the order it gives them to a subscriber. */
export const STEERED_FAULTS = ['conflict', 'lose-response', 'crash-before', 'crash-after'] as const;

/** A fault steering may inject. */
export type SteeredFault = (typeof STEERED_FAULTS)[number];

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
  /** The events a fault was steered to. */
  readonly events: Set<string>;
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

  /** Steers faults to the consumer function `functionKey` of subscriber `name`. */
  public addSubscriber(functionKey: string, name: string): void {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.subscribers.set(functionKey, { name, inboxKey: new RegExp(`"S":"${escaped}#([^"#]+)"`), met: new Set(), events: new Set() });
  }

  /**
   * The fault for a request the random plan left alone (`planned` is its decision, noted as met when it is a fault):
   * a steered one when the request is a write of an inbox record of a subscriber still missing a fault, else `planned`.
   */
  public decide(functionKey: string, invocationKey: string, operation: string, body: string, planned: RequestFault): RequestFault {
    const subscriber = this.subscribers.get(functionKey);
    if (subscriber === undefined) return planned;
    const eventId = STEERABLE_OPERATIONS.has(operation) ? subscriber.inboxKey.exec(body)?.[1] : undefined;
    // a contended record stays contended for the invocation, whatever the plan drew for the write
    if (eventId !== undefined && this.contended.has(`${functionKey}|${invocationKey}|${eventId}`)) return 'conflict';
    if (planned !== 'none') {
      subscriber.met.add(planned);
      return planned;
    }
    if (eventId === undefined) return planned;
    const next = this.allowed.find((fault) => !subscriber.met.has(fault));
    if (next === undefined || subscriber.events.has(eventId) || this.invocationsSteered.has(`${functionKey}|${invocationKey}`)) return planned;
    subscriber.met.add(next);
    subscriber.events.add(eventId);
    this.invocationsSteered.add(`${functionKey}|${invocationKey}`);
    if (next === 'conflict') this.contended.add(`${functionKey}|${invocationKey}|${eventId}`);
    return next;
  }
}
