/**
 * The example's real handlers (example/functions) against DynamoDB Local: one order end to end through every
 * processing mode, each subscriber fed every message twice, as SQS may deliver it; one order's fulfilment steps through
 * the ordered path (OrderedOutbox, the tracking subscriber's sequence fence). The modules read their table names
 * at import, so each is imported with the environment its function is deployed with; the runtime's client and
 * configuration are passed through the handler factories.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { OrderedOutbox, Outbox, S3PayloadStore } from '../../lambda/index';
import { parseDataRef } from '../../lambda/contract/claim-check';
import { startLocalS3 } from '../support/s3-local';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { loadConsumerBaseConfig, loadConsumerConfig, loadLeaseConsumerConfig, loadProducerConfig } from '../../lambda/config';
import { ENV, PROCESSING_MODE, type ProcessingModeName } from '../../lambda/contract/environment';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { createTable, localClient, uniqueTableName } from '../support/dynamodb-client';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';

type Environment = Record<string, string>;

const tables = {
  orders: uniqueTableName('example-orders'),
  ledger: uniqueTableName('example-ledger'),
  accountingInvoices: uniqueTableName('example-invoices'),
  mail: uniqueTableName('example-mail'),
  customerStats: uniqueTableName('example-stats'),
  outbox: uniqueTableName('example-outbox'),
  billingInbox: uniqueTableName('example-billing-inbox'),
  invoicingInbox: uniqueTableName('example-invoicing-inbox'),
  notificationsInbox: uniqueTableName('example-notifications-inbox'),
  fulfilment: uniqueTableName('example-fulfilment'),
  tracking: uniqueTableName('example-tracking'),
  trackingInbox: uniqueTableName('example-tracking-inbox'),
};

/** What the constructs set on a producer (and on a subscriber with `publishesEvents: true`). */
const producerEnvironment: Environment = {
  [ENV.OUTBOX_TABLE_NAME]: tables.outbox,
  [ENV.OUTBOX_PARTITION_KEY_NAME]: TABLE_SCHEMA.PARTITION_KEY,
  [ENV.OUTBOX_SORT_KEY_NAME]: TABLE_SCHEMA.SORT_KEY,
  [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
  [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: String(7 * 86_400),
  [ENV.EVENT_SOURCE]: 'urn:example:orders',
};

/**
 * What the constructs set on a subscriber with an inbox (every mode but AGGREGATE): its name, its mode, the inbox and
 * the default deduplication window (30 days).
 */
function inboxSubscriberEnvironment(subscriberName: string, processingMode: ProcessingModeName, inboxTableName: string): Environment {
  return {
    [ENV.SUBSCRIBER_NAME]: subscriberName,
    [ENV.PROCESSING_MODE]: processingMode,
    [ENV.INBOX_TABLE_NAME]: inboxTableName,
    [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(30 * 86_400),
  };
}

/** Each function's environment as the example stack deploys it (dead-letter queue URLs left out: a recorder stands in). */
const environments = {
  placeOrder: { ...producerEnvironment, ORDERS_TABLE_NAME: tables.orders },
  billing: {
    ...producerEnvironment,
    ...inboxSubscriberEnvironment('Billing', PROCESSING_MODE.TRANSACTIONAL, tables.billingInbox),
    LEDGER_TABLE_NAME: tables.ledger,
  },
  invoicing: {
    ...inboxSubscriberEnvironment('Invoicing', PROCESSING_MODE.MULTI_STEP, tables.invoicingInbox),
    [ENV.LEASE_DURATION_SECONDS]: '30',
    ACCOUNTING_INVOICES_TABLE_NAME: tables.accountingInvoices,
    MAIL_TABLE_NAME: tables.mail,
  },
  notifications: {
    ...inboxSubscriberEnvironment('Notifications', PROCESSING_MODE.LEASE, tables.notificationsInbox),
    [ENV.LEASE_DURATION_SECONDS]: '30',
    MAIL_TABLE_NAME: tables.mail,
  },
  customerStats: {
    [ENV.SUBSCRIBER_NAME]: 'CustomerStats',
    [ENV.PROCESSING_MODE]: PROCESSING_MODE.AGGREGATE,
    CUSTOMER_STATS_TABLE_NAME: tables.customerStats,
  },
  fulfilment: { ...producerEnvironment, FULFILMENT_TABLE_NAME: tables.fulfilment },
  orderTracking: { ...inboxSubscriberEnvironment('OrderTracking', PROCESSING_MODE.TRANSACTIONAL, tables.trackingInbox), TRACKING_TABLE_NAME: tables.tracking },
} satisfies Record<string, Environment>;

/** Imports a module with `environment` set (as Lambda sets it before the module loads), then restores process.env. */
async function importWith<T>(environment: Environment, load: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
  Object.assign(process.env, { AWS_REGION: 'us-east-1', ...environment });
  try {
    return await load();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let modules: {
  placeOrder: typeof import('../../example/functions/place-order');
  billing: typeof import('../../example/functions/billing');
  invoicing: typeof import('../../example/functions/invoicing');
  notifications: typeof import('../../example/functions/notifications');
  customerStats: typeof import('../../example/functions/customer-stats');
  fulfilOrder: typeof import('../../example/functions/fulfil-order');
  orderTracking: typeof import('../../example/functions/order-tracking');
};

beforeAll(async () => {
  client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  const plain = [tables.orders, tables.ledger, tables.accountingInvoices, tables.mail, tables.customerStats, tables.fulfilment, tables.tracking];
  await Promise.all([
    ...plain.map((name) => createTable(client, name, { partitionKey: 'pk' })),
    createTable(client, tables.outbox, { partitionKey: TABLE_SCHEMA.PARTITION_KEY, sortKey: TABLE_SCHEMA.SORT_KEY }),
    createTable(client, tables.billingInbox, { partitionKey: TABLE_SCHEMA.PARTITION_KEY }),
    createTable(client, tables.trackingInbox, { partitionKey: TABLE_SCHEMA.PARTITION_KEY }),
    createInboxTable(client, tables.invoicingInbox),
    createInboxTable(client, tables.notificationsInbox),
  ]);
  modules = {
    placeOrder: await importWith(environments.placeOrder, () => import('../../example/functions/place-order.js')),
    billing: await importWith(environments.billing, () => import('../../example/functions/billing.js')),
    invoicing: await importWith(environments.invoicing, () => import('../../example/functions/invoicing.js')),
    notifications: await importWith(environments.notifications, () => import('../../example/functions/notifications.js')),
    customerStats: await importWith(environments.customerStats, () => import('../../example/functions/customer-stats.js')),
    fulfilOrder: await importWith(environments.fulfilment, () => import('../../example/functions/fulfil-order.js')),
    orderTracking: await importWith(environments.orderTracking, () => import('../../example/functions/order-tracking.js')),
  };
});

/** What every consumer gets in these tests: a recording logger and dead-letter publisher, no metrics output. */
function observed() {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  return { options: { logger, deadLetter, metricsSink: () => undefined }, lines, deadLetter };
}

/** The example's handlers, wired to DynamoDB Local with the configuration their deployed environment gives. */
function handlers(lambdaClient: DynamoDBClient = client) {
  const outbox = new Outbox({ client: lambdaClient, config: loadProducerConfig(producerEnvironment) });
  const billing = observed();
  const invoicing = observed();
  const notifications = observed();
  const customerStats = observed();
  const orderTracking = observed();
  return {
    fulfilOrder: modules.fulfilOrder.createFulfilOrderHandler({ outbox: new OrderedOutbox({ client: lambdaClient, config: loadProducerConfig(producerEnvironment) }) }),
    orderTracking: {
      ...orderTracking,
      handler: modules.orderTracking.createOrderTrackingHandler({ ...orderTracking.options, client: lambdaClient, config: loadConsumerConfig(environments.orderTracking) }),
    },
    placeOrder: modules.placeOrder.createPlaceOrderHandler({ client: lambdaClient, outbox }),
    billing: {
      ...billing,
      handler: modules.billing.createBillingHandler({ ...billing.options, client: lambdaClient, config: loadConsumerConfig(environments.billing), outbox }),
    },
    invoicing: {
      ...invoicing,
      handler: modules.invoicing.createInvoicingHandler({ ...invoicing.options, client: lambdaClient, config: loadLeaseConsumerConfig(environments.invoicing) }),
    },
    notifications: {
      ...notifications,
      handler: modules.notifications.createNotificationsHandler({
        ...notifications.options,
        client: lambdaClient,
        config: loadLeaseConsumerConfig(environments.notifications),
      }),
    },
    customerStats: {
      ...customerStats,
      handler: modules.customerStats.createCustomerStatsHandler({
        ...customerStats.options,
        client: lambdaClient,
        config: loadConsumerBaseConfig(environments.customerStats),
      }),
    },
  };
}

/** Delivers `body` as one SQS message (a fresh message id each time, as a redelivery through SNS would have). */
async function deliver(handler: SqsBatchHandler, body: string): Promise<void> {
  const response = await handler({ Records: [sqsRecord(body)] });
  expect(response.batchItemFailures).toEqual([]);
}

/** The message body the relay publishes for an outbox item: its envelope attribute, unchanged. */
async function relayedBody(eventId: string): Promise<string> {
  const key = `${OUTBOX_ITEM.KEY_PREFIX}${eventId}`;
  const { Item } = await documents.send(new GetCommand({ TableName: tables.outbox, Key: { pk: key, sk: key }, ConsistentRead: true }));
  expect(Item, `outbox item of ${eventId}`).toBeDefined();
  return Item?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE] as string;
}

async function item(tableName: string, pk: string): Promise<Record<string, unknown> | undefined> {
  return (await documents.send(new GetCommand({ TableName: tableName, Key: { pk }, ConsistentRead: true }))).Item;
}

async function scan(tableName: string): Promise<Array<Record<string, unknown>>> {
  return (await documents.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? [];
}

function newOrder() {
  const id = randomUUID().slice(0, 8);
  return {
    orderId: `order-${id}`,
    customerId: `customer-${id}`,
    totalCents: 4200,
    shippingAddress: { country: 'NL', postalCode: '1011 AB' },
  };
}

describe('example handlers, end to end', () => {
  test('one order takes effect exactly once in every subscriber, however often each message is delivered', async () => {
    // GIVEN
    const flow = handlers();
    const order = newOrder();

    // WHEN the order is placed
    const placed = await flow.placeOrder(order);
    const orderPlaced = await relayedBody(placed.eventId);
    // and every OrderPlaced subscriber gets the event twice
    for (const subscriber of [flow.billing, flow.invoicing, flow.notifications]) {
      await deliver(subscriber.handler, orderPlaced);
      await deliver(subscriber.handler, orderPlaced);
    }
    // and the OrderBilled that billing emitted reaches customer stats twice
    const outboxItems = (await scan(tables.outbox)).filter((entry) => (JSON.parse(entry[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE] as string) as { data: { orderId?: string } }).data.orderId === order.orderId);
    const billed = outboxItems.filter((entry) => entry[OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE] === 'com.example.billing.OrderBilled');
    expect(billed).toHaveLength(1);
    const orderBilled = await relayedBody(billed[0]?.[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] as string);
    await deliver(flow.customerStats.handler, orderBilled);
    await deliver(flow.customerStats.handler, orderBilled);

    // THEN the producer wrote the order and exactly one OrderPlaced; billing emitted exactly one OrderBilled
    expect(await item(tables.orders, `ORDER#${order.orderId}`)).toMatchObject({ status: 'PLACED', totalCents: 4200 });
    expect(outboxItems.map((entry) => entry[OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]).sort()).toEqual(['com.example.billing.OrderBilled', 'com.example.orders.OrderPlaced']);
    expect(JSON.parse(orderBilled)).toMatchObject({
      type: 'com.example.billing.OrderBilled',
      subject: order.orderId,
      data: { orderId: order.orderId, customerId: order.customerId, amountCents: 4200 },
    });
    // each subscriber applied the first delivery and recognised the second
    for (const subscriber of [flow.billing, flow.invoicing, flow.notifications, flow.customerStats]) {
      expect(outcomesOf(subscriber.lines)).toEqual(['processed', 'duplicate']);
      expect(subscriber.deadLetter.published).toEqual([]);
    }
    // billing (transactional): the ledger was debited once
    expect(await item(tables.ledger, `CUSTOMER#${order.customerId}`)).toMatchObject({ balanceCents: -4200, orderCount: 1, lastOrderId: order.orderId });
    // invoicing (multi-step): one invoice in the accounting system, mailed once
    const invoices = (await scan(tables.accountingInvoices)).filter((invoice) => invoice.orderId === order.orderId);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ customerId: order.customerId, amountCents: 4200 });
    expect(await item(tables.mail, `INVOICE#${invoices[0]?.invoiceId as string}`)).toMatchObject({ sent: 1, recipient: order.customerId });
    // notifications (lease): one confirmation, sent with the message's idempotency key
    expect(await item(tables.mail, `CONFIRMATION#${order.orderId}`)).toMatchObject({
      sent: 1,
      recipient: order.customerId,
      idempotencyKey: `Notifications#${placed.eventId}`,
    });
    // customer stats (aggregate): counted once, version 1
    expect(await item(tables.customerStats, `CUSTOMER#${order.customerId}`)).toMatchObject({
      customerId: order.customerId,
      orderCount: 1,
      billedCents: 4200,
      lastOrderId: order.orderId,
      aggregateVersion: 1,
    });
  });

  test('fulfilment steps reach order tracking in their sequence: a step delivered before its predecessor waits, a step redelivered applies once, and the tracking page ends at the last step', async () => {
    // GIVEN
    const flow = handlers();
    const { orderId } = newOrder();

    // WHEN the warehouse packs, ships and delivers the order, sending the ship command twice (its first answer lost)
    const answers = [];
    for (const step of ['pack', 'ship', 'ship', 'deliver'] as const) answers.push(await flow.fulfilOrder({ orderId, step }));
    // and a return now, which only a shipped order allows
    const late = await flow.fulfilOrder({ orderId, step: 'return' });

    // THEN each step committed once, with its event in the order's next sequence; the return wrote nothing
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
    expect(answers[2]).toEqual(answers[1]);
    expect(late).toEqual({ statusCode: 409, body: `order ${orderId} cannot be returned now: it is not SHIPPED; nothing was written` });
    expect(await item(tables.fulfilment, `FULFILMENT#${orderId}`)).toMatchObject({ status: 'DELIVERED', steps: ['PACKED', 'SHIPPED', 'DELIVERED'] });
    const [packed, shipped, delivered] = await Promise.all(['packed', 'shipped', 'delivered'].map((status) => relayedBody(`order-${status}-${orderId}`)));
    expect([packed, shipped, delivered].map((body) => JSON.parse(body!) as { partitionkey: string; sequence: string }).map(({ partitionkey, sequence }) => `${partitionkey} ${Number(sequence)}`)).toEqual([
      `${orderId} 1`,
      `${orderId} 2`,
      `${orderId} 3`,
    ]);
    expect((await scan(tables.outbox)).filter((entry) => entry[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] === `order-returned-${orderId}`)).toEqual([]);

    // WHEN order tracking gets the delivery before anything else (a redrive can bring it early), then the steps in
    // order, the shipping twice
    const early = await flow.orderTracking.handler({ Records: [sqsRecord(delivered!)] });
    for (const body of [packed!, shipped!, shipped!, delivered!]) await deliver(flow.orderTracking.handler, body);

    // THEN the early delivery was refused for a retry, and the page shows each step once, in sequence
    expect(early.batchItemFailures).toHaveLength(1);
    expect(outcomesOf(flow.orderTracking.lines)).toEqual(['failed', 'processed', 'processed', 'duplicate', 'processed']);
    expect(flow.orderTracking.deadLetter.published).toEqual([]);
    expect(await item(tables.tracking, `TRACKING#${orderId}`)).toMatchObject({
      status: 'DELIVERED',
      timeline: [
        { status: 'PACKED', eventId: `order-packed-${orderId}` },
        { status: 'SHIPPED', eventId: `order-shipped-${orderId}` },
        { status: 'DELIVERED', eventId: `order-delivered-${orderId}` },
      ],
    });
  });

  test('placing an order again answers as the first time (a client retry), and the same id with other contents is refused', async () => {
    // GIVEN an order placed once
    const flow = handlers();
    const order = newOrder();
    const first = await flow.placeOrder(order);

    // WHEN the client sends the same command again, and then another order with the same id
    const again = await flow.placeOrder(order);
    const conflicting = flow.placeOrder({ ...order, totalCents: order.totalCents + 1 });

    // THEN the retry gets the same answer, the conflict is refused as permanent, and there is still one event
    expect(again).toEqual(first);
    await expect(conflicting).rejects.toMatchObject({ name: 'OrderConflictError', message: expect.stringContaining(`order '${order.orderId}' was placed before with other contents`) });
    const events = (await scan(tables.outbox)).filter((entry) => entry[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] === first.eventId);
    expect(events).toHaveLength(1);
    expect(await item(tables.orders, `ORDER#${order.orderId}`)).toMatchObject({ totalCents: order.totalCents });
  });

  test('an order carrying a 6 MiB document is placed: its event carries the document (offloaded), the order item only its name and size', async () => {
    // GIVEN the flow's payload bucket (offloadLargeEvents) and a producer that offloads to it, as the stack deploys it
    const s3 = await startLocalS3();
    try {
      const bucketName = await s3.createBucket('example-payloads');
      const outbox = new Outbox({ client, config: loadProducerConfig(producerEnvironment), claimCheck: { config: { bucketName, keyPrefix: 'event-data/', inlineThresholdBytes: 26_214 }, store: new S3PayloadStore(s3.client) } });
      const placeOrder = modules.placeOrder.createPlaceOrderHandler({ client, outbox });
      const order = { ...newOrder(), attachmentBytes: 6 * 1024 * 1024 };

      // WHEN the order is placed
      const { eventId } = await placeOrder(order);

      // THEN the order item (at most 400 KB, as every DynamoDB item) keeps the document's name, type and size only ...
      const stored = await item(tables.orders, `ORDER#${order.orderId}`);
      expect(stored?.attachment).toEqual({ name: `contract-${order.orderId}.txt`, contentType: 'text/plain', bytes: order.attachmentBytes });
      // ... and the event's data, in the payload bucket, has the whole document
      const envelope = JSON.parse(await relayedBody(eventId)) as { dataref: string };
      const { key } = parseDataRef(envelope.dataref)!;
      const object = await s3.client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
      const data = JSON.parse(await object.Body!.transformToString('utf8')) as { attachment: { content: string; bytes: number } };
      expect(data.attachment.bytes).toBe(order.attachmentBytes);
      expect(data.attachment.content).toHaveLength(order.attachmentBytes);
    } finally {
      await s3.stop();
    }
  });

  test('billing dead-letters an OrderPlaced whose data fails its checks, before debiting anything', async () => {
    // GIVEN
    const { billing } = handlers();
    const customerId = `customer-${randomUUID().slice(0, 8)}`;
    const envelope = {
      specversion: '1.0',
      id: `order-placed-${randomUUID()}`,
      source: 'urn:example:orders',
      type: 'com.example.orders.OrderPlaced',
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data: { orderId: 'order-bad', customerId, totalCents: '42.00' },
    };

    // WHEN
    await deliver(billing.handler, JSON.stringify(envelope));

    // THEN
    expect(outcomesOf(billing.lines)).toEqual(['dead-lettered']);
    expect(billing.deadLetter.published).toHaveLength(1);
    expect(billing.deadLetter.published[0]).toMatchObject({ errorName: 'SchemaValidationError', eventId: envelope.id });
    expect(billing.deadLetter.published[0]?.errorMessage).toContain('totalCents');
    expect(await item(tables.ledger, `CUSTOMER#${customerId}`)).toBeUndefined();
  });

  test("invoicing recognises its own invoice when the SDK retried a create-invoice call whose response was lost", async () => {
    // GIVEN a client that loses the response of the first PutItem to the accounting system (DynamoDB applied it)
    const lossy = localClient();
    let lost = 0;
    lossy.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const input = args.input as { TableName?: string };
        if (context.commandName === 'PutItemCommand' && input.TableName === tables.accountingInvoices && lost === 0) {
          lost += 1;
          throw Object.assign(new Error('socket hang up (simulated lost response)'), { name: 'TimeoutError', $metadata: {} });
        }
        return result;
      },
      { step: 'deserialize', name: 'loseFirstInvoiceResponse' },
    );
    const { invoicing } = handlers(lossy);
    const order = newOrder();
    const body = JSON.stringify({
      specversion: '1.0',
      id: `order-placed-${order.orderId}`,
      source: 'urn:example:orders',
      type: 'com.example.orders.OrderPlaced',
      subject: order.orderId,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data: order,
    });

    // WHEN
    await deliver(invoicing.handler, body);

    // THEN the SDK's retry found the invoice its lost call had created, and the step took it as created
    expect(lost).toBe(1);
    expect(outcomesOf(invoicing.lines)).toEqual(['processed']);
    const invoices = (await scan(tables.accountingInvoices)).filter((invoice) => invoice.orderId === order.orderId);
    expect(invoices).toHaveLength(1);
    expect(await item(tables.mail, `INVOICE#${invoices[0]?.invoiceId as string}`)).toMatchObject({ sent: 1 });
  });
});
