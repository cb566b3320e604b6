/**
 * Adversarial review of `verify` (issue 43), branch s6-r43: each test names a defect (R43-n) that would hurt a run
 * against a real account: a false OK, a cleanup deleting what the run did not create, ids colliding across runs.
 * Against real parts: the simulator's SQS endpoint (real protocol, the real SDK client) and DynamoDB Local.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { EffectProbe } from '../../../simulator/run/scenario';
import { cleanUpRun } from '../../../simulator/verify/cleanup';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { probeEffects, readDeadLetters } from '../../../simulator/verify/observe';
import { newRunId, withRunIds } from '../../../simulator/verify/run-ids';
import { waitUntilQuiet } from '../../../simulator/verify/settle';
import { formatVerifyReport } from '../../../simulator/verify/verify-report';
import type { VerifyResult } from '../../../simulator/verify/verify-run';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { notAppliedProbe, oneSubscriberFlow, runEvent, settleOptions, VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();
const { clock, queues, dynamoDb, documents } = bed;
const clients = (): VerifyClients => bed.clients();
const subscriberQueues = (name: string): ReturnType<VerifyTestbed['subscriberQueues']> => bed.subscriberQueues(name);

function result(overrides: Partial<VerifyResult>): VerifyResult {
  return {
    runId: 'v0-01020304',
    seed: 'verify',
    stacks: ['App'],
    producer: { total: 10, succeeded: 10, retried: 0, failed: [] },
    committedEvents: 10,
    eventIds: [],
    derivedEvents: [],
    subscribers: [],
    deadLetters: {},
    violations: [],
    effectsNotCounted: [],
    ...overrides,
  };
}

describe('R43 review of verify', () => {
  test('R43-1: a run whose every producer command failed is not reported OK (verify checks no producer-failed)', () => {
    // GIVEN a deployed producer that failed all 10 commands (e.g. AccessDenied on the outbox's KMS key): nothing committed
    const failed = Array.from({ length: 10 }, (_, index) => ({ index, reason: 'the function failed (Unhandled): KMSAccessDeniedException', producer: 'PlaceOrder' }));
    const report = formatVerifyReport(result({ producer: { total: 10, succeeded: 0, retried: 20, failed }, committedEvents: 0, subscribers: [{ name: 'Invoicing', events: 0, deadLettered: 0, effectsApplied: 0 }] }));
    // THEN the verdict is not OK (simulate's producer-failed rule is not among OBSERVABLE_CHECKS; the CLI exits 0 on no violation)
    expect(report).not.toMatch(/^OK:/m);
  });

  test('R43-2: a run that committed no event of the run (or whose events no subscriber took) is not reported OK', () => {
    // GIVEN every command "succeeded" but no outbox event carries the run id (e.g. the producer was idempotent on an id
    // field verify did not rewrite, R43-3): nothing of the run reached any subscriber
    const report = formatVerifyReport(result({ committedEvents: 0, subscribers: [{ name: 'Invoicing', events: 0, deadLettered: 0, effectsApplied: 0 }, { name: 'Shipping', events: 0, deadLettered: 0 }] }));
    // THEN verify does not say every event was applied exactly once: it proved nothing
    expect(report).not.toMatch(/^OK:/m);
  });

  test.each([
    ['snake_case', { order_id: 'order-00001', amount: 5 }],
    ['ID suffix', { orderID: 'order-00001', amount: 5 }],
    ['numeric id', { orderId: 1, amount: 5 }],
    ['key/number fields', { orderNumber: 'order-00001', idempotencyKey: 'k-1' }],
  ])('R43-3: a command whose id is spelt %s is made unique to the run, or refused (never sent as an earlier run sent it)', (_, command) => {
    const first = newRunId(1_700_000_000_000, () => Buffer.from([1, 2, 3, 4]));
    const second = newRunId(1_700_000_000_001, () => Buffer.from([5, 6, 7, 8]));
    let rewritten: [unknown, unknown];
    try {
      rewritten = [withRunIds(command, first), withRunIds(command, second)];
    } catch {
      return; // refusing a command that carries no id verify can make unique is sound
    }
    // THEN two runs never send the same command (the producer would dedupe it, or its events would be another run's)
    expect(JSON.stringify(rewritten[0])).not.toBe(JSON.stringify(rewritten[1]));
  });

  test("R43-4: --cleanup deletes no item that is not the run's, even when a run event's id (a handler chose it) is a substring of other ids", async () => {
    // GIVEN a stack table with a real customer's invoices, and the run's own invoice whose event id the handler chose
    // from a counter ('invoice-42', its data carrying the run's order id: verify counts it as the run's)
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([9, 9, 9, 9]));
    const table = uniqueTableName('r43-cleanup');
    await createTable(dynamoDb, table, { partitionKey: 'pk' });
    await documents.send(new PutCommand({ TableName: table, Item: { pk: 'invoice-42', orderId: `${runId}-order-00001` } }));
    for (const pk of ['invoice-420', 'invoice-421', 'customer-7']) await documents.send(new PutCommand({ TableName: table, Item: { pk, lastInvoice: pk === 'customer-7' ? 'invoice-42' : pk } }));
    const flow: DeployedFlow = { stackNames: ['App'], flows: [], subscribers: [], resources: [{ stackName: 'App', logicalId: 'Invoices', type: 'AWS::DynamoDB::Table', physicalId: table }] };

    // WHEN the run cleans up
    await cleanUpRun(clients(), flow, runId, new Set([`order-placed-${runId}-order-00001`, 'invoice-42']));

    // THEN the real customer's items stay
    for (const pk of ['invoice-420', 'invoice-421', 'customer-7']) {
      const item = await documents.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }));
      expect(item.Item, `${pk} was deleted by the run's cleanup`).toBeDefined();
    }
  });

  test('R43-5: a subscriber without an effect probe is not quiet while its run events are neither in its inbox nor dead-lettered (still in the relay)', async () => {
    // GIVEN Shipping (no effect probe), its queues empty: the run's two events are still in the stream/pipe/topic,
    // its inbox table has no record of them
    const { queue, deadLetters } = subscriberQueues('Shipping');
    const inbox = uniqueTableName('r43-inbox');
    await createTable(dynamoDb, inbox, { partitionKey: 'pk' });
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [],
      resources: [],
      subscribers: [{ name: 'Shipping', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Shipping', processingMode: 'multi-step', queueUrl: queue.address.url, deadLetterQueueUrl: deadLetters.address.url, inboxTable: inbox } }],
    };
    const settle = settleOptions({}, [runEvent('e-1'), runEvent('e-2')], new Map([[deadLetters.address.url, 0]]));

    // WHEN verify waits, THEN it does not declare the flow quiet: the checks would count both events acknowledged
    // (neither on the queue nor dead-lettered) and print OK for a subscriber that never saw them
    await expect(waitUntilQuiet(clients(), flow, settle)).rejects.toThrow(/Shipping/);
  });

  test("R43-6: a dead letter another run or real traffic added does not stand in for the run's unapplied event", async () => {
    // GIVEN Invoicing with a probe: the run's event e-late not applied yet (in the relay); meanwhile a real-traffic
    // message lands in Invoicing's dead-letter queue (after verify took its baseline)
    const { queue, deadLetters } = subscriberQueues('Invoicing');
    deadLetters.send({ body: JSON.stringify({ id: 'real-traffic-event' }), origin: { via: 'send-message', eventId: 'real-traffic-event' } });
    const flow = oneSubscriberFlow('Invoicing', { queue, deadLetters });
    const probe = notAppliedProbe;
    const settle = settleOptions({ Invoicing: probe }, [runEvent('e-late')], new Map([[deadLetters.address.url, 0]]));

    // WHEN verify waits, THEN it keeps waiting for e-late (the foreign dead letter carries no event of the run)
    await expect(waitUntilQuiet(clients(), flow, settle)).rejects.toThrow(/Invoicing: 1 of 1 event/);
  });

  test("R43-7: DEPLOYING.md warns that verify's events are real events to every subscriber (mail sent, payment taken) and names a guard", () => {
    const runbook = readFileSync(path.resolve(__dirname, '../../../docs/DEPLOYING.md'), 'utf8');
    const verifySection = runbook.slice(runbook.indexOf('## 3. Verify'), runbook.indexOf('## 4.'));
    // the run's commands go through the deployed producer: every subscriber acts on them, including those acting outside AWS
    expect(verifySection).toMatch(/(e-?mail|payment|charg|outside AWS|third part)/i);
    expect(verifySection).toMatch(/never .*production|not .*production account|production .*(refus|guard)/i);
  });

  test("R43-8: a dead letter of the run that another reader holds in flight (a concurrent verify run's or dlq list's 120 s read) is not read as 'no dead letter'", async () => {
    // GIVEN Shipping's dead-letter queue holds the run's e-1; another verify run (or an operator's dlq list) has just
    // received every message of that queue, hiding it for 120 s
    const { queue, deadLetters } = subscriberQueues('Shipping');
    deadLetters.send({ body: JSON.stringify({ id: 'e-1' }), origin: { via: 'send-message', eventId: 'e-1' } });
    expect(deadLetters.receive(10, 120)).toHaveLength(1);
    const subscriber = { name: 'Shipping', stackName: 'App', environment: {}, deployment: { format: 1 as const, subscriberName: 'Shipping', processingMode: 'multi-step' as const, queueUrl: queue.address.url, deadLetterQueueUrl: deadLetters.address.url } };

    // WHEN this run reads its dead letters
    const read = await readDeadLetters(clients(), subscriber, new Map([['e-1', runEvent('e-1')]])).catch((error: unknown) => error);

    // THEN it does not answer "none" (the checks would then count e-1 acknowledged: neither on the queue nor
    // dead-lettered, and print OK for a subscriber without a probe): it finds e-1, or fails saying it could not read
    expect(read).not.toEqual([]);
  });

  test('R43-9: DEPLOYING.md gives --cleanup the DynamoDB permissions it uses: Scan and DeleteItem on every table of the stacks, not only the flow\'s', () => {
    // cleanup.ts scans and deletes in every AWS::DynamoDB::Table of the stacks (business tables too)
    const runbook = readFileSync(path.resolve(__dirname, '../../../docs/DEPLOYING.md'), 'utf8');
    const permissions = runbook.slice(runbook.indexOf('The role `verify` runs under needs'), runbook.indexOf('## 4.'));
    expect(permissions).toMatch(/every table of the stacks|all (the )?tables of the stacks/i);
  });

  test("R43-10: the relay's dead-letter queue rising (a batch the pipe gave up on) keeps verify waiting and is named, as DEPLOYING.md says", async () => {
    // GIVEN Shipping (no effect probe), its queues empty, and the flow's relay dead-letter queue (the flow's Operator
    // output) holding the batch of the run's events the pipe gave up on (SNS refused it): they will never arrive
    const { queue, deadLetters } = subscriberQueues('Shipping');
    const relayDeadLetters = makeQueue(queueModel(`RelayDlq${queues.size}`), { clock, baseUrl: bed.server.endpoint });
    queues.set(relayDeadLetters.address.url, relayDeadLetters);
    relayDeadLetters.send({ body: JSON.stringify({ context: { condition: 'RetryAttemptsExhausted' }, dynamoDbStreamBatchInfo: { batchSize: 2 } }), origin: { via: 'send-message' } });
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [{ outboxTable: 'Outbox', relayDeadLetterQueueUrl: relayDeadLetters.address.url }],
      resources: [],
      subscribers: [{ name: 'Shipping', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Shipping', processingMode: 'multi-step', queueUrl: queue.address.url, deadLetterQueueUrl: deadLetters.address.url } }],
    };
    const settle = settleOptions({}, [runEvent('e-1'), runEvent('e-2')], new Map([[deadLetters.address.url, 0]]));

    // WHEN verify waits, THEN it is not quiet, and what it waits for names the relay's dead-letter queue (settle.ts
    // never reads it: the events would be counted acknowledged, neither on Shipping's queue nor dead-lettered)
    await expect(waitUntilQuiet(clients(), flow, settle)).rejects.toThrow(/relay's dead-letter queue|relay dead-letter queue/i);
  });

  test("R43-11: a probe that counts effects by sentMessages (SIMULATOR.md: effects outside DynamoDB) is told verify cannot show them, not handed an empty list", async () => {
    // GIVEN Invoicing's probe counting each order's mail among the messages the app sent to queues it does not consume
    const probe: EffectProbe = async ({ events, sentMessages }) =>
      events.map((event) => ({ subject: `order ${event.id} mails`, eventIds: [event.id], applied: sentMessages.filter((message) => message.eventId === event.id).length }));
    const { queue, deadLetters } = subscriberQueues('Invoicing');
    const subscriber = { name: 'Invoicing', stackName: 'App', environment: {}, deployment: { format: 1 as const, subscriberName: 'Invoicing', processingMode: 'multi-step' as const, queueUrl: queue.address.url, deadLetterQueueUrl: deadLetters.address.url } };

    // WHEN verify runs it against the deployed flow (where the mails really went out)
    const outcome = await probeEffects(clients(), probe, subscriber, new Set(['e-1']), new Map([['e-1', runEvent('e-1')]]));

    // THEN the probe's outcome says sentMessages cannot be read on AWS (observe.ts feeds []: every mail counts 0 and
    // the verdict says effect-count "applied 0 times" for mails that were sent, or the wait runs to its time limit)
    expect(JSON.stringify(outcome)).toMatch(/sentMessages/);
  });
});
