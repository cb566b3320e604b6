/** The causes an effect-count violation names: upstream of the subscriber first, its own writes outside the transaction over the faults that met them. */
import { describe, expect, test } from 'vitest';
import { effectCauses, upstreamOf, type UpstreamFacts } from '../../../simulator/check/effect-causes';
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

  test("an upstream cause replaces the plain 'applied again' of a correct consumer; a consumer whose story names a mistake of its own keeps it first", () => {
    const upstream = cause('event-id-per-attempt', { producer: 'P' }, ['e-1', 'e-9']);
    expect(effectCauses([told[0]!], undefined, { text: '', causes: [upstream] })).toEqual([upstream]);
    expect(effectCauses(told, undefined, { text: '', causes: [upstream] }).map((found) => found.kind)).toEqual(['redelivery-after-crash', 'deduplication-window-expired', 'event-id-per-attempt']);
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
