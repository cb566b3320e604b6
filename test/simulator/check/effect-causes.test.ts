/** The causes an effect-count violation names: upstream of the subscriber first, its own writes outside the transaction over the faults that met them. */
import { describe, expect, test } from 'vitest';
import { effectCauses, ownExcess, upstreamOf, upstreamOfCount, type UpstreamFacts } from '../../../simulator/check/effect-causes';
import { fixFor, type CauseKind, type ViolationCause } from '../../../simulator/check/violation-cause';

function cause(kind: CauseKind, who: { subscriber?: string; producer?: string }, eventIds: string[]): ViolationCause {
  return { kind, ...who, eventIds, invocations: [], requests: [], fix: fixFor(kind) };
}

/** OrderPlaced p-1 committed twice by PlaceOrder (p-1, p-1b); Billing emitted b-1 for p-1 and b-2 for p-1b (tx.emit), Mailer emitted m-1 for b-1 with its own outbox write. */
const facts: UpstreamFacts = {
  repeatedCommands: [cause('event-id-per-attempt', { producer: 'Orders/PlaceOrder' }, ['p-1', 'p-1b'])],
  outboxWriters: [{ cause: cause('outbox-write-outside-transaction', { subscriber: 'Mailer' }, []), eventIds: new Set(['m-1', 'm-2']) }],
  emittedFor: (eventId) => ({ 'b-1': ['p-1'], 'b-2': ['p-1b'], 'm-1': ['b-1'] })[eventId] ?? [],
};

describe('upstreamOf', () => {
  test('a count of a consumer of the repeated command, or of what a consumer emitted for it, is the producer\'s: named with the producer and both ids', () => {
    for (const eventIds of [['p-1', 'p-2'], ['b-2']]) {
      const upstream = upstreamOf(facts, 'Stats', eventIds);
      expect(upstream?.causes).toEqual([{ ...facts.repeatedCommands[0], eventIds: ['p-1', 'p-1b'] }]);
      expect(upstream?.text).toBe(
        `upstream of Stats: the producer Orders/PlaceOrder committed one command under two event ids (p-1 and p-1b), and each was applied once: ${fixFor('event-id-per-attempt')}`,
      );
    }
  });

  test("a count of events another subscriber wrote to its outbox with its own client names that subscriber and tx.emit; the subscriber itself is not told it is upstream of itself", () => {
    const upstream = upstreamOf({ ...facts, repeatedCommands: [] }, 'Stats', ['m-1', 'x-9']);
    expect(upstream?.causes).toEqual([{ ...facts.outboxWriters[0]!.cause, eventIds: ['m-1'] }]);
    expect(upstream?.text).toBe(
      `upstream of Stats: the subscriber Mailer published the events this count reads (m-1) with an outbox write of its own, outside its transaction, so each redelivery to it published them again under new ids: ${fixFor('outbox-write-outside-transaction')}`,
    );
    expect(upstreamOf({ ...facts, repeatedCommands: [] }, 'Mailer', ['m-1'])).toBeUndefined();
  });

  test('nothing upstream: none', () => {
    expect(upstreamOf(facts, 'Stats', ['p-2', 'b-3'])).toBeUndefined();
  });
});

describe('effectCauses', () => {
  const told = [cause('applied-again', { subscriber: 'Stats' }, ['e-1']), cause('redelivery-after-crash', { subscriber: 'Stats' }, ['e-2']), cause('deduplication-window-expired', { subscriber: 'Stats' }, ['e-3'])];

  test("a consumer that applied ONE event twice keeps its own 'applied again' beside an upstream cause: both are named, its own first", () => {
    const upstream = cause('event-id-per-attempt', { producer: 'P' }, ['e-1', 'e-9']);
    expect(effectCauses([told[0]!], undefined, { text: '', causes: [upstream] })).toEqual([told[0], upstream]);
    expect(effectCauses(told, undefined, { text: '', causes: [upstream] }).map((found) => found.kind)).toEqual(['applied-again', 'redelivery-after-crash', 'deduplication-window-expired', 'event-id-per-attempt']);
    // a correct consumer (no story of its own): the upstream cause alone
    expect(effectCauses([], undefined, { text: '', causes: [upstream] })).toEqual([upstream]);
  });

  test('a write of its own client, once observed, is the cause over the faults that met each event', () => {
    const outside = cause('write-outside-transaction', { subscriber: 'Stats' }, ['e-1', 'e-2', 'e-3']);
    expect(effectCauses(told, outside, undefined).map((found) => found.kind)).toEqual(['write-outside-transaction', 'deduplication-window-expired']);
    // the invocations' story of it, when one event's tells it, is kept over the plain one
    const storied = cause('write-outside-transaction', { subscriber: 'Stats' }, ['e-4']);
    expect(effectCauses([...told, storied], outside, undefined)).toEqual([told[2], storied]);
  });

  test('neither: the invocations\' story as told', () => {
    expect(effectCauses(told, undefined, undefined)).toEqual(told);
  });
});

describe('upstreamOfCount: an upstream cause excuses only what the consumer\'s own applications do not account for', () => {
  const upstream = { text: 'upstream of Stats: ...', causes: [cause('event-id-per-attempt', { producer: 'P' }, ['e-1', 'e-9'])] };
  const twice = { ...cause('applied-again', { subscriber: 'Stats' }, ['e-1']), invocations: [{ number: 1, atSeconds: 0, role: 'applied' as const }, { number: 4, atSeconds: 180, role: 'applied-again' as const }] };

  test('a count one too many, the consumer having applied its one event twice: its own doing, the producer\'s two ids not in it', () => {
    expect(ownExcess([twice])).toBe(1);
    expect(upstreamOfCount(upstream, [twice], 1)).toBeUndefined();
  });

  test('a count that spans both ids (each applied once by the consumer): the producer\'s', () => {
    expect(ownExcess([])).toBe(0);
    expect(upstreamOfCount(upstream, [], 1)).toBe(upstream);
  });

  test('both: a count two too many, the consumer having applied one id twice and the producer committed the command twice', () => {
    expect(upstreamOfCount(upstream, [twice], 2)).toBe(upstream);
  });

  test('an SDK resend in one invocation (one invocation referenced) is one application too many', () => {
    const resent = { ...cause('sdk-retry-after-lost-response', { subscriber: 'Stats' }, ['e-1']), invocations: [{ number: 2, atSeconds: 0, role: 'applied' as const }] };
    expect(ownExcess([resent])).toBe(1);
    expect(upstreamOfCount(undefined, [resent], 1)).toBeUndefined();
  });
});
