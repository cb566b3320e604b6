/**
 * Review r13, R13-3: a message of other traffic (another run's, a scheduled producer's, a retried poison message) on the
 * queue of a subscriber whose inbox holds every run event it took kept the wait holding to its limit, and the run ended
 * "not quiet" (exit 1, VIOLATED's code), so the checks never ran. The wait still holds for it (it may be a duplicate of
 * a run event not yet applied, which effect-count must see applied twice), but at the limit, when that is all it waits
 * for, it ends with the queues named: the checks run, and the verdict is NOT PROVEN naming them.
 * Against DynamoDB Local (the inbox) and the simulator's SQS endpoint (the queues), on a virtual clock.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { expect, test } from 'vitest';
import { recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import type { EffectProbe } from '../../../simulator/run/scenario';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { NotQuietError, otherTrafficLine, waitUntilQuiet } from '../../../simulator/verify/settle';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { runEvent, settleOptions, VerifyTestbed } from './verify-test-kit';
import { verifyResult } from './verify-result-kit';

const bed = VerifyTestbed.start();
const allApplied: EffectProbe = async ({ events }) => events.map((event) => ({ subject: `shipment of ${event.id}`, eventIds: [event.id], applied: 1 }));

async function shippingFlow(inInbox: readonly string[]): Promise<DeployedFlow> {
  const inboxTable = uniqueTableName('r13-shipping-inbox');
  await createTable(bed.dynamoDb, inboxTable, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
  for (const eventId of inInbox) {
    await bed.documents.send(new PutCommand({ TableName: inboxTable, Item: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey('Shipping', eventId), eventId, subscriber: 'Shipping', processedAt: '2026-11-30T06:00:00.000Z' } }));
  }
  const queues = bed.subscriberQueues('Shipping');
  queues.queue.send({ body: JSON.stringify({ id: 'other-run-order-9' }), origin: { via: 'send-message', eventId: 'other-run-order-9' } } as never);
  return {
    stackNames: ['App'],
    flows: [],
    resources: [],
    subscribers: [
      {
        name: 'Shipping',
        stackName: 'App',
        environment: {},
        deployment: { format: 1, subscriberName: 'Shipping', processingMode: 'transactional', deduplicationWindowSeconds: 86400, inboxTable, queueUrl: queues.queue.address.url, deadLetterQueueUrl: queues.deadLetters.address.url },
      },
    ],
  };
}

test.each([
  ['with a probe that sees every effect', { Shipping: allApplied }],
  ['without a probe', {}],
])("another run's message on the queue of a subscriber whose inbox holds every run event (%s): at the limit it ends naming the queue, not NotQuietError", async (_label, probes) => {
  const flow = await shippingFlow(['order-1', 'order-2']);
  const held = await waitUntilQuiet(bed.clients(), flow, settleOptions(probes, [runEvent('order-1'), runEvent('order-2')], new Map()));
  expect(held?.otherTraffic).toEqual(["Shipping's queue (1 message(s))"]);
  const line = otherTrafficLine(held!.otherTraffic, 600);
  expect(line).toMatch(/^at the time limit \(600 s\), Shipping's queue \(1 message\(s\)\) still held messages after every run event its subscriber took was acknowledged/);
  expect(verifyVerdict({ ...verifyResult(), unproven: [line] }).status).toBe('NOT PROVEN');
});

test('a run event not in the inbox with the message on the queue: still not quiet (the message may be it)', async () => {
  const flow = await shippingFlow(['order-1']);
  const error = await waitUntilQuiet(bed.clients(), flow, settleOptions({}, [runEvent('order-1'), runEvent('order-2')], new Map())).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(NotQuietError);
  expect((error as NotQuietError).waitingFor.join('; ')).toMatch(/Shipping: 1 of 2 event\(s\) neither in its inbox nor dead-lettered yet \(order-2\)/);
});
