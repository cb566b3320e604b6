import { SendMessageCommand } from '@aws-sdk/client-sqs';
/**
 * A letter `dlq redrive --yes` / `fence redrive --yes` sent, which the consumer dead-letters again before the run's next
 * read, is the sent event coming back: never a copy of itself to delete (review ro13, RO13-4).
 */
import { expect, test } from 'vitest';
import { releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import { fifoQueuePair, orderedBody as body, readBehindFenceAtOne, sqs, useOrderedDlqEndpoint } from './ordered-dlq-kit';

useOrderedDlqEndpoint();

test('a letter sent by the run and dead-lettered again before its next read is kept and reported, never deleted as a copy of itself nor sent again', async () => {
  const { queue, dlq } = fifoQueuePair('R4');
  // agg a: fence at 1; #2 dead-lettered (its handler rejects it: the consumer dead-letters it at each delivery)
  dlq.send({ body: body('E2', 'a', 2), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'first', origin: { via: 'send-message' } });
  // #3 behind it (sent in the same round, and dead-lettered again as well)
  dlq.send({ body: body('E3', 'a', 3), messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: 'third', origin: { via: 'send-message' } });
  let redeadLettered = 0;
  const watched = new Proxy(sqs, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        const result = await (target.send as (c: unknown) => Promise<unknown>)(command);
        if (command instanceof SendMessageCommand && command.input.QueueUrl === queue.address.url) {
          // the consumer receives the redriven #2, its handler rejects it again, and it is dead-lettered again at once
          redeadLettered += 1;
          dlq.send({ body: command.input.MessageBody!, messageAttributes: {}, messageGroupId: 'a', messageDeduplicationId: `again-${redeadLettered}`, origin: { via: 'send-message' } });
          queue.messages(); // (the message would now be consumed from the subscriber queue)
        }
        return result;
      };
    },
  });
  const read = await readBehindFenceAtOne(watched, dlq, queue);
  expect(redeadLettered).toBeGreaterThan(0);
  // nothing deleted: the letter that came back is the only copy of a never-applied event
  expect(read.deleted).toEqual([]);
  expect(read.returned).toHaveLength(redeadLettered);
  for (const id of read.returned) expect(read.sent).not.toContain(id);
  expect(read.plan.alreadyApplied.map((letter) => letter.id)).not.toContain(read.returned[0]);
  expect(read.plan.copies.map((letter) => letter.id)).not.toContain(read.returned[0]);
  // each event sent once: a letter that came back is not sent again in the run
  const sentBodies = read.sent.map((id) => JSON.parse(read.byId.get(id)!.body) as { id: string });
  expect(sentBodies.map((each) => each.id)).toEqual(['E2', 'E3']);
  await releaseMessages(sqs, read.held);
  const left = dlq.messages().map((message) => (JSON.parse(message.body) as { id: string }).id).sort();
  expect(left).toEqual(['E2', 'E3']);
});
