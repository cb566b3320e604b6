/**
 * A letter moved to the back of its FIFO group is sent again with its own message attributes and the move's
 * bookkeeping (when it first reached the queue, the queue SQS moved it from). SQS takes at most 10 message attributes
 * on a message (SendMessage is refused beyond: Amazon SQS Developer Guide, "Amazon SQS message attributes"), so the
 * bookkeeping fills only what the letter leaves free, the first-sent time first; the letter's own attributes are never
 * dropped (review ro14, RO14-6). The simulator's FIFO SQS behind its endpoint (it refuses an eleventh attribute as SQS
 * does), the real @aws-sdk/client-sqs.
 */
import { type MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import { expect, test } from 'vitest';
import { MOVED_LETTER_ATTRIBUTE } from '../../operator/cli/dead-letters/move-to-back';
import { releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import { fifoQueuePair, orderedBody as body, readBehindFenceAtOne, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();

/** The most message attributes SQS takes on one message. */
const SQS_MAX_MESSAGE_ATTRIBUTES = 10;

/** `count` attributes of the user's own, as a handler's message would carry them. */
function ownAttributes(count: number): Record<string, { DataType: string; StringValue: string }> {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => [`own${index}`, { DataType: 'String', StringValue: `value ${index}` }]));
}

for (const own of [9, 10]) {
  test(`letters with ${own} attributes of their own, moved to the back of their group: at most ${SQS_MAX_MESSAGE_ATTRIBUTES} sent, their own kept${own === 9 ? ', the first-sent time carried in the one left free' : ''}`, async () => {
    const name = `Attr${own}`;
    const { queue, dlq } = fifoQueuePair(name, 1);
    // the fence at 1, #2 lost: #3..#13 fail and SQS moves them to the dead-letter queue (11 letters of one group, all
    // waiting): the read keeps ten in front, which hide the eleventh, so it moves them to the back
    for (let sequence = 3; sequence <= 13; sequence++) {
      queue.send({ body: body(`E${sequence}`, 'a', sequence), messageAttributes: ownAttributes(own), messageGroupId: 'a', messageDeduplicationId: `s${sequence}`, origin: { via: 'send-message' } });
      queue.receive(1, 0);
      queue.receive(1, 0);
    }
    expect(dlq.counts().total).toBe(11);
    const moves: Array<Record<string, MessageAttributeValue>> = [];
    const watched = new Proxy(sqs, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return async (command: unknown) => {
          if (command instanceof SendMessageCommand && command.input.QueueUrl === dlq.address.url) moves.push(command.input.MessageAttributes ?? {});
          return (target.send as (c: unknown) => Promise<unknown>)(command);
        };
      },
    });
    const read = await readBehindFenceAtOne(watched, dlq, queue);
    await releaseMessages(sqs, read.held);
    // every letter read (the eleventh behind the ten moved), nothing sent or deleted, nothing lost
    expect(read).toMatchObject({ unread: 0, sent: [], deleted: [] });
    expect(read.plan.waiting).toHaveLength(11);
    expect(dlq.counts().total).toBe(11);
    expect(moves.length).toBeGreaterThan(0);
    for (const attributes of moves) {
      expect(Object.keys(attributes).length).toBeLessThanOrEqual(SQS_MAX_MESSAGE_ATTRIBUTES);
      expect(attributes).toMatchObject(ownAttributes(own));
      if (own === 9) expect(Object.keys(attributes)).toContain(MOVED_LETTER_ATTRIBUTE.SENT_TIMESTAMP);
    }
  });
}
