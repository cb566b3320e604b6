/**
 * Effects outside DynamoDB: the SQS messages the app's functions send with their own clients. The inbox makes the
 * DynamoDB effects of a redelivered event happen once; a message a handler sends with its own client is sent again
 * on every redelivery (the outbox, or a step of a lease or multi-step consumer, is what sends once). Each send is
 * attributed to an event: the one of its invocation's events its body names, else its invocation's only event. The
 * check counts sends per (function, queue, event) and fails when one event's messages came from more than one
 * invocation: a redelivery repeated the send. Several messages of one invocation for one event are the handler's
 * design, not a repeat. A send with no event to attribute it to (a producer command, a batch whose body names none of
 * its events) is a repeat when the same body came from more than one invocation.
 */
import type { AppSend } from '../observation/observer';
import type { Violation } from './invariants';

/** A send and the event it is attributed to. */
export interface AttributedSend extends AppSend {
  /** The event the send is for; undefined when it cannot be told. */
  readonly eventId?: string;
}

/** Per function and queue: what was sent, for how many events, and how many of those got sends from several invocations. */
export interface SendFigures {
  readonly functionName: string;
  readonly queueName: string;
  readonly sends: number;
  /** Events the sends were attributed to. */
  readonly events: number;
  /** Events (or, unattributed, bodies) whose sends came from more than one invocation. */
  readonly repeatedEvents: number;
  /** Each of those: the event (or, unattributed, the body), its sends and the invocations they came from. */
  readonly repeats: readonly SendRepeat[];
}

/** One event's (or one body's) sends that came from more than one invocation. */
export interface SendRepeat {
  readonly eventId?: string;
  /** The body, when the sends could not be attributed to an event. */
  readonly body?: string;
  readonly sends: number;
  readonly invocations: number;
}

/** Repeats named per violation. */
const MAX_REPEATS_LISTED = 3;
/** Longest body quoted. */
const MAX_BODY_CHARACTERS = 120;

/** The event of its invocation a send is for (see the module comment). */
function eventOf(send: AppSend): string | undefined {
  const named = send.invocationEventIds.filter((eventId) => send.body.includes(eventId));
  if (named.length === 1) return named[0];
  return send.invocationEventIds.length === 1 ? send.invocationEventIds[0] : undefined;
}

/** Each send with the event it is attributed to. */
export function attributeSends(sends: readonly AppSend[]): AttributedSend[] {
  return sends.map((send) => {
    const eventId = eventOf(send);
    return eventId === undefined ? { ...send } : { ...send, eventId };
  });
}

function quoted(body: string): string {
  return body.length > MAX_BODY_CHARACTERS ? `${body.slice(0, MAX_BODY_CHARACTERS - 1)}…` : body;
}

/** The figures per function and queue, and a violation per function and queue with a repeated send. */
export function checkRepeatedSends(sends: readonly AttributedSend[]): { readonly violations: Violation[]; readonly figures: SendFigures[] } {
  const groups = new Map<string, { functionName: string; queueName: string; sends: number; events: Set<string>; byKey: Map<string, { label: string; invocations: Set<string>; sends: number }> }>();
  for (const send of sends) {
    const groupKey = JSON.stringify([send.functionKey, send.queue]);
    const group = groups.get(groupKey) ?? { functionName: send.functionName, queueName: send.queueName, sends: 0, events: new Set<string>(), byKey: new Map() };
    group.sends += 1;
    if (send.eventId !== undefined) group.events.add(send.eventId);
    const key = send.eventId === undefined ? `body:${send.body}` : `event:${send.eventId}`;
    const entry = group.byKey.get(key) ?? { label: send.eventId ?? '', invocations: new Set<string>(), sends: 0 };
    entry.invocations.add(send.invocation);
    entry.sends += 1;
    if (send.eventId === undefined) entry.label = quoted(send.body);
    group.byKey.set(key, entry);
    groups.set(groupKey, group);
  }
  const violations: Violation[] = [];
  const figures: SendFigures[] = [];
  for (const group of groups.values()) {
    const repeats = [...group.byKey.entries()].filter(([, entry]) => entry.invocations.size > 1);
    figures.push({
      functionName: group.functionName,
      queueName: group.queueName,
      sends: group.sends,
      events: group.events.size,
      repeatedEvents: repeats.length,
      repeats: repeats.map(([key, entry]) => ({
        ...(key.startsWith('event:') ? { eventId: entry.label } : { body: key.slice('body:'.length) }),
        sends: entry.sends,
        invocations: entry.invocations.size,
      })),
    });
    if (repeats.length === 0) continue;
    const listed = repeats
      .slice(0, MAX_REPEATS_LISTED)
      .map(([key, entry]) => (key.startsWith('event:') ? `${entry.label} (${entry.sends} sends)` : `the same body from ${entry.invocations.size} invocations: ${entry.label}`))
      .join('; ');
    const more = repeats.length > MAX_REPEATS_LISTED ? `; and ${repeats.length - MAX_REPEATS_LISTED} more` : '';
    violations.push({
      kind: 'repeated-send',
      detail:
        `${group.functionName} sent ${group.sends} SQS message(s) to ${group.queueName} for ${group.events.size} event(s); ${repeats.length} event(s) got more than one, ` +
        `each from another invocation (a redelivery repeated the send): ${listed}${more}. A message sent with the function's own client is sent again on ` +
        'every redelivery: publish it through the outbox (an event in the same transaction), or send it from a step of a lease or multi-step consumer',
    });
  }
  return { violations, figures };
}
