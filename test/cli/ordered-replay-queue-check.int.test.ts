/**
 * `fence replay --yes` and ordered `replay --yes` send only with the subscriber's Operator output: a FIFO queue typed as
 * `--queue` alone (a pasted staging queue, another flow's ordered subscriber) would take this outbox's events, and a
 * fresh aggregate's fence there admits them. With the output, a typed `--queue` other than its queue is refused, naming
 * both (review ro15, RO15-4). A dry run still takes the typed flags.
 */
import { expect, test } from 'vitest';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { replayNeedsOutputLine } from '../../operator/cli/replay-needs-output';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { cli } from './operator-services';
import { aggregateWithOneApplied, clock, endpoint, inboxConfig, orderedSubscriberOutput, outboxConfig, SUBSCRIBER, useOrderedWorld } from './ordered-redrive-kit';

let queue: SimulatedQueue;
let other: SimulatedQueue;

useOrderedWorld((baseUrl) => {
  queue = makeQueue(queueModel('LedgerReplayCheck.fifo', { fifo: true, queueName: 'LedgerReplayCheck.fifo' }), { clock, baseUrl });
  // another deployment's queue (its consumer uses another inbox table)
  other = makeQueue(queueModel('StagingLedger.fifo', { fifo: true, queueName: 'StagingLedger.fifo' }), { clock, baseUrl });
  return [queue, other];
});

const output = (): string => orderedSubscriberOutput(queue);

test('fence replay --yes with a typed --queue and no --subscriber-output is refused; with the output, another --queue is refused naming both', async () => {
  const { aggregate } = await aggregateWithOneApplied('fence');
  const typed = ['fence', 'replay', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--outbox-table', outboxConfig.outboxTableName, '--queue', other.address.url];
  expect((await cli({ clock, endpoint }, ...typed)).code).toBe(0);
  const run = await cli({ clock, endpoint }, ...typed, '--yes');
  expect({ code: run.code, inOtherQueue: other.messages().length }).toEqual({ code: 2, inOtherQueue: 0 });
  expect(run.stderr).toContain(replayNeedsOutputLine('fence replay'));
  const mismatch = await cli({ clock, endpoint }, 'fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', output(), '--queue', other.address.url, '--yes');
  expect({ code: mismatch.code, inOtherQueue: other.messages().length, inQueue: queue.messages().length }).toEqual({ code: 2, inOtherQueue: 0, inQueue: 0 });
  expect(mismatch.stderr).toContain(other.address.url);
  expect(mismatch.stderr).toContain(queue.address.url);
  const sent = await cli({ clock, endpoint }, 'fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', output(), '--queue', queue.address.url, '--yes');
  expect({ code: sent.code, inQueue: queue.messages().length }).toEqual({ code: 0, inQueue: 1 });
  for (const message of queue.receive(10)) queue.delete(message.receiptHandle);
});

test('ordered replay --yes to a typed FIFO --queue without --subscriber-output is refused; with the output, another --queue is refused naming both', async () => {
  const { events } = await aggregateWithOneApplied('replay');
  const typed = ['replay', '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '1h', '--inbox-table', inboxConfig.inboxTableName, '--table', outboxConfig.outboxTableName, '--queue', other.address.url, '--event-id', events[1]!.id];
  expect((await cli({ clock, endpoint }, ...typed)).code).toBe(0);
  const run = await cli({ clock, endpoint }, ...typed, '--yes');
  expect({ code: run.code, inOtherQueue: other.messages().length }).toEqual({ code: 2, inOtherQueue: 0 });
  expect(run.stderr).toContain(replayNeedsOutputLine('replay'));
  const mismatch = await cli({ clock, endpoint }, 'replay', '--subscriber-output', output(), '--queue', other.address.url, '--event-id', events[1]!.id, '--yes');
  expect({ code: mismatch.code, inOtherQueue: other.messages().length, inQueue: queue.messages().length }).toEqual({ code: 2, inOtherQueue: 0, inQueue: 0 });
  expect(mismatch.stderr).toContain(other.address.url);
  expect(mismatch.stderr).toContain(queue.address.url);
  const sent = await cli({ clock, endpoint }, 'replay', '--subscriber-output', output(), '--event-id', events[1]!.id, '--yes');
  expect({ code: sent.code, inQueue: queue.messages().length }).toEqual({ code: 0, inQueue: 1 });
  for (const message of queue.receive(10)) queue.delete(message.receiptHandle);
});
