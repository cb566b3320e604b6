/**
 * A `dlq redrive --yes` / `fence redrive --yes` that dies between a letter's SendMessage to the subscriber's queue and
 * its DeleteMessage, run again within SQS's 5-minute deduplication interval after the consumer dead-lettered the event
 * again: the rerun's send of the letter must not be dropped as a resend of the first (then the letter and its new copy
 * would both be deleted, and the event lost: review ro15, RO15-1).
 */
import { DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { expect, test } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../operator/ordered/redrive-plan';
import { readOrderedDeadLetters } from '../../operator/cli/dead-letters/ordered-queue-read';
import { receiveMessages, releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { byUrl, clock, endpoint, orderedBody as body, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();
const idsOf = (queue: SimulatedQueue): string[] => queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id).sort();

function queues(name: string): { dlq: SimulatedQueue; queue: SimulatedQueue } {
  const dlq = makeQueue(queueModel(`${name}Dlq.fifo`, { fifo: true, queueName: `${name}Dlq.fifo`, contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel(`${name}Q.fifo`, { fifo: true, queueName: `${name}Q.fifo`, contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  return { dlq, queue };
}

/** `sqs` whose DeleteMessage on `url` fails (Ctrl-C, a network error or throttling after the send). */
function deleteFailsOn(url: string): SQSClient {
  return new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        if (command instanceof DeleteMessageCommand && command.input.QueueUrl === url) throw new Error('connection reset');
        return (target.send as (c: unknown) => Promise<unknown>)(command);
      };
    },
  });
}

test('a rerun within 5 minutes of a redrive that died between a send and its delete, the event dead-lettered again meanwhile, sends the event again', async () => {
  const { dlq, queue } = queues('CrashedSend');
  // agg a: fence at 1, A2 (its only letter) ready
  dlq.send({ body: body('A2', 'a', 2), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'consumer-receive-1', origin: { via: 'send-message' } });
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 1, appliedEventId: 'A1' }) };
  const request = (client: SQSClient) => ({
    sqs: client,
    deadLetterQueueUrl: dlq.address.url,
    select: (message: { messageId: string; body: string }) => ({ id: message.messageId, body: message.body }),
    plan: (letters: readonly { id: string; body: string }[]) => planOrderedRedrive(letters, fences, { find: async () => undefined }),
    sendTo: queue.address.url,
  });
  // run 1: sends A2 to the subscriber's queue, dies deleting it from the DLQ
  await expect(readOrderedDeadLetters(request(deleteFailsOn(dlq.address.url)))).rejects.toThrow('connection reset');
  // the consumer receives A2, still rejects it (PermanentError), dead-letters it again (a new letter, per-receive dedup id) and acks it
  const [delivered] = await receiveMessages(sqs, queue.address.url);
  expect(JSON.parse(delivered!.body).id).toBe('A2');
  dlq.send({ body: delivered!.body, messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'consumer-receive-2', origin: { via: 'send-message' } });
  await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.address.url, ReceiptHandle: delivered!.receiptHandle }));
  // run 1's receipt of the original runs out (120 s): the original is visible again, in front of the new letter
  clock.advanceBy(121_000);
  expect(idsOf(dlq)).toEqual(['A2', 'A2']);
  // run 2, within 5 minutes of run 1's send
  const read = await readOrderedDeadLetters(request(sqs));
  await releaseMessages(sqs, read.held);
  const inQueue = idsOf(queue);
  const inDlq = idsOf(dlq);
  // the event must be somewhere: on its way to the consumer, or still a letter
  expect({ sent: read.sent.length, deleted: read.deleted.length, inQueue, inDlq }).toEqual(expect.objectContaining({ inQueue: ['A2'] }));
});
