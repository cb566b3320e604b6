/**
 * `dlq redrive --yes --event-id` through the CLI ends (review ro15, RO15-2): the selected letter waits for its
 * aggregate's earlier event, and another aggregate's eleven letters, not selected, hide one of theirs.
 */
import { expect, test } from 'vitest';
import { createLogger } from '../../lambda/logger';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { cliAt } from './operator-services';
import { client, clock, dlq, endpoint, inboxConfig, outboxConfig, queue, SUBSCRIBER, useOrderedRedriveWorld } from './ordered-redrive-kit';

useOrderedRedriveWorld('Filtered');

test('dlq redrive --yes --event-id ends while letters it does not select hide others', async () => {
  const a = `order-${Date.now()}-a`;
  const b = `order-${Date.now()}-b`;
  const producer = new OrderedOutbox({ client, config: outboxConfig });
  const write = async (aggregate: string) => (await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step: 's' } }] }))[0]!;
  const as: OrderedEnvelope[] = [];
  for (let i = 0; i < 3; i += 1) as.push(await write(a));
  const bs: OrderedEnvelope[] = [];
  for (let i = 0; i < 12; i += 1) bs.push(await write(b));
  const consumer = createOrderedConsumer<{ step: string }>({ client, config: inboxConfig, logger: createLogger({ sink: () => undefined }), metricsSink: () => undefined, handle: async () => undefined });
  await consumer({ Records: [{ messageId: 'a1', body: JSON.stringify(as[0]), attributes: { ApproximateReceiveCount: '1' } }] });
  await consumer({ Records: [{ messageId: 'b1', body: JSON.stringify(bs[0]), attributes: { ApproximateReceiveCount: '1' } }] });
  const reason = { iefErrorName: { DataType: 'String', StringValue: 'PermanentError' }, iefSubscriber: { DataType: 'String', StringValue: SUBSCRIBER } };
  // a #3 waits for #2 (still on its way, say); b #2..#12 (eleven letters) after an outage
  dlq.send({ body: JSON.stringify(as[2]), messageAttributes: reason, messageGroupId: a, messageDeduplicationId: 'a3', origin: { via: 'send-message' } });
  for (let i = 1; i < 12; i += 1) dlq.send({ body: JSON.stringify(bs[i]), messageAttributes: reason, messageGroupId: b, messageDeduplicationId: `b${i}`, origin: { via: 'send-message' } });
  const output = JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outboxConfig.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url,
  });
  let receives = 0;
  let moves = 0;
  const run = await cliAt({ clock, endpoint }, { afterSqsRequest: (name) => {
    if (name === 'SendMessageCommand') moves += 1;
    if (name === 'ReceiveMessageCommand' && ++receives > 200) throw new Error(`more than 200 receives, ${moves} sends (moves of a #3): the run never ends`);
  } }, 'dlq', 'redrive', '--subscriber-output', output, '--event-id', as[2]!.id, '--yes').catch((error: Error) => ({ code: -1, stdout: '', stderr: String(error) }));
  // it ends: a #3 still waits for #2 (a gap, exit 3), nothing sent or deleted, every letter still in the dead-letter queue
  expect({ code: run.code, inQueue: queue.messages().length, inDeadLetterQueue: dlq.messages().length }, run.stderr).toEqual({ code: 3, inQueue: 0, inDeadLetterQueue: 12 });
});
