/**
 * What the fixes of review r43 (./r43-review.test.ts) must still let verify do, so none of them is a refusal of
 * everything: cleanup still removes the run's own items (by exact key parts), a probe-less subscriber whose inbox shows
 * every event is quiet, an OK run still says OK, the account guard lets the named account through. And the edges of the
 * fixes: key parts, never substrings; a command without an id refused; a subscriber verify cannot see is NOT PROVEN.
 * Against real parts: the simulator's SQS endpoint (real protocol, the real SDK client) and DynamoDB Local.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { OUTBOX_ITEM, recordKey } from '../../../lambda/contract/wire-format';
import { cleanUpRun, keyHolds } from '../../../simulator/verify/cleanup';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { newRunId, RunIdError, withRunIds } from '../../../simulator/verify/run-ids';
import { waitUntilQuiet } from '../../../simulator/verify/settle';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { refuseOtherAccounts } from '../../../simulator/verify/verify-run';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { runEvent, VerifyTestbed } from './verify-test-kit';
import { verifyResult } from './verify-result-kit';

const bed = VerifyTestbed.start();
const { clock, queues, dynamoDb, documents } = bed;
const clients = (): VerifyClients => bed.clients();


describe('verify after the r43 fixes', () => {
  test('a key holds a mark only as itself or a whole separated part', () => {
    expect(keyHolds('invoice-42', 'invoice-42')).toBe(true);
    expect(keyHolds('CUSTOMER#v0-1-customer-3', 'v0-1-customer-3')).toBe(true);
    expect(keyHolds('Tracking@sequence#v0-1-order-1', 'v0-1-order-1')).toBe(true);
    expect(keyHolds('v0-1-order-1|2', 'v0-1-order-1')).toBe(true);
    expect(keyHolds('invoice-420', 'invoice-42')).toBe(false);
    expect(keyHolds('CUSTOMER#v0-1-customer-30', 'v0-1-customer-3')).toBe(false);
    expect(keyHolds('xv0-1-order-1', 'v0-1-order-1')).toBe(false);
  });

  test('run ids: a field named paid or total is no id; a command with no id field is refused; the values made are collected', () => {
    const runId = newRunId(0, () => Buffer.from([1, 2, 3, 4]));
    const minted = new Set<string>();
    expect(withRunIds({ order_id: 'o-1', paid: 'yes', totalCents: 5 }, runId, minted)).toEqual({ order_id: `${runId}-o-1`, paid: 'yes', totalCents: 5 });
    expect([...minted]).toEqual([`${runId}-o-1`]);
    expect(() => withRunIds({ amount: 5, note: 'n' }, runId)).toThrow(RunIdError);
    expect(() => withRunIds({ orderId: 7 }, runId)).toThrow(/'orderId' holds a number/);
  });

  test("cleanup removes the run's own items: keys holding an id it made, and the outbox/inbox keys of its events, whatever their id", async () => {
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([7, 7, 7, 7]));
    const minted = new Set([`${runId}-customer-3`, `${runId}-order-00001`]);
    const ledger = uniqueTableName('r43-fix-ledger');
    const outbox = uniqueTableName('r43-fix-outbox');
    const inbox = uniqueTableName('r43-fix-inbox');
    await createTable(dynamoDb, ledger, { partitionKey: 'pk' });
    await createTable(dynamoDb, outbox, { partitionKey: 'pk', sortKey: 'sk' });
    await createTable(dynamoDb, inbox, { partitionKey: 'pk' });
    const put = (table: string, item: Record<string, unknown>) => documents.send(new PutCommand({ TableName: table, Item: item }));
    await put(ledger, { pk: `CUSTOMER#${runId}-customer-3`, orderCount: 1 });
    await put(ledger, { pk: 'CUSTOMER#customer-3', lastOrder: `${runId}-order-00001` });
    await put(outbox, { pk: `${OUTBOX_ITEM.KEY_PREFIX}order-placed-${runId}-order-00001`, sk: 'event' });
    await put(outbox, { pk: `${OUTBOX_ITEM.KEY_PREFIX}invoice-42`, sk: 'event' });
    await put(outbox, { pk: `${OUTBOX_ITEM.KEY_PREFIX}invoice-420`, sk: 'event' });
    await put(inbox, { pk: recordKey('Invoicing', 'invoice-42') });
    await put(inbox, { pk: recordKey('Invoicing', 'invoice-420') });
    const table = (physicalId: string) => ({ stackName: 'App', logicalId: physicalId, type: 'AWS::DynamoDB::Table', physicalId });
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [{ outboxTable: outbox }],
      resources: [table(ledger), table(outbox), table(inbox)],
      subscribers: [{ name: 'Invoicing', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Invoicing', processingMode: 'multi-step', queueUrl: 'unused', deadLetterQueueUrl: 'unused', inboxTable: inbox } }],
    };
    const dlq = makeQueue(queueModel(`FixDlq${queues.size}`), { clock, baseUrl: bed.server.endpoint });
    queues.set(dlq.address.url, dlq);
    const withQueues: DeployedFlow = { ...flow, subscribers: flow.subscribers.map((subscriber) => ({ ...subscriber, deployment: { ...subscriber.deployment, queueUrl: dlq.address.url, deadLetterQueueUrl: dlq.address.url } })) };

    const removed = await cleanUpRun(clients(), withQueues, runId, new Set([`order-placed-${runId}-order-00001`, 'invoice-42']), minted);

    const exists = async (tableName: string, key: Record<string, unknown>) => (await documents.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item !== undefined;
    expect(await exists(ledger, { pk: `CUSTOMER#${runId}-customer-3` })).toBe(false);
    expect(await exists(outbox, { pk: `${OUTBOX_ITEM.KEY_PREFIX}order-placed-${runId}-order-00001`, sk: 'event' })).toBe(false);
    expect(await exists(outbox, { pk: `${OUTBOX_ITEM.KEY_PREFIX}invoice-42`, sk: 'event' })).toBe(false);
    // the inbox record of the run's event stays (review v11, V11-11): deleted, a late duplicate delivery would apply it again
    expect(await exists(inbox, { pk: recordKey('Invoicing', 'invoice-42') })).toBe(true);
    // a real customer's item naming the run's order, and the items of ids that only begin like the run's, stay
    expect(await exists(ledger, { pk: 'CUSTOMER#customer-3' })).toBe(true);
    expect(await exists(outbox, { pk: `${OUTBOX_ITEM.KEY_PREFIX}invoice-420`, sk: 'event' })).toBe(true);
    expect(await exists(inbox, { pk: recordKey('Invoicing', 'invoice-420') })).toBe(true);
    expect(removed).toEqual([
      `1 item(s) of the run from table ${ledger}`,
      `2 item(s) of the run from table ${outbox}`,
      `left 1 item(s) in table ${ledger}: their data names the run, their key holds no id of it (a key a handler chose, or an item the run only updated); not removed`,
      `kept 1 runtime record(s) of the run in table ${inbox} (Invoicing): a late duplicate delivery of one of the run's events finds them and is not applied again; 1 inbox record(s) expire by their TTL after the deduplication window`,
    ]);
  });

  test('a subscriber without a probe whose inbox records every run event is quiet', async () => {
    const queue = makeQueue(queueModel(`FixQueue${queues.size}`), { clock, baseUrl: bed.server.endpoint });
    const deadLetters = makeQueue(queueModel(`FixDlq${queues.size + 1}`), { clock, baseUrl: bed.server.endpoint });
    for (const item of [queue, deadLetters]) queues.set(item.address.url, item);
    const inbox = uniqueTableName('r43-fix-quiet');
    await createTable(dynamoDb, inbox, { partitionKey: 'pk' });
    for (const id of ['e-1', 'e-2']) await documents.send(new PutCommand({ TableName: inbox, Item: { pk: recordKey('Shipping', id), eventId: id, processedAt: '2026-01-01T00:00:00.000Z' } }));
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [],
      resources: [],
      subscribers: [{ name: 'Shipping', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Shipping', processingMode: 'transactional', queueUrl: queue.address.url, deadLetterQueueUrl: deadLetters.address.url, inboxTable: inbox } }],
    };
    let nowMs = 0;
    await expect(
      waitUntilQuiet(clients(), flow, {
        timeoutSeconds: 30,
        pollSeconds: 5,
        probes: {},
        readEvents: async () => new Map([runEvent('e-1'), runEvent('e-2')].map((item) => [item.event.id, item])),
        onProgress: () => undefined,
        deadLetterBaseline: new Map([[deadLetters.address.url, 0]]),
        now: () => nowMs,
        pause: async (seconds) => void (nowMs += seconds * 1000),
      }),
    ).resolves.toBeUndefined();
  });

  test('the verdict: OK when all was seen; NOT PROVEN for what verify could not see; VIOLATED for a failed command', () => {
    expect(verifyVerdict(verifyResult({})).status).toBe('OK');
    expect(verifyVerdict(verifyResult({ unproven: ['CustomerStats keeps no inbox (aggregate mode) and the scenario has no effect probe for it'] }))).toMatchObject({ status: 'NOT PROVEN', violations: [] });
    const failed = verifyVerdict(verifyResult({ producer: { total: 2, succeeded: 1, retried: 2, failed: [{ index: 1, reason: 'the function failed (Unhandled): boom', producer: 'PlaceOrder' }] } }));
    expect(failed.status).toBe('VIOLATED');
    expect(failed.violations.map((violation) => violation.kind)).toEqual(['producer-failed']);
  });

  test('--account lets the named account through and refuses a flow with a stack elsewhere, or of an unknown account', () => {
    expect(() => refuseOtherAccounts({ stackNames: ['App'], accounts: ['111111111111'] }, ['111111111111'])).not.toThrow();
    expect(() => refuseOtherAccounts({ stackNames: ['App'], accounts: ['111111111111', '999999999999'] }, ['111111111111'])).toThrow(/999999999999.*--account/);
    expect(() => refuseOtherAccounts({ stackNames: ['App'] }, ['111111111111'])).toThrow(/unknown/);
    expect(() => refuseOtherAccounts({ stackNames: ['App'], accounts: ['999999999999'] }, undefined)).not.toThrow();
  });
});
