/**
 * Second adversarial review of `verify` (issue 43), branch s6-r43 after the R43-1..11 fixes: each test names a defect
 * (R43b-n). Against real parts where a server is involved: the simulator's SQS endpoint (real protocol, the real SDK
 * client).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { OUTBOX_ITEM } from '../../../lambda/contract/wire-format';
import { derivedEventId } from '../../../lambda/fingerprint';
import { describe, expect, test } from 'vitest';
import type { EffectProbe } from '../../../simulator/run/scenario';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { readRunEvents } from '../../../simulator/verify/observe';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { newRunId, withRunIds } from '../../../simulator/verify/run-ids';
import { waitUntilQuiet } from '../../../simulator/verify/settle';
import { refuseOtherAccounts } from '../../../simulator/verify/verify-run';
import { notAppliedProbe, oneSubscriberFlow, runEvent, settleOptions, VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();
const { dynamoDb, documents } = bed;
const clients = (): VerifyClients => bed.clients();
const subscriberQueues = (name: string): ReturnType<VerifyTestbed['subscriberQueues']> => bed.subscriberQueues(name);

const first = newRunId(1_700_000_000_000, () => Buffer.from([1, 2, 3, 4]));

describe('R43 second review of verify', () => {
  test("R43b-1: a command's plural id field (orderIds: [...]) is made unique with the ids it refers to, never sent naming ids that are not the run's", () => {
    // GIVEN a scenario whose commands place orders and then cancel some of them by id (a batch command)
    const place = { orderId: 'order-00001', amount: 5 };
    const cancel = { requestId: 'cancel-00001', orderIds: ['order-00001'] };
    // WHEN verify makes them unique to the run
    const placed = withRunIds(place, first);
    const cancelled = withRunIds(cancel, first);
    // THEN the cancel still refers to the run's order (the module comment: "a command that refers to another's id
    // still does"); sent as is, it cancels 'order-00001', a real order (or an earlier run's), not the run's
    expect(cancelled.orderIds).toEqual([placed.orderId]);
  });

  test('R43b-2: an id field spelt in one lower-case word (orderid, customerid) is made unique to the run', () => {
    // GIVEN a command with a recognised id (requestId) and a lower-case reference (customerid, as many JSON APIs spell it)
    const command = { requestId: 'r-1', customerid: 'customer-00003', amount: 5 };
    const second = newRunId(1_700_000_000_001, () => Buffer.from([5, 6, 7, 8]));
    // WHEN two runs make it unique
    const [a, b] = [withRunIds(command, first), withRunIds(command, second)];
    // THEN the customer it names is the run's in each (else both runs act on the same real 'customer-00003': its
    // effects land on a customer that is not the run's, and a per-customer probe counts the earlier run's too)
    expect(a.customerid).not.toBe(b.customerid);
  });

  test("R43b-3: --account refuses a flow whose subscriber's queues are in another account (a cross-account subscriber)", () => {
    // GIVEN the app's stack in the sandbox account 111111111111, but its subscriber's Operator output (e.g. a subscriber
    // another team deployed in their production account, subscribed across accounts) naming queues in 999999999999
    const queueUrl = 'https://sqs.us-east-1.amazonaws.com/999999999999/Billing-queue';
    const flow: DeployedFlow = {
      stackNames: ['App'],
      accounts: ['111111111111'],
      flows: [],
      resources: [],
      subscribers: [{ name: 'Billing', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Billing', processingMode: 'multi-step', queueUrl, deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/999999999999/Billing-dlq' } }],
    };
    // WHEN verify is told to run only in 111111111111, THEN it refuses: the run's events reach (and --cleanup deletes
    // dead letters in) account 999999999999, which --account does not allow
    expect(() => refuseOtherAccounts(flow, ['111111111111'])).toThrow(/999999999999/);
  });

  test("R43b-4: --account refuses when one of the flow's stacks has no account it can read (unresolved: a stack id without one)", () => {
    // GIVEN two stacks; findDeployedFlow keeps only the accounts it could parse from the stack ids (deployed-flow.ts:130),
    // so a stack whose id names no account adds nothing, and the flow lists only the sandbox account
    // (fixed with the guard: a flow of two stacks in one account lists one account too, so the flow as this test first
    // gave it could not tell them apart; findDeployedFlow now also gives each stack's account, and none for Other)
    const flow = { stackNames: ['Sandbox', 'Other'], accounts: ['111111111111'], stackAccounts: { Sandbox: '111111111111' } };
    // WHEN --account allows only the sandbox, THEN the stack whose account is unknown is refused (the guard's doc:
    // "a stack of the flow is in another (or its account is unknown)")
    expect(() => refuseOtherAccounts(flow, ['111111111111'])).toThrow(/Other|unknown/);
  });

  test("R43b-5: the run's dead-lettered event ends the wait even when another dead letter left the queue meanwhile (count not above its baseline)", async () => {
    // GIVEN Invoicing's dead-letter queue held 1 real-traffic dead letter when verify took its baseline; an operator then
    // redrove it (gone), and the run's e-1 was dead-lettered: the queue holds 1 again, only the run's
    const { queue, deadLetters } = subscriberQueues('Invoicing');
    deadLetters.send({ body: JSON.stringify({ id: 'e-1' }), origin: { via: 'send-message', eventId: 'e-1' } });
    const flow = oneSubscriberFlow('Invoicing', { queue, deadLetters });
    const probe = notAppliedProbe;
    const settle = settleOptions({ Invoicing: probe }, [runEvent('e-1')], new Map([[deadLetters.address.url, 1]]));

    // WHEN verify waits, THEN the flow is quiet (e-1 is dead-lettered, nothing moves): settle reads the queue only when
    // its count rose above the baseline, so it waits to its time limit for an event already in the queue
    await expect(waitUntilQuiet(clients(), flow, settle)).resolves.toBeUndefined();
  });

  test("R43b-6: an event a subscriber emitted for a run event (a runtime-derived id) is one of the run's even when its data names no command id", async () => {
    // GIVEN the run's OrderPlaced in the orders outbox, and the event Billing emitted while applying it (tx.emit without
    // an id: the runtime derives its id from Billing and the consumed event, derived-events.ts) in Billing's outbox, its
    // data naming only what Billing made (an invoice number, an amount): no id of the run's commands
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([7, 7, 7, 7]));
    const [orders, billing] = [uniqueTableName('r43b-orders'), uniqueTableName('r43b-billing')];
    for (const table of [orders, billing]) await createTable(dynamoDb, table, { partitionKey: 'pk' });
    const placedId = `order-placed-${runId}-order-00001`;
    const billedId = derivedEventId('Billing', placedId, 0);
    const put = (table: string, envelope: Record<string, unknown>) =>
      documents.send(new PutCommand({ TableName: table, Item: { pk: `${OUTBOX_ITEM.KEY_PREFIX}${String(envelope.id)}`, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE, [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: JSON.stringify(envelope) } }));
    await put(orders, { specversion: '1.0', id: placedId, type: 'com.example.OrderPlaced', source: 'orders', data: { orderId: `${runId}-order-00001` } });
    await put(billing, { specversion: '1.0', id: billedId, type: 'com.example.billing.OrderBilled', source: 'billing', data: { invoiceNumber: 'INV-000417', amount: 5 } });
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [{ outboxTable: orders }],
      resources: [],
      // Billing emits into its own outbox: its consumer's environment names it (rv9 V-2; the Operator output's outboxTable is the flow's)
      subscribers: [{ name: 'Billing', stackName: 'App', environment: { IEF_OUTBOX_TABLE_NAME: billing }, deployment: { format: 1, subscriberName: 'Billing', processingMode: 'multi-step', queueUrl: 'https://sqs.invalid/1/q', deadLetterQueueUrl: 'https://sqs.invalid/1/d', outboxTable: orders } }],
    };

    // WHEN verify reads the run's events
    const events = await readRunEvents(clients(), flow, runId);

    // THEN OrderBilled is among them: else its subscribers (Loyalty) are never checked for it (taken 0, waited for by
    // nothing) and the verdict is OK however broken Loyalty is; derived-events.ts can name its source, readRunEvents
    // drops it first (isRunEvent: id or data carrying the run id)
    expect([...events.keys()].sort()).toEqual([billedId, placedId].sort());
  });

  test("R43b-7: a subscriber that takes none of the run's events does not hold the wait with its own (real) traffic", async () => {
    // GIVEN Audit, whose filter takes only com.example.Refunded, with a real-traffic message on its queue (in a sandbox
    // shared with testers, or any account with background traffic, its queue is rarely empty twice in a row); the
    // run's only event, an OrderPlaced, is already applied by Invoicing
    const audit = subscriberQueues('Audit');
    audit.queue.send({ body: JSON.stringify({ id: 'real-refund-1', type: 'com.example.Refunded' }), origin: { via: 'send-message', eventId: 'real-refund-1' } });
    const invoicing = subscriberQueues('Invoicing');
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [],
      resources: [],
      subscribers: [
        { name: 'Invoicing', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Invoicing', processingMode: 'multi-step', queueUrl: invoicing.queue.address.url, deadLetterQueueUrl: invoicing.deadLetters.address.url } },
        {
          name: 'Audit',
          stackName: 'App',
          environment: {},
          deployment: { format: 1, subscriberName: 'Audit', processingMode: 'multi-step', queueUrl: audit.queue.address.url, deadLetterQueueUrl: audit.deadLetters.address.url, filterPolicy: { type: ['com.example.Refunded'] }, filterPolicyScope: 'MessageBody' },
        },
      ],
    };
    const applied: EffectProbe = async ({ events }) => events.map((event) => ({ subject: `order ${event.id}`, eventIds: [event.id], applied: 1 }));
    const settle = settleOptions({ Invoicing: applied }, [runEvent('e-1')], new Map([[invoicing.deadLetters.address.url, 0], [audit.deadLetters.address.url, 0]]));

    // WHEN verify waits, THEN the run's flow is quiet: Audit took nothing of the run, its queue's real traffic is not
    // the run's to wait for (settle.ts pushes any subscriber's non-empty queue before asking what it took)
    await expect(waitUntilQuiet(clients(), flow, settle)).resolves.toBeUndefined();
  });
});
