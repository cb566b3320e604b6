/**
 * A verify run's events, told apart (simulator/verify/derived-events.ts): the run's own ids are those its commands
 * derive (they carry the run id); the events a subscriber emits without an id get the runtime's derived id
 * (lambda/fingerprint.ts derivedEventId), which does not carry it: they are listed apart, each with the event, the
 * subscriber and the position it derives from.
 */
import { describe, expect, test } from 'vitest';
import { derivedEventId } from '../../../lambda/fingerprint';
import { classifyRunEvents } from '../../../simulator/verify/derived-events';

const RUN = 'vmgq3k2f1-9c0e12ab';

function item(id: string, type: string, data: unknown) {
  return { event: { id, type, data } };
}

describe('classifyRunEvents', () => {
  test("the run's ids are its commands'; an event Billing emitted without an id is listed apart, with what it derives from", () => {
    // GIVEN an OrderPlaced of the run and the OrderBilled Billing emitted for it (the runtime derived its id)
    const placed = `order-placed-${RUN}-order-00001`;
    const billed = derivedEventId('Billing', placed, 0);
    const events = new Map([
      [placed, item(placed, 'OrderPlaced', { orderId: `${RUN}-order-00001` })],
      [billed, item(billed, 'OrderBilled', { orderId: `${RUN}-order-00001` })],
    ]);

    // WHEN verify tells them apart, knowing which subscriber took which event
    const classified = classifyRunEvents(events, RUN, new Map([['Billing', new Set([placed])], ['Shipping', new Set([placed])]]));

    // THEN the run's ids all carry the run id; the derived one names its source
    expect(classified.eventIds).toEqual([placed]);
    expect(classified.derivedEvents).toEqual([{ id: billed, type: 'OrderBilled', from: { eventId: placed, subscriber: 'Billing', index: 0 } }]);
  });

  test('finds a derived event at a later position, and one derived from a derived event; says when an id is neither', () => {
    const placed = `order-placed-${RUN}-order-00002`;
    const second = derivedEventId('Billing', placed, 2);
    const chained = derivedEventId('Stats', second, 0);
    const chosen = 'handler-chosen-id-7';
    const events = new Map([
      [placed, item(placed, 'OrderPlaced', { orderId: `${RUN}-order-00002` })],
      [second, item(second, 'OrderBilled', { orderId: `${RUN}-order-00002` })],
      [chained, item(chained, 'StatsUpdated', { orderId: `${RUN}-order-00002` })],
      [chosen, item(chosen, 'Audit', { about: `${RUN}-order-00002` })],
    ]);

    const classified = classifyRunEvents(events, RUN, new Map([['Billing', new Set([placed])], ['Stats', new Set([second])]]));

    expect(classified.eventIds).toEqual([placed]);
    expect(classified.derivedEvents).toEqual([
      { id: chosen, type: 'Audit' },
      { id: second, type: 'OrderBilled', from: { eventId: placed, subscriber: 'Billing', index: 2 } },
      { id: chained, type: 'StatsUpdated', from: { eventId: second, subscriber: 'Stats', index: 0 } },
    ].sort((a, b) => (a.id < b.id ? -1 : 1)));
  });
});
