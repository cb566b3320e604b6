/**
 * An acting ordered redrive with a filter (`dlq redrive --yes --reason ...` / `--event-id ...`) ends: the letters it does
 * not select are released, never moved, and hide later letters of their group; they must not make every round look
 * fresh, or each round that changes nothing moves the kept letters to the back again, without end (review ro15, RO15-2).
 */
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { expect, test } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../operator/ordered/redrive-plan';
import { readOrderedDeadLetters } from '../../operator/cli/dead-letters/ordered-queue-read';
import { releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { byUrl, clock, endpoint, orderedBody as body, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();
const RECEIVE_BOUND = 100;

test('a filtered acting redrive moves a kept letter to the back once and ends', async () => {
  const dlq = makeQueue(queueModel('FilteredDlq.fifo', { fifo: true, queueName: 'FilteredDlq.fifo', contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel('FilteredQ.fifo', { fifo: true, queueName: 'FilteredQ.fifo', contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  // agg a: fence at 1, A3 waits for #2 (selected, kept). agg b: eleven letters the filter does not select (another reason)
  dlq.send({ body: body('A3', 'a', 3), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'a3', origin: { via: 'send-message' } });
  for (let s = 2; s <= 12; s += 1) dlq.send({ body: body(`B${s}`, 'b', s), messageAttributes: {}, messageGroupId: 'b', messageDeduplicationId: `b${s}`, origin: { via: 'send-message' } });
  let receives = 0;
  let moves = 0;
  const watched = new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        if (command instanceof ReceiveMessageCommand && ++receives > RECEIVE_BOUND) throw new Error(`more than ${RECEIVE_BOUND} receives (${moves} moves of A3): the run never ends`);
        if (command instanceof SendMessageCommand && command.input.QueueUrl === dlq.address.url) moves += 1;
        return (target.send as (c: unknown) => Promise<unknown>)(command);
      };
    },
  });
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 1, appliedEventId: 'E1' }) };
  const read = await readOrderedDeadLetters({
    sqs: watched,
    deadLetterQueueUrl: dlq.address.url,
    select: (message) => (JSON.parse(message.body).partitionkey === 'b' ? undefined : { id: message.messageId, body: message.body }),
    plan: (letters) => planOrderedRedrive(letters, fences, { find: async () => undefined }),
    sendTo: queue.address.url,
  });
  await releaseMessages(sqs, read.held);
  expect({ moves, sent: read.sent, deleted: read.deleted }).toEqual({ moves: 1, sent: [], deleted: [] });
  // the letters read and not selected are known, not unread: only b's twelfth, hidden behind ten of b, is unread
  expect(read.unread).toBe(1);
  expect(dlq.messages()).toHaveLength(12);
});
