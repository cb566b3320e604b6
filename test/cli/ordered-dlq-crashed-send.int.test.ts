/**
 * A redrive that died between a send and its delete, run again within 5 minutes (review ro15, RO15-1), through the
 * CLI: `dlq redrive --yes` dies right after sending a letter to the subscriber's queue (before its DeleteMessage); the
 * consumer rejects the event again (PermanentError: a new letter); the operator runs the redrive again 2 minutes later
 * (inside SQS's 5-minute deduplication interval). The event must reach the subscriber's queue again.
 */
import { expect, test } from 'vitest';
import { createLogger } from '../../lambda/logger';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { cli, cliAt } from './operator-services';
import { client, clock, dlq, endpoint, inboxConfig, outboxConfig, queue, SUBSCRIBER, useOrderedRedriveWorld } from './ordered-redrive-kit';

useOrderedRedriveWorld('CrashedSend');

test('dlq redrive --yes run again within 5 minutes of a send that died before its delete keeps the event', async () => {
  const aggregate = `order-${Date.now()}-crashed-send`;
  const producer = new OrderedOutbox({ client, config: outboxConfig });
  const events: OrderedEnvelope[] = [];
  for (const step of ['placed', 'paid']) events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
  const consumer = createOrderedConsumer<{ step: string }>({ client, config: inboxConfig, logger: createLogger({ sink: () => undefined }), metricsSink: () => undefined, handle: async () => undefined });
  await consumer({ Records: [{ messageId: 'r1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
  // #2 was dead-lettered by the consumer (PermanentError), with its reason
  const reason = { iefErrorName: { DataType: 'String', StringValue: 'PermanentError' }, iefSubscriber: { DataType: 'String', StringValue: SUBSCRIBER } };
  dlq.send({ body: JSON.stringify(events[1]), messageAttributes: reason, messageGroupId: aggregate, messageDeduplicationId: 'dl-receive-1', origin: { via: 'send-message' } });
  const output = JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outboxConfig.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url,
  });
  // run 1 dies right after its first SendMessage (Ctrl-C, or the DeleteMessage's connection reset)
  let sends = 0;
  const first = await cliAt({ clock, endpoint }, { afterSqsRequest: (name) => { if (name === 'SendMessageCommand' && ++sends === 1) throw new Error('connection reset'); } }, 'dlq', 'redrive', '--subscriber-output', output, '--yes').catch((error: Error) => ({ code: -1, stdout: '', stderr: String(error) }));
  expect(first.code).not.toBe(0);
  expect(queue.messages()).toHaveLength(1);
  // the consumer receives it, its handler still rejects it: dead-lettered again (a new letter) and acknowledged
  const [delivered] = queue.receive(10);
  dlq.send({ body: delivered!.body, messageAttributes: reason, messageGroupId: aggregate, messageDeduplicationId: 'dl-receive-2', origin: { via: 'send-message' } });
  queue.delete(delivered!.receiptHandle);
  // run 1's read of the original runs out; 2 minutes after run 1 the operator runs the redrive again
  clock.advanceBy(121_000);
  const second = await cli({ clock, endpoint }, 'dlq', 'redrive', '--subscriber-output', output, '--yes');
  const where = { code: second.code, said: second.stdout.split('\n').filter((line) => line.startsWith('redrove')), inQueue: queue.messages().length, inDeadLetterQueue: dlq.messages().length };
  // the event is on its way to the consumer again; its new letter is deleted as a copy of the letter sent
  expect(where, JSON.stringify(where)).toEqual(expect.objectContaining({ code: 0, inQueue: 1, inDeadLetterQueue: 0 }));
});
