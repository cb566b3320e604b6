/**
 * The HTTP calls of a lease or multi-step consumer made outside its lease: the cause of an effect applied again that
 * the run's DynamoDB requests cannot show (an HTTP effect writes nothing there). The worker reports each call its
 * invocation starts to a service outside the simulator, with how many DynamoDB requests the invocation had sent by
 * then, and each DynamoDB request carries its number in that order: so a call is placed against the runtime's writes
 * of the processing records (the claim, each step's record, the completion).
 *
 * A call is made for the events its path or query names (a whole segment or value: the event's id, else its subject),
 * else for every event its invocation carried. It is inside a lease when, for one of those events, the last write of
 * that event's record the invocation had sent before the call, and DynamoDB applied, holds the lease (a claim, a takeover, a step's success
 * that starts the next step). Any other call was made outside every lease: before the runtime claimed (a handler that
 * calls, then hands the event to the consumer), or after its lease ended (completed, released, refused). A call that
 * names no event, made while some of its invocation's events held their lease and others did not, cannot be placed:
 * it may be a handle's call inside its event's lease as well as a call outside the others'. Such a call is
 * unattributed: never the cause, and never counted, only told beside a cause its site has. A redelivery
 * repeats such a call whatever the record says, so a repeated one is the cause of its count, unless each invocation
 * that repeated it held a lease it claimed for the event (then the handle ran again too: the window, lease or crash
 * that let it claim again is the cause). A read (GET, HEAD, OPTIONS) applies nothing and is never counted.
 */
import { PROCESSING_RECORD } from '../../lambda/contract/wire-format';
import type { OutsideCall } from '../lambda/worker-protocol';
import type { CallReference } from './violation-cause';

/** A write of the runtime to the processing record of one of the invocation's events. */
export interface RuntimeWrite {
  readonly eventId: string;
  /** Its number in the order the function sent them. @default unknown */
  readonly sequence?: number;
  readonly applied: boolean;
  /** The request body (DynamoDB JSON). */
  readonly body: string;
}

/** A call made outside every lease of its invocation, and the events it may have been made for. */
export interface CallOutsideLease {
  readonly call: OutsideCall;
  readonly when: CallReference['when'];
  readonly eventIds: readonly string[];
  /** Made for one of a batch's events, which its path does not say: counted for each of them. */
  readonly shared: boolean;
  /**
   * A call that names no event, made while some of the invocation's events held their lease and others (`eventIds`)
   * did not: the run cannot place it (see the module comment), so it is never counted nor the cause. @default false
   */
  readonly unattributed?: boolean;
}

/**
 * The calls of one invocation made outside every lease it held (see the module comment); none when the order of a
 * runtime write is unknown (a worker that numbers no request). `carried` are the invocation's events, `subjects` their
 * subjects: a call is made for the events its path names (by id, else by subject), else for every event it carried.
 */
export function callsOutsideLease(
  calls: readonly OutsideCall[],
  writes: readonly RuntimeWrite[],
  carried: readonly string[],
  subjects: ReadonlyMap<string, string>,
): CallOutsideLease[] {
  if (calls.length === 0 || writes.some((write) => write.sequence === undefined)) return [];
  const ordered = [...writes].sort((a, b) => a.sequence! - b.sequence!);
  return calls.flatMap((call) => {
    // a read applies nothing: a redelivery that repeats it repeats no effect
    if (SAFE_METHODS.has(call.method.toUpperCase())) return [];
    const named = madeFor(call, carried, subjects);
    // judged by the events it was made for: a batch's call that names none, by every event it carried
    const eventIds = named ?? [...carried];
    const sent = ordered.filter((write) => write.sequence! <= call.afterRequest && eventIds.includes(write.eventId));
    const holding = eventIds.filter((eventId) => {
      const last = sent.filter((write) => write.eventId === eventId && write.applied).at(-1);
      return last !== undefined && holdsLease(last.body);
    });
    if (holding.length === 0) return [{ call, when: when(sent), eventIds, shared: named === undefined && carried.length > 1 }];
    // a call it names is inside its event's lease; one that names none is inside only if every event held its lease
    if (named !== undefined || holding.length === eventIds.length) return [];
    const others = eventIds.filter((eventId) => !holding.includes(eventId));
    return [{ call, when: when(sent.filter((write) => others.includes(write.eventId))), eventIds: others, shared: others.length > 1, unattributed: true }];
  });
}

/** Where a call stood against its events' writes sent before it, none holding a lease: before any, or after them. */
function when(sent: readonly RuntimeWrite[]): CallReference['when'] {
  return sent.length === 0 ? 'before-claim' : 'after-lease';
}

/** The methods that read (RFC 9110 safe methods): a repeated one is no effect applied again. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The events a call names by id, else by subject, in its path or query; undefined when it names none. */
function madeFor(call: OutsideCall, carried: readonly string[], subjects: ReadonlyMap<string, string>): string[] | undefined {
  const tokens = [...call.path.split('/'), ...(call.query ?? [])].map(decoded);
  const byId = carried.filter((eventId) => names(tokens, eventId));
  if (byId.length > 0) return byId;
  const bySubject = carried.filter((eventId) => subjects.get(eventId) !== undefined && names(tokens, subjects.get(eventId)!));
  return bySubject.length > 0 ? bySubject : undefined;
}

/** Whether one of a call's path segments or query values is `value` whole, or with an extension (`evt-1.json`): not `order-1` in `order-10`, nor `2` in `v2`. */
function names(tokens: readonly string[], value: string): boolean {
  return tokens.some((token) => token === value || (token.startsWith(`${value}.`) && !token.slice(value.length + 1).includes('.')));
}

function decoded(token: string): string {
  try {
    return decodeURIComponent(token);
  } catch {
    return token;
  }
}

/**
 * Whether a write of the processing record leaves its writer holding the lease: it sets the lease's expiry to a time
 * (a claim's Put, a takeover's or a step's update), where a completion, a block or a release removes it or sets 0.
 */
export function holdsLease(body: string): boolean {
  const lease = PROCESSING_RECORD.LEASE_EXPIRES_AT_ATTRIBUTE;
  let request: {
    Item?: Record<string, { N?: string }>;
    UpdateExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, { N?: string }>;
  };
  try {
    request = JSON.parse(body) as typeof request;
  } catch {
    return false;
  }
  if (request.Item !== undefined) return Number(request.Item[lease]?.N) > 0;
  const set = /\bSET\b([\s\S]*?)(?=\bREMOVE\b|$)/i.exec(request.UpdateExpression ?? '')?.[1] ?? '';
  return Object.entries(request.ExpressionAttributeNames ?? {})
    .filter(([, name]) => name === lease)
    .some(([placeholder]) => {
      const value = new RegExp(`${placeholder}\\s*=\\s*(:[A-Za-z0-9_]+)`).exec(set)?.[1];
      return value !== undefined && Number(request.ExpressionAttributeValues?.[value]?.N) > 0;
    });
}

/**
 * Whether each of a site's calls was made by an invocation that held a lease it claimed for the event (`leased`), once
 * per invocation (a batch's calls that name no event count once): the handle ran in each of them too, so the window,
 * lease or crash that let it claim again explains the count, not the call.
 */
function eachUnderItsOwnClaim(made: readonly { readonly invocation: string; readonly call: CallOutsideLease; readonly leased?: boolean }[], indexes: readonly number[]): boolean {
  const calls = new Map<string, Set<string>>();
  for (const index of indexes) {
    const { invocation, call } = made[index]!;
    calls.set(invocation, (calls.get(invocation) ?? new Set()).add(call.shared ? 'batch' : String(index)));
  }
  return [...calls.values()].every((ones) => ones.size === 1) && indexes.every((index) => made[index]!.leased === true);
}

/** The calls outside the lease told: the text, the calls as fields, and which of `made` it tells (their indexes). */
export interface LeaseCallsTold {
  readonly text: string;
  readonly calls: readonly CallReference[];
  readonly made: readonly { readonly index: number }[];
}

/**
 * The story of an event's calls outside the lease (`made`: each call, with the label of the invocation that made it),
 * told for each call repeated (made twice or more: by two deliveries, or twice by one) unless each invocation that made
 * it held a lease it claimed for the event (`leased`); undefined when none was.
 * `step` words it for a multi-step consumer (outside any step).
 */
export function leaseCallsText(
  made: readonly { readonly invocation: string; readonly call: CallOutsideLease; readonly leased?: boolean }[],
  step: boolean,
): LeaseCallsTold | undefined {
  const groups = new Map<string, number[]>();
  const unplaced = new Map<string, string[]>();
  made.forEach(({ invocation, call: { call, unattributed } }, index) => {
    const site = `${call.method} ${call.host}${call.path}`;
    // a call the run cannot place is never counted: told only beside its site's placed calls
    if (unattributed === true) unplaced.set(site, [...(unplaced.get(site) ?? []), invocation]);
    else groups.set(site, [...(groups.get(site) ?? []), index]);
  });
  const repeated = [...groups].filter(([, indexes]) => indexes.length >= 2 && !eachUnderItsOwnClaim(made, indexes));
  if (repeated.length === 0) return undefined;
  const where = step ? 'outside any step' : 'outside the lease';
  const texts = repeated.map(([site, indexes]) => {
    const byInvocation = new Map<string, { count: number; batch?: number }>();
    for (const index of indexes) {
      const { invocation, call } = made[index]!;
      const seen = byInvocation.get(invocation) ?? { count: 0, ...(call.shared ? { batch: call.eventIds.length } : {}) };
      seen.count += 1;
      byInvocation.set(invocation, seen);
    }
    // a batch's calls that name no event: the invocation made them for its events, which ones is not known
    const [first, ...rest] = [...byInvocation].map(([label, { count, batch }]) =>
      batch !== undefined ? `${label} (${count} call(s) for its batch of ${batch} events)` : count > 1 ? `${label} ${count} times` : label,
    );
    const whens = new Set(indexes.map((index) => made[index]!.call.when));
    // a multi-step consumer's first write is its first step's claim, its lease ends with its last step
    const [claim, ended] = step ? ["the first step's claim", 'its steps ended'] : ['the lease claim', 'the lease ended'];
    const when = whens.size > 1 ? `before ${claim} or after ${ended}` : whens.has('before-claim') ? `each time before ${claim}` : `each time after ${ended} (completed, released or refused)`;
    const unplacedBy = unplaced.get(site) ?? [];
    const beside =
      unplacedBy.length === 0
        ? ''
        : `; ${unplacedBy.length} more call(s) of it the run cannot place, by ${[...new Set(unplacedBy)].join(' and ')} (it names no event, and another event of its batch held its lease then)`;
    return `${site} was called ${where} by ${first!}${rest.length === 0 ? '' : ` and again by ${rest.join(' and ')}`}, ${when}${beside}`;
  });
  const references = new Map<string, { method: string; host: string; path: string; count: number; when: CallReference['when'] }>();
  for (const [, indexes] of repeated) {
    for (const index of indexes) {
      const { call, when } = made[index]!.call;
      const key = `${call.method} ${call.host}${call.path} ${when}`;
      const reference = references.get(key) ?? { method: call.method, host: call.host, path: call.path, count: 0, when };
      reference.count += 1;
      references.set(key, reference);
    }
  }
  return { text: texts.join('; '), calls: [...references.values()], made: repeated.flatMap(([, indexes]) => indexes.map((index) => ({ index }))) };
}
