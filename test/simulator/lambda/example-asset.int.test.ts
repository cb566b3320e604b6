/**
 * The REAL bundled asset of the example's Shipping subscriber (a transactional consumer), as the cloud assembly has it,
 * run by the function runner against DynamoDB Local: it processes an SQS event built from a simulated queue, and a
 * crash after its commit followed by a redelivery leaves exactly one shipment and one inbox record.
 *
 * The assembly is synthesized from the current sources once per test run (test/support/example-assembly.ts).
 */
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import type { FunctionRunner } from '../../../simulator/lambda/function-runner';
import { lambdaSqsEvent } from '../../../simulator/lambda/sqs-event';
import type { FunctionModel, LocalNames, ResourceKey } from '../../../simulator/model/flow-model';
import { resolveEnvironment } from '../../../simulator/model/intrinsics';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { exampleAssembly } from '../../support/example-assembly';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { envelopeObject } from '../../lambda/helpers';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { runner } from './handler-kit';

const ORDER_PLACED = 'com.example.orders.OrderPlaced';

let client: DynamoDBClient;
let shipping: FunctionModel;
let tables: { shipments: string; inbox: string };
let run: FunctionRunner;
const output: string[] = [];

/** The key of the resource a function variable `Ref`s. */
function referencedKey(fn: FunctionModel, variable: string): ResourceKey {
  const value = fn.environment[variable] as { Ref?: string } | undefined;
  if (value?.Ref === undefined) throw new Error(`variable ${variable} of ${fn.key} is not a Ref: ${JSON.stringify(value)}`);
  return `${fn.stackName}/${value.Ref}`;
}

beforeAll(async () => {
  const model = readAssembly(await exampleAssembly());
  const found = model.functions.filter((fn) => fn.environment.IEF_SUBSCRIBER_NAME === 'Shipping');
  expect(found).toHaveLength(1);
  shipping = found[0];
  expect(fs.existsSync(path.join(shipping.assetDirectory, 'index.js'))).toBe(true);

  client = localClient();
  tables = { shipments: uniqueTableName('asset-shipments'), inbox: uniqueTableName('asset-shipping-inbox') };
  await Promise.all([createTable(client, tables.shipments, { partitionKey: 'pk' }), createTable(client, tables.inbox, { partitionKey: 'pk' })]);
  const refs = new Map<ResourceKey, string>([
    [referencedKey(shipping, 'SHIPMENTS_TABLE_NAME'), tables.shipments],
    [referencedKey(shipping, 'IEF_INBOX_TABLE_NAME'), tables.inbox],
    [referencedKey(shipping, 'IEF_DEAD_LETTER_QUEUE_URL'), 'http://127.0.0.1:9/000000000000/shipping-dlq'],
    // the example offloads large events: Shipping reads the flow's payload bucket (never here: these events are inline)
    [referencedKey(shipping, 'IEF_PAYLOAD_BUCKET_NAME'), 'asset-payloads-never-read'],
  ]);
  const names: LocalNames = { ref: (key) => refs.get(key), getAtt: () => undefined, region: 'us-east-1', accountId: '000000000000' };
  run = runner(shipping, {
    environment: resolveEnvironment(shipping, names),
    region: 'us-east-1',
    observer: { onFunctionOutput: (_key, line) => output.push(line) },
    // the first invocation dies right after its transaction committed
    decideFault: (invocationKey, request) => (invocationKey === 'first-delivery' && request.operation === 'TransactWriteItems' ? 'crash-after' : 'none'),
  });
});

afterAll(async () => {
  await run?.stop();
});

async function items(tableName: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return Items;
}

describe('the example Shipping asset in the function runner', () => {
  test('a crash after the commit, then the redelivery: one shipment, one inbox record, the batch acknowledged', async () => {
    const clock = new VirtualClock();
    const queue = makeQueue(queueModel('ShippingQueue'), { clock });
    const envelope = envelopeObject({
      type: ORDER_PLACED,
      source: 'urn:example:orders',
      subject: 'order-1',
      data: { orderId: 'order-1', customerId: 'customer-1', totalCents: 1999, shippingAddress: { country: 'NL', postalCode: '1011 AB' } },
    });
    queue.send({ body: JSON.stringify(envelope), origin: { via: 'send-message', eventId: String(envelope.id) } });

    const [first] = queue.receive(1);
    const crashed = await run.invoke(lambdaSqsEvent([first], queue.address.arn, 'us-east-1'), 'first-delivery');
    expect(crashed).toEqual({ kind: 'crashed', atRequest: expect.any(Number), afterCommit: true });
    expect(await items(tables.shipments)).toHaveLength(1);

    clock.advanceBy(queue.model.visibilityTimeoutSeconds * 1000);
    const [again] = queue.receive(1);
    expect(again.receiveCount).toBe(2);
    const redelivered = await run.invoke(lambdaSqsEvent([again], queue.address.arn, 'us-east-1'), 'redelivery');
    expect(redelivered).toEqual({ kind: 'returned', response: { batchItemFailures: [] } });

    const shipments = await items(tables.shipments);
    expect(shipments).toEqual([expect.objectContaining({ pk: { S: 'SHIPMENT#order-1' }, country: { S: 'NL' }, status: { S: 'PENDING' } })]);
    expect(await items(tables.inbox)).toHaveLength(1);
    expect(run.stats()).toEqual({ invocations: 2, coldStarts: 2, preInitialized: 0, crashes: 1 });
    // the consumer's structured logs reached the observer: the redelivery was recognised as a duplicate (at the default
    // INFO level, in the batch's summary line; the per-record line is DEBUG)
    expect(output.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { outcome?: string })).toContainEqual(
      expect.objectContaining({ message: 'batch', subscriber: 'Shipping', outcomes: { duplicate: 1 } }),
    );
  });
});
