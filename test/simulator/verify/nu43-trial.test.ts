/**
 * The fixes of issue 43's new-user trial of verify (nu43, /work/runs/nu43/findings.md; eighth session, f43): each test
 * failed before its fix. Against the simulator's SQS endpoint and DynamoDB Local (the verify kit), on a virtual clock.
 */
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { OUTBOX_ITEM } from '../../../lambda/contract/wire-format';
import { derivedEventId } from '../../../lambda/fingerprint';
import type { VerifyClients } from '../../../simulator/verify/clients';
import { runEventReader } from '../../../simulator/verify/observe';
import { newRunId } from '../../../simulator/verify/run-ids';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { NotQuietError, waitUntilQuiet } from '../../../simulator/verify/settle';
import { defaultTimeoutSeconds, readQueueSettings } from '../../../simulator/verify/queue-settings';
import { refuseOtherAccounts } from '../../../simulator/verify/verify-run';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { notAppliedProbe, oneSubscriberFlow, runEvent, settleOptions, VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();

/** Billing's queue as the trial's template made it: visibility timeout 180 s, maxReceiveCount 5, into its DLQ. */
function billingQueues(): { queue: SimulatedQueue; deadLetters: SimulatedQueue } {
  const n = bed.queues.size;
  const deadLetters = makeQueue(queueModel(`BillingDlq${n}`), { clock: bed.clock, baseUrl: bed.server.endpoint });
  const queue = makeQueue(queueModel(`BillingQueue${n}`, { visibilityTimeoutSeconds: 180, redrive: { deadLetterQueue: `Stack/BillingDlq${n}`, maxReceiveCount: 5 } }), { clock: bed.clock, baseUrl: bed.server.endpoint, deadLetterQueue: deadLetters });
  for (const item of [queue, deadLetters]) bed.queues.set(item.address.url, item);
  return { queue, deadLetters };
}

async function notQuiet(promise: Promise<unknown>): Promise<NotQuietError> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(NotQuietError);
  return error as NotQuietError;
}

describe('nu43 finding 1: a handler that throws an ordinary error (its events fail on every receive)', () => {
  test('the not-quiet end names the events, says they are on the queue being received and not applied, and how long until SQS dead-letters them', async () => {
    // GIVEN the run's two events on Billing's queue, received by its consumer (in flight) and never applied: the
    // handler throws, the message comes back after the visibility timeout and is received again
    const queues = billingQueues();
    for (const id of ['e-1', 'e-2']) queues.queue.send({ body: JSON.stringify({ id }), origin: { via: 'sns', eventId: id } });
    queues.queue.receive(10);
    const flow = oneSubscriberFlow('Billing', queues);
    const settle = settleOptions({ Billing: notAppliedProbe }, [runEvent('e-1'), runEvent('e-2')], new Map([[queues.deadLetters.address.url, 0]]));
    // WHEN verify waits (30 s) with the queue's settings read from the deployed queue
    const settings = await readQueueSettings(bed.clients(), flow);
    const error = await notQuiet(waitUntilQuiet(bed.clients(), flow, { ...settle, queueSettings: settings }));
    // THEN it names each event, where it is, and that it is being received without being applied
    const text = error.waitingFor.join('\n');
    expect(text).toContain('e-1');
    expect(text).toContain('e-2');
    expect(text).toMatch(/on Billing's queue/);
    expect(text).toMatch(/2 in flight/);
    expect(text).toMatch(/maxReceiveCount 5/);
    expect(text).toMatch(/180 ?s/);
    expect(text).not.toContain('in the relay or on the way');
  });

  test('events not on the queue yet are named as such (in the relay or SNS), apart from those on it', async () => {
    const queues = billingQueues();
    queues.queue.send({ body: JSON.stringify({ id: 'e-1' }), origin: { via: 'sns', eventId: 'e-1' } });
    const flow = oneSubscriberFlow('Billing', queues);
    const settle = settleOptions({ Billing: notAppliedProbe }, [runEvent('e-1'), runEvent('e-2'), runEvent('e-3')], new Map([[queues.deadLetters.address.url, 0]]));
    const error = await notQuiet(waitUntilQuiet(bed.clients(), flow, settle));
    const text = error.waitingFor.join('\n');
    for (const id of ['e-1', 'e-2', 'e-3']) expect(text).toContain(id);
    expect(text).toMatch(/1 of them on Billing's queue/);
    expect(text).toMatch(/2 not on it yet/);
  });

  test("the default time limit is derived from the deployed queues: maxReceiveCount x visibility timeout, plus a margin, so a failing event reaches the DLQ (a verdict) before it", async () => {
    const queues = billingQueues();
    const settings = await readQueueSettings(bed.clients(), oneSubscriberFlow('Billing', queues));
    expect(settings.get(queues.queue.address.url)).toEqual({ visibilityTimeoutSeconds: 180, maxReceiveCount: 5 });
    const derived = defaultTimeoutSeconds(oneSubscriberFlow('Billing', queues), settings);
    expect(derived.seconds).toBeGreaterThan(5 * 180);
    expect(derived.seconds).toBeGreaterThanOrEqual(600);
    expect(derived.why).toMatch(/maxReceiveCount 5 x visibility timeout 180 s/);
  });
});

describe("nu43 finding 6: the progress line names each queue apart", () => {
  test("the queue, its DLQ and the subscription's DLQ are each named so, and a first look says what it saw, not that a count moved", async () => {
    const queues = billingQueues();
    const subscriptionDlq = makeQueue(queueModel(`BillingSubscriptionDlq${bed.queues.size}`), { clock: bed.clock, baseUrl: bed.server.endpoint });
    bed.queues.set(subscriptionDlq.address.url, subscriptionDlq);
    const base = oneSubscriberFlow('Billing', queues);
    const flow: DeployedFlow = { ...base, subscribers: [{ ...base.subscribers[0]!, deployment: { ...base.subscribers[0]!.deployment, subscriptionDeadLetterQueueUrl: subscriptionDlq.address.url } }] };
    queues.queue.send({ body: JSON.stringify({ id: 'e-1' }), origin: { via: 'sns', eventId: 'e-1' } });
    const progress: string[] = [];
    const settle = settleOptions({ Billing: notAppliedProbe }, [runEvent('e-1')], new Map());
    await notQuiet(waitUntilQuiet(bed.clients(), flow, { ...settle, timeoutSeconds: 0, onProgress: (line) => progress.push(line) }));
    const line = progress[0]!;
    expect(line).toContain("Billing's DLQ");
    expect(line).toContain("Billing's subscription DLQ");
    expect(line).not.toContain('moved to');
  });
});

/** A flow in the sandbox account 111111111111 whose subscriber Billing's queue URLs are `queueUrl` and `deadLetterQueueUrl`. */
function flowWithQueues(queueUrl: string, deadLetterQueueUrl: string, relayDeadLetterQueueUrl?: string): DeployedFlow {
  return {
    stackNames: ['App'],
    accounts: ['111111111111'],
    stackAccounts: { App: '111111111111' },
    flows: relayDeadLetterQueueUrl === undefined ? [] : [{ outboxTable: 'App-Outbox', relayDeadLetterQueueUrl }],
    resources: [],
    subscribers: [{ name: 'Billing', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Billing', processingMode: 'multi-step', queueUrl, deadLetterQueueUrl } }],
  };
}

describe('nu43 finding 4: the cross-account guard reads the account of every SQS queue URL form', () => {
  const sandbox = 'https://sqs.us-east-1.amazonaws.com/111111111111/Billing-dlq';
  test.each([
    ['the legacy form', 'https://us-east-1.queue.amazonaws.com/999999999999/Billing-queue'],
    ['a VPC endpoint', 'https://vpce-0a1b2c3d4e5f-abcdefgh.sqs.us-east-1.vpce.amazonaws.com/999999999999/Billing-queue'],
    ['a served run', 'http://127.0.0.1:4566/999999999999/Billing-queue'],
    ['the China partition', 'https://sqs.cn-north-1.amazonaws.com.cn/999999999999/Billing-queue'],
  ])('%s: a queue in another account is refused', (_form, queueUrl) => {
    expect(() => refuseOtherAccounts(flowWithQueues(queueUrl, sandbox), ['111111111111'])).toThrow(/999999999999/);
  });

  test("a relay dead-letter queue in the legacy form in another account is refused", () => {
    const own = 'https://sqs.us-east-1.amazonaws.com/111111111111/Billing-queue';
    expect(() => refuseOtherAccounts(flowWithQueues(own, sandbox, 'https://us-east-1.queue.amazonaws.com/999999999999/Relay-dlq'), ['111111111111'])).toThrow(/999999999999/);
  });

  test('a queue URL whose account cannot be read is refused, naming it', () => {
    expect(() => refuseOtherAccounts(flowWithQueues('https://queues.example.com/Billing-queue', sandbox), ['111111111111'])).toThrow(/https:\/\/queues\.example\.com\/Billing-queue/);
  });

  test('queues in the allowed account, in any form, pass', () => {
    expect(() => refuseOtherAccounts(flowWithQueues('https://us-east-1.queue.amazonaws.com/111111111111/Billing-queue', 'http://127.0.0.1:4566/111111111111/Billing-dlq'), ['111111111111'])).not.toThrow();
  });
});

describe('nu43 finding 9a: the outbox is scanned once per run', () => {
  test("the producer's outbox is scanned once however many looks the wait takes; an outbox a subscriber emits into is scanned again each look (its events come while the run waits)", async () => {
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([4, 3, 2, 1]));
    const [orders, billing] = [uniqueTableName('nu43-orders'), uniqueTableName('nu43-billing')];
    for (const table of [orders, billing]) await createTable(bed.dynamoDb, table, { partitionKey: 'pk' });
    const put = (table: string, envelope: Record<string, unknown>) =>
      bed.documents.send(new PutCommand({ TableName: table, Item: { pk: `${OUTBOX_ITEM.KEY_PREFIX}${String(envelope.id)}`, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE, [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: JSON.stringify(envelope) } }));
    const placedId = `order-placed-${runId}-order-00001`;
    await put(orders, { specversion: '1.0', id: placedId, type: 'com.example.OrderPlaced', source: 'orders', data: { orderId: `${runId}-order-00001` } });
    const scans = new Map<string, number>();
    const base = bed.clients();
    const counting = { ...base, documents: { send: (command: unknown) => {
      if (command instanceof ScanCommand) scans.set(String(command.input.TableName), (scans.get(String(command.input.TableName)) ?? 0) + 1);
      return base.documents.send(command as never);
    } } } as unknown as VerifyClients;
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [{ outboxTable: orders }],
      resources: [],
      // as the constructs deploy it: the Operator output names the flow's outbox (for replay); the consumer's environment names the outbox it emits into (rv9 V-2)
      subscribers: [{ name: 'Billing', stackName: 'App', environment: { IEF_OUTBOX_TABLE_NAME: billing }, deployment: { format: 1, subscriberName: 'Billing', processingMode: 'multi-step', queueUrl: 'https://sqs.invalid/1/q', deadLetterQueueUrl: 'https://sqs.invalid/1/d', outboxTable: orders } }],
    };
    const read = runEventReader(counting, flow, runId);
    expect([...(await read()).keys()]).toEqual([placedId]);
    // Billing applies the run's event and emits one (a derived id) while the run waits
    const billedId = derivedEventId('Billing', placedId, 0);
    await put(billing, { specversion: '1.0', id: billedId, type: 'com.example.billing.OrderBilled', source: 'billing', data: { amount: 5 } });
    expect([...(await read()).keys()].sort()).toEqual([billedId, placedId].sort());
    await read();
    expect(scans.get(orders)).toBe(1);
    expect(scans.get(billing)).toBe(3);
  });
});
