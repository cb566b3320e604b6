/**
 * A `dlq redrive --yes` / `fence redrive --yes` that died between a move's SendMessage and DeleteMessage leaves the
 * letter twice; run again within SQS's 5-minute deduplication interval, it deletes the moved copy as a copy of the
 * letter and later moves the letter: that move must not be dropped as a resend of the first one, nor the letter
 * deleted when it was (review ro14, RO14-1).
 */
import { DeleteMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { expect, test } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../operator/ordered/redrive-plan';
import { droppedMoveLine, moveToBack } from '../../operator/cli/dead-letters/move-to-back';
import { readOrderedDeadLetters } from '../../operator/cli/dead-letters/ordered-queue-read';
import { receiveMessages, releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { byUrl, clock, endpoint, orderedBody as body, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();
const idsOf = (queue: SimulatedQueue): string[] => queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id).sort();

/** `sqs` whose every `command` of the given kind fails, as a network error or throttling would. */
function failing(kind: typeof DeleteMessageCommand | typeof SendMessageCommand): SQSClient {
  return new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        if (command instanceof kind) throw new Error('connection reset');
        return (target.send as (c: unknown) => Promise<unknown>)(command);
      };
    },
  });
}

function queues(name: string): { dlq: SimulatedQueue; queue: SimulatedQueue } {
  const dlq = makeQueue(queueModel(`${name}Dlq.fifo`, { fifo: true, queueName: `${name}Dlq.fifo`, contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel(`${name}Q.fifo`, { fifo: true, queueName: `${name}Q.fifo` }), { clock, baseUrl: endpoint.endpoint });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  return { dlq, queue };
}

test('a rerun within 5 minutes of a move that died before its delete keeps the letter', async () => {
  const { dlq, queue } = queues('Crashed');
  // agg a: fence at 1, X = #3 waits for #2. A run moves X to the back and dies before deleting it: X and its copy X'.
  dlq.send({ body: body('A3', 'a', 3), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'xa3', origin: { via: 'send-message' } });
  const [x] = await receiveMessages(sqs, dlq.address.url);
  await expect(moveToBack(failing(DeleteMessageCommand), x!, 'a')).rejects.toThrow('connection reset');
  await releaseMessages(sqs, [x!]); // its visibility timeout runs out: X is there again, inside the deduplication interval
  expect(idsOf(dlq)).toEqual(['A3', 'A3']);
  // agg b: #2 ready (fence at 1); the consumer rejects it again: dead-lettered again after the send (a fresh letter next round)
  dlq.send({ body: body('B2', 'b', 2), messageAttributes: {}, messageGroupId: 'b', messageDeduplicationId: 'b2', origin: { via: 'send-message' } });
  // agg c: fence at 1, eleven letters #3..#13 wait for #2 (one hidden behind ten: unread)
  for (let s = 3; s <= 13; s += 1) dlq.send({ body: body(`C${s}`, 'c', s), messageAttributes: {}, messageGroupId: 'c', messageDeduplicationId: `c${s}`, origin: { via: 'send-message' } });
  let again = 0;
  const deadLetteringAgain = new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        const result = await (target.send as (c: unknown) => Promise<unknown>)(command);
        if (command instanceof SendMessageCommand && command.input.QueueUrl === queue.address.url) {
          again += 1;
          dlq.send({ body: command.input.MessageBody!, messageAttributes: {}, messageGroupId: command.input.MessageGroupId!, messageDeduplicationId: `again-${again}`, origin: { via: 'send-message' } });
        }
        return result;
      };
    },
  });
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 1, appliedEventId: 'E1' }) };
  const read = await readOrderedDeadLetters({
    sqs: deadLetteringAgain,
    deadLetterQueueUrl: dlq.address.url,
    select: (message) => ({ id: message.messageId, body: message.body }),
    plan: (letters) => planOrderedRedrive(letters, fences, { find: async () => undefined }),
    sendTo: queue.address.url,
  });
  await releaseMessages(sqs, read.held);
  // the copy X' deleted as a copy of X, X moved to the back (a new message, not dropped as a resend of X'), and that
  // one never taken for a copy of X' deleted: one letter of A3 left, nothing unread
  expect(idsOf(dlq).filter((id) => id === 'A3')).toEqual(['A3']);
  expect(read.unread).toBe(0);
});

test('a move SQS answers with a message id the run knows (dropped as a resend) keeps the letter and fails', async () => {
  const { dlq } = queues('Dropped');
  dlq.send({ body: body('A3', 'a', 3), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'xa3', origin: { via: 'send-message' } });
  const [x] = await receiveMessages(sqs, dlq.address.url);
  // the first move of this receipt is sent; the second, the same receipt again (an SDK retry), is dropped by SQS
  const moved = await moveToBack(failing(DeleteMessageCommand), x!, 'a').catch(() => undefined);
  expect(moved).toBeUndefined();
  const known = new Set<string>(dlq.messages().map((message) => message.messageId).filter((id) => id !== x!.messageId));
  await expect(moveToBack(sqs, x!, 'a', (id) => known.has(id))).rejects.toThrow(droppedMoveLine(x!.messageId, [...known][0]!));
  await releaseMessages(sqs, [x!]);
  expect(idsOf(dlq)).toEqual(['A3', 'A3']);
});
