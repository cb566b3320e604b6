/**
 * Review rv9, V-5 (red, product not fixed): verify reads a dead-letter queue "whole" by receiving until a receive
 * returns nothing new, then compares with the queue's counts (simulator/verify/observe.ts, receiveWhole). An ordered
 * subscriber's dead-letter queue is FIFO, and SQS returns no message of a message group while another of that group is
 * in flight ("While messages with a particular message group ID are invisible, no more messages belonging to the same
 * message group ID are returned until the visibility timeout expires": SQS developer guide, FIFO queue logic). So when
 * one aggregate (a message group) has more dead letters than one ReceiveMessage returns (at most 10; AWS may return
 * fewer), verify can never read the queue whole: DeadLettersUnreadError at every look, the wait held to its time limit,
 * then "not quiet" or NOT PROVEN, for a case a broken ordered subscriber produces every time (a failing head, then
 * every later event of its aggregate dead-lettered behind it). The simulator's FIFO queue models that rule, so this
 * runs on it: 12 dead letters of one group are read whole.
 */
import { expect, test } from 'vitest';
import { receiveWhole } from '../../../simulator/verify/observe';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();

test('V-5: an ordered subscriber\'s FIFO dead-letter queue holding 12 dead letters of one aggregate is read whole', async () => {
  const deadLetters = makeQueue(queueModel('OrderedDlq.fifo', { fifo: true, contentBasedDeduplication: true }), { clock: bed.clock, baseUrl: bed.server.endpoint });
  bed.queues.set(deadLetters.address.url, deadLetters);
  for (let sequence = 1; sequence <= 12; sequence += 1) {
    deadLetters.send({ body: JSON.stringify({ id: `evt-order-1-${sequence}`, type: 'StepDone', sequence }), messageGroupId: 'order-1', origin: { via: 'sns', eventId: `evt-order-1-${sequence}` } });
  }

  const messages = await receiveWhole(bed.clients(), deadLetters.address.url);

  expect(messages).toHaveLength(12);
});
