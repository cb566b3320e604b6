import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
/**
 * Letters dead-lettered again after the run sent their event (`returned`) are kept, like the letters that wait: when
 * ten of them stand in front of their group and hide a letter the run has not read, `dlq redrive --yes` /
 * `fence redrive --yes` moves them to the back of the group as it moves the letters it keeps, and reads on (review
 * ro14, RO14-6). Released in front instead, they would be read again and again, the letter behind them never. The
 * simulator's FIFO SQS behind its endpoint, the real @aws-sdk/client-sqs.
 */
import { expect, test } from 'vitest';
import { releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import { fifoQueuePair, orderedBody as body, readBehindFenceAtOne, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();

/** More receives than any whole read of eleven letters takes: a run past it reads the same letters over and over. */
const RECEIVE_BOUND = 100;

test('ten letters dead-lettered again in front of their group are moved to the back, and the letter they hid is read', async () => {
  const { queue, dlq } = fifoQueuePair('Ret');
  // agg a: fence at 1; #2..#11 dead-lettered (their handler rejects them): the run sends all ten
  for (let sequence = 2; sequence <= 11; sequence++) {
    dlq.send({ body: body(`E${sequence}`, 'a', sequence), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: `first-${sequence}`, origin: { via: 'send-message' } });
  }
  let redeadLettered = 0;
  let receives = 0;
  const watched = new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        if (command instanceof ReceiveMessageCommand && ++receives > RECEIVE_BOUND) throw new Error(`more than ${RECEIVE_BOUND} receives: the run reads the same letters over and over`);
        const result = await (target.send as (c: unknown) => Promise<unknown>)(command);
        if (command instanceof SendMessageCommand && command.input.QueueUrl === queue.address.url) {
          // the consumer rejects each sent event again: dead-lettered again at once, behind the group's letters
          redeadLettered += 1;
          dlq.send({ body: command.input.MessageBody!, messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: `again-${redeadLettered}`, origin: { via: 'send-message' } });
          // and #13 (waiting for #12) dead-lettered after the ten: behind them in the group
          if (redeadLettered === 10) dlq.send({ body: body('E13', 'a', 13), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'thirteen', origin: { via: 'send-message' } });
        }
        return result;
      };
    },
  });
  const read = await readBehindFenceAtOne(watched, dlq, queue);
  await releaseMessages(sqs, read.held);
  expect(redeadLettered).toBe(10);
  // each event sent once; the ten that came back kept (never deleted, never sent again); #13 read, waiting for #12
  const eventOf = (id: string): string => (JSON.parse(read.byId.get(id)!.body) as { id: string }).id;
  expect(read.sent.map(eventOf)).toEqual(['E2', 'E3', 'E4', 'E5', 'E6', 'E7', 'E8', 'E9', 'E10', 'E11']);
  expect(read.deleted).toEqual([]);
  expect(read.returned).toHaveLength(10);
  expect(read.plan.waiting.map((letter) => eventOf(letter.id))).toEqual(['E13']);
  expect(read.unread).toBe(0);
  const left = dlq.messages().map((message) => (JSON.parse(message.body) as { id: string }).id).sort();
  expect(left).toEqual(['E10', 'E11', 'E13', 'E2', 'E3', 'E4', 'E5', 'E6', 'E7', 'E8', 'E9']);
});
