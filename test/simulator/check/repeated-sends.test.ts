/**
 * Effects outside DynamoDB: the SQS messages the app's functions send with their own clients are counted per
 * (function, event); one event's message sent again by another invocation (a redelivery) fails the run.
 */
import { describe, expect, test } from 'vitest';
import { attributeSends, checkRepeatedSends } from '../../../simulator/check/repeated-sends';
import type { AppSend } from '../../../simulator/observation/observer';

function send(invocation: string, invocationEventIds: readonly string[], body: string, functionName = 'Seats', queueName = 'notifications'): AppSend {
  return { functionKey: `Stack/${functionName}`, functionName, invocation, invocationEventIds, queue: `Stack/${queueName}`, queueName, messageId: `m-${invocation}-${body}`, body };
}

describe('attributeSends', () => {
  test('attributes a send to the event its body names, else to the only event of its invocation', () => {
    const sends = attributeSends([
      send('i1', ['event-1', 'event-2'], JSON.stringify({ orderEventId: 'event-2', seat: 'A1' })),
      send('i2', ['event-3'], JSON.stringify({ seat: 'B2' })),
      send('i3', ['event-4', 'event-5'], JSON.stringify({ seat: 'C3' })),
    ]);

    expect(sends.map((entry) => entry.eventId)).toEqual(['event-2', 'event-3', undefined]);
  });
});

describe('repeated-send', () => {
  test('fails when one event\'s message is sent by two invocations of a function, naming the function, queue, event and count', () => {
    // GIVEN a transactional handler that sends with its own client, redelivered once for event-1
    const sends = [send('i1', ['event-1'], '{"seat":"A1"}'), send('i2', ['event-1'], '{"seat":"A1"}'), send('i3', ['event-2'], '{"seat":"B2"}')];

    const { violations, figures } = checkRepeatedSends(attributeSends(sends));

    expect(violations).toEqual([
      {
        kind: 'repeated-send',
        detail: expect.stringMatching(/^Seats sent 3 SQS message\(s\) to notifications for 2 event\(s\); 1 event\(s\) got more than one, each from another invocation \(a redelivery repeated the send\): event-1 \(2 sends\)/),
      },
    ]);
    expect(figures).toEqual([{ functionName: 'Seats', queueName: 'notifications', sends: 3, events: 2, repeatedEvents: 1, repeats: [{ eventId: 'event-1', sends: 2, invocations: 2 }] }]);
  });

  test('passes several messages one invocation sends for one event, and messages of distinct events', () => {
    const sends = [send('i1', ['event-1'], '{"line":1}'), send('i1', ['event-1'], '{"line":2}'), send('i2', ['event-2'], '{"line":1}')];

    expect(checkRepeatedSends(attributeSends(sends)).violations).toEqual([]);
  });

  test('without an event to attribute it to, the same body sent by two invocations is a repeat', () => {
    const sends = [send('producer|1|1', [], '{"order":"O1"}', 'PlaceOrder'), send('producer|1|2', [], '{"order":"O1"}', 'PlaceOrder'), send('producer|2|1', [], '{"order":"O2"}', 'PlaceOrder')];

    const { violations } = checkRepeatedSends(attributeSends(sends));

    expect(violations).toEqual([{ kind: 'repeated-send', detail: expect.stringContaining('PlaceOrder sent 3 SQS message(s) to notifications') }]);
    expect(violations[0]!.detail).toContain('the same body from 2 invocations: {"order":"O1"}');
  });
});
