/**
 * A letter moved to the back of its group keeps what SQS said of its dead-lettering in message attributes; that
 * bookkeeping stays in the dead-letter queue: the letter sent to the subscriber's queue carries none of it, so
 * dead-lettered again it reads when it came back (review ro14, RO14-3).
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { expect, test } from 'vitest';
import { firstSentAt, MOVED_LETTER_ATTRIBUTE } from '../../operator/cli/dead-letters/move-to-back';
import { fifoQueuePair, orderedBody as body, readBehindFenceAtOne, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();

test('a moved letter redriven to the subscriber queue carries no DLQ bookkeeping of its first dead-lettering', async () => {
  const { queue, dlq } = fifoQueuePair('M1');
  // fence at 1; ten letters #3..#12 wait in front of #2
  for (let sequence = 3; sequence <= 12; sequence += 1) dlq.send({ body: body(`E${sequence}`, 'a', sequence), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: `d${sequence}`, origin: { via: 'send-message' } });
  dlq.send({ body: body('E2', 'a', 2), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'd2', origin: { via: 'send-message' } });
  const forwarded: Array<Record<string, unknown>> = [];
  const watched = new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        if (command instanceof SendMessageCommand && command.input.QueueUrl === queue.address.url) forwarded.push({ ...(command.input.MessageAttributes ?? {}) });
        return (target.send as (c: unknown) => Promise<unknown>)(command);
      };
    },
  });
  const read = await readBehindFenceAtOne(watched, dlq, queue);
  expect(read.sent.length).toBeGreaterThan(1);
  // what the move kept of the first dead-lettering stays in the dead-letter queue
  expect(forwarded).toHaveLength(read.sent.length);
  for (const attributes of forwarded) expect(Object.keys(attributes).filter((name) => (Object.values(MOVED_LETTER_ATTRIBUTE) as string[]).includes(name))).toEqual([]);
});

test('a letter SQS dead-lettered again (new SentTimestamp) reads as sent when it came back, not at a carried, older time', () => {
  const again = { queueUrl: 'q', messageId: 'm', receiptHandle: 'r', body: '{}', attributes: { SentTimestamp: '2000000000000', DeadLetterQueueSourceArn: 'arn:aws:sqs:us-east-1:1:q.fifo' }, messageAttributes: { [MOVED_LETTER_ATTRIBUTE.SENT_TIMESTAMP]: { DataType: 'Number', StringValue: '1000000000000' } } };
  expect(firstSentAt(again)).toBe(2_000_000_000_000);
});
