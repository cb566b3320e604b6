/**
 * `fence replay --yes` and ordered `replay --yes` run again within SQS's 5-minute deduplication interval (the first
 * run's event was dead-lettered by a failing handler, which the operator fixed) must send the event again, not have it
 * dropped by SQS as a resend of the first run's while saying it was sent (review ro15, RO15-3).
 */
import { expect, test } from 'vitest';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { cli } from './operator-services';
import { aggregateWithOneApplied, clock, endpoint, orderedSubscriberOutput, SUBSCRIBER, useOrderedWorld } from './ordered-redrive-kit';

let queue: SimulatedQueue;

useOrderedWorld((baseUrl) => {
  queue = makeQueue(queueModel('ReplayRerun.fifo', { fifo: true, queueName: 'ReplayRerun.fifo' }), { clock, baseUrl });
  return [queue];
});

/** The subscriber's Operator output, naming the test's tables and queue. */
const output = (): string => orderedSubscriberOutput(queue);

/** The handler rejects what was sent (PermanentError): the consumer dead-letters it and acknowledges it. */
function rejectEverything(): void {
  for (const message of queue.receive(10)) queue.delete(message.receiptHandle);
  expect(queue.messages()).toHaveLength(0);
}

test('fence replay --yes run again 2 minutes later sends the event again', async () => {
  const { aggregate } = await aggregateWithOneApplied('fence-replay');
  const args = ['fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', output(), '--yes'];
  expect((await cli({ clock, endpoint }, ...args)).code).toBe(0);
  rejectEverything();
  // fixed, the operator replays again, within SQS's deduplication interval
  clock.advanceBy(120_000);
  const second = await cli({ clock, endpoint }, ...args);
  expect({ code: second.code, said: second.stdout.split('\n')[0], inQueue: queue.messages().length }).toEqual({ code: 0, said: `sent 1 event(s) of ${aggregate}:`, inQueue: 1 });
  rejectEverything();
});

test('ordered replay --yes run again 2 minutes later sends the event again', async () => {
  const { events } = await aggregateWithOneApplied('replay');
  const args = ['replay', '--subscriber-output', output(), '--event-id', events[1]!.id, '--yes'];
  expect((await cli({ clock, endpoint }, ...args)).code).toBe(0);
  rejectEverything();
  clock.advanceBy(120_000);
  const second = await cli({ clock, endpoint }, ...args);
  expect({ code: second.code, inQueue: queue.messages().length }, second.stdout).toEqual({ code: 0, inQueue: 1 });
  rejectEverything();
});
