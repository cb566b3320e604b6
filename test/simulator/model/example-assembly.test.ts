import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { FlowModel, LocalNames, ModelledResource } from '../../../simulator/model/flow-model';
import { resolveEnvironment } from '../../../simulator/model/intrinsics';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { SynthesisError, synthesize } from '../../../simulator/model/synthesize';
import { exampleAssembly } from '../../support/example-assembly';
import { granteeOf } from '../../../simulator/iam/grant-hints';
import { BLOCKED_MESSAGES_INDEX, OUTBOX_RELAY_SETTINGS, OUTBOX_TABLE_SETTINGS } from '../support/example-models';

// The example app of this repository (cdk.json), synthesized once per test run (test/support/example-assembly.ts).
const PROJECT = path.resolve(__dirname, '../../..');
const STACK = 'IdempotentEventFlowExample';
/** The loyalty team's stack, in a second account (example/loyalty-example-stack.ts). */
const LOYALTY = 'IdempotentEventFlowExampleLoyalty';
const SUBSCRIBERS = ['Billing', 'Invoicing', 'Notifications', 'Shipping', 'CustomerStats'] as const;

let model: FlowModel;

beforeAll(async () => {
  model = readAssembly(await exampleAssembly());
});

/** The one resource of `list` with this construct path (relative to the stack). */
function at<T extends ModelledResource>(list: readonly T[], constructPath: string): T {
  const found = list.filter((resource) => resource.constructPath === `${STACK}/${constructPath}`);
  expect(found, constructPath).toHaveLength(1);
  return found[0];
}

const keyAt = (list: readonly ModelledResource[], constructPath: string): string => at(list, constructPath).key;

/** The one resource of `list` with this construct path in the loyalty stack. */
function atLoyalty<T extends ModelledResource>(list: readonly T[], constructPath: string): T {
  const found = list.filter((resource) => resource.constructPath === `${LOYALTY}/${constructPath}`);
  expect(found, constructPath).toHaveLength(1);
  return found[0];
}

/** The resources of `list` in the orders stack. */
const inOrders = <T extends ModelledResource>(list: readonly T[]): T[] => list.filter((resource) => resource.stackName === STACK);

describe('readAssembly of the example app', () => {
  it("reads the orders stack and the loyalty team's (a second account), and finds nothing it cannot simulate", () => {
    expect(model.stackNames).toEqual([STACK, LOYALTY]);
    expect(model.notSimulated).toEqual([]);
  });

  it('reads 14 tables in the orders stack (2 in the loyalty stack): the outbox with its NEW_IMAGE stream and TTL, the inboxes with the BlockedMessages index', () => {
    // 6 business tables of the standard flow, the fulfilment and tracking tables, the outbox, 4 inboxes and OrderTracking's
    expect(inOrders(model.tables)).toHaveLength(14);
    // the loyalty account's: its points table and Loyalty's inbox
    expect(model.tables.filter((table) => table.stackName === LOYALTY).map((table) => table.constructPath).sort()).toEqual([
      `${LOYALTY}/Loyalty/InboxTable/Resource/Resource`,
      `${LOYALTY}/PointsTable/Resource`,
    ]);
    expect(at(model.tables, 'Orders/OutboxTable/Resource/Resource')).toEqual({
      key: expect.stringMatching(new RegExp(`^${STACK}/OrdersOutboxTable`)),
      stackName: STACK,
      logicalId: expect.stringMatching(/^OrdersOutboxTable/),
      constructPath: `${STACK}/Orders/OutboxTable/Resource/Resource`,
      ...OUTBOX_TABLE_SETTINGS,
    });
    for (const subscriber of ['Billing', 'Invoicing', 'Notifications', 'Shipping']) {
      expect(at(model.tables, `Orders/${subscriber}/InboxTable/Resource/Resource`)).toMatchObject({
        keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        globalSecondaryIndexes: [BLOCKED_MESSAGES_INDEX],
        timeToLiveAttribute: 'expiresAt',
      });
    }
    expect(model.tables.filter((table) => table.streamViewType !== undefined)).toHaveLength(1);
  });

  it('reads the relay: filter pattern, input template, batch size 10, 10 retries and its dead-letter queue', () => {
    expect(model.relays.filter((relay) => relay.targetTopic !== undefined)).toEqual([
      {
        key: expect.stringMatching(new RegExp(`^${STACK}/OrdersRelay`)),
        stackName: STACK,
        logicalId: expect.stringMatching(/^OrdersRelay/),
        constructPath: `${STACK}/Orders/Relay/Resource`,
        sourceTable: keyAt(model.tables, 'Orders/OutboxTable/Resource/Resource'),
        targetTopic: keyAt(model.topics, 'Orders/EventTopic/Resource/Resource'),
        deadLetterQueue: keyAt(model.queues, 'Orders/Relay/DeadLetterQueue/Resource'),
        ...OUTBOX_RELAY_SETTINGS,
      },
    ]);
  });

  it('reads the ordered relay: a pipe from the same outbox stream to the SQS FIFO relay queue, the aggregate as the message group, the event id as the deduplication id, one record at a time', () => {
    expect(at(model.relays, 'OrderedRelay/Pipe')).toMatchObject({
      sourceTable: keyAt(model.tables, 'Orders/OutboxTable/Resource/Resource'),
      targetQueue: {
        queue: keyAt(model.queues, 'OrderedRelay/RelayQueue/Resource/Resource'),
        messageGroupId: '$.dynamodb.NewImage.iefAggregateId.S',
        messageDeduplicationId: '$.dynamodb.NewImage.iefEventId.S',
      },
      batchSize: 1,
      deadLetterQueue: keyAt(model.queues, 'OrderedRelay/PipeDeadLetterQueue/Resource'),
      filterPatterns: [JSON.stringify({ eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { iefRecordType: { S: ['OrderedOutboxHead.v1'] } } } })],
    });
    expect(at(model.queues, 'OrderedRelay/RelayQueue/Resource/Resource')).toMatchObject({ fifo: true, redrive: { deadLetterQueue: keyAt(model.queues, 'OrderedRelay/RelayQueue/DeadLetterQueue/Resource'), maxReceiveCount: 5 } });
  });

  it('reads the event topic, the ordered SNS FIFO topic (and the alarm topic, which has no subscription)', () => {
    expect(at(model.topics, 'Orders/EventTopic/Resource/Resource')).toMatchObject({ topicName: `${STACK}-Orders-EventTopic-F6AA008B`, fifo: false });
    expect(at(model.topics, 'OrderedRelay/Topic/Resource')).toMatchObject({ fifo: true });
    expect(inOrders(model.topics).map((topic) => topic.constructPath)).toEqual([`${STACK}/OpsAlarms/Resource`, `${STACK}/Orders/EventTopic/Resource/Resource`, `${STACK}/OrderedRelay/Topic/Resource`]);
    // the loyalty account has its own alarm topic (alarm actions can not cross accounts), and no event topic
    expect(model.topics.filter((topic) => topic.stackName === LOYALTY).map((topic) => topic.constructPath)).toEqual([`${LOYALTY}/OpsAlarms/Resource`]);
  });

  it("reads OrderTracking's FIFO queue, subscribed to the ordered topic with raw delivery, its FIFO dead-letter queue, and its consumer", () => {
    const queue = keyAt(model.queues, 'OrderTracking/Queue/Resource/Resource');
    const deadLetterQueue = keyAt(model.queues, 'OrderTracking/Queue/DeadLetterQueue/Resource');
    expect(at(model.subscriptions, 'OrderTracking/Subscription/Resource')).toMatchObject({ topic: keyAt(model.topics, 'OrderedRelay/Topic/Resource'), queue, rawMessageDelivery: true, deadLetterQueue });
    expect(at(model.queues, 'OrderTracking/Queue/Resource/Resource')).toMatchObject({ fifo: true, redrive: { deadLetterQueue, maxReceiveCount: 5 } });
    expect(at(model.queues, 'OrderTracking/Queue/DeadLetterQueue/Resource')).toMatchObject({ fifo: true });
    expect(model.eventSourceMappings.find((mapping) => mapping.queue === queue)).toMatchObject({ function: keyAt(model.functions, 'OrderTracking/Consumer/Resource/Resource'), reportBatchItemFailures: true });
  });

  it('reads 5 raw-delivery subscriptions with MessageBody filter policies and their dead-letter queues (and the ordered one)', () => {
    expect(inOrders(model.subscriptions)).toHaveLength(6);
    const eventTopic = keyAt(model.topics, 'Orders/EventTopic/Resource/Resource');
    const filterPolicies: Record<(typeof SUBSCRIBERS)[number], Record<string, unknown>> = {
      Billing: { type: ['com.example.orders.OrderPlaced'] },
      Invoicing: { type: ['com.example.orders.OrderPlaced'] },
      Notifications: { type: ['com.example.orders.OrderPlaced'] },
      Shipping: { type: ['com.example.orders.OrderPlaced'] },
      CustomerStats: { type: ['com.example.billing.OrderBilled'] },
    };
    for (const subscriber of SUBSCRIBERS) {
      const subscription = at(model.subscriptions, `Orders/${subscriber}/Subscription/Resource`);
      expect(subscription).toEqual({
        key: subscription.key,
        stackName: STACK,
        logicalId: subscription.logicalId,
        constructPath: `${STACK}/Orders/${subscriber}/Subscription/Resource`,
        topic: eventTopic,
        queue: keyAt(model.queues, `Orders/${subscriber}/Queue/Resource/Resource`),
        rawMessageDelivery: true,
        filterPolicy: filterPolicies[subscriber],
        filterPolicyScope: 'MessageBody',
        deadLetterQueue: keyAt(model.queues, `Orders/${subscriber}/SubscriptionDeadLetterQueue/Resource`),
      });
    }
  });

  it("reads Loyalty's subscription in the loyalty account's stack: to the orders account's event topic, its own queue, OrderBilled only, with a subscription dead-letter queue (same Region)", () => {
    const subscription = atLoyalty(model.subscriptions, 'Loyalty/Subscription/Resource');
    expect(subscription).toEqual({
      key: subscription.key,
      stackName: LOYALTY,
      logicalId: subscription.logicalId,
      constructPath: `${LOYALTY}/Loyalty/Subscription/Resource`,
      topic: keyAt(model.topics, 'Orders/EventTopic/Resource/Resource'),
      queue: atLoyalty(model.queues, 'Loyalty/Queue/Resource/Resource').key,
      rawMessageDelivery: true,
      filterPolicy: { type: ['com.example.billing.OrderBilled'] },
      filterPolicyScope: 'MessageBody',
      deadLetterQueue: atLoyalty(model.queues, 'Loyalty/SubscriptionDeadLetterQueue/Resource').key,
    });
    expect(model.subscriptions).toHaveLength(7);
  });

  it('reads 21 queues in the orders stack (3 in the loyalty stack): subscriber queues (visibility 180 s, 5 receives, then their dead-letter queue) and 14 dead-letter queues', () => {
    // 16 of the standard flow; the ordered relay's queue and its FIFO dead-letter queue, its pipe's dead-letter queue;
    // OrderTracking's FIFO queue and FIFO dead-letter queue
    expect(inOrders(model.queues)).toHaveLength(21);
    // the loyalty account's: Loyalty's queue, its dead-letter queue and its subscription dead-letter queue
    expect(model.queues.filter((queue) => queue.stackName === LOYALTY)).toHaveLength(3);
    for (const subscriber of SUBSCRIBERS) {
      const queue = at(model.queues, `Orders/${subscriber}/Queue/Resource/Resource`);
      expect(queue).toEqual({
        key: queue.key,
        stackName: STACK,
        logicalId: queue.logicalId,
        constructPath: `${STACK}/Orders/${subscriber}/Queue/Resource/Resource`,
        fifo: false,
        visibilityTimeoutSeconds: 180,
        messageRetentionSeconds: 345_600,
        redrive: { deadLetterQueue: keyAt(model.queues, `Orders/${subscriber}/Queue/DeadLetterQueue/Resource`), maxReceiveCount: 5 },
      });
    }
    const deadLetterQueues = inOrders(model.queues).filter((queue) => queue.redrive === undefined);
    expect(deadLetterQueues).toHaveLength(14);
    const fifoDeadLetterQueues = [keyAt(model.queues, 'OrderedRelay/RelayQueue/DeadLetterQueue/Resource'), keyAt(model.queues, 'OrderTracking/Queue/DeadLetterQueue/Resource')];
    // the subscription dead-letter queues keep a message 7 days (inside the deduplication window), the others 14
    const subscriptionDeadLetterQueues = SUBSCRIBERS.map((subscriber) => keyAt(model.queues, `Orders/${subscriber}/SubscriptionDeadLetterQueue/Resource`));
    for (const queue of deadLetterQueues) {
      const retention = subscriptionDeadLetterQueues.includes(queue.key) ? 604_800 : 1_209_600;
      expect(queue, queue.key).toMatchObject({ fifo: fifoDeadLetterQueues.includes(queue.key), visibilityTimeoutSeconds: 30, messageRetentionSeconds: retention });
    }
  });

  it('reads the alarms that watch queues: every dead-letter queue of the flow has one, and so does each subscriber queue', () => {
    const alarms = model.queueAlarms!;
    expect(alarms.get(keyAt(model.queues, 'Orders/Relay/DeadLetterQueue/Resource'))).toEqual([`${STACK}/Orders/RelayAlarms/DeadLetters/Resource`]);
    for (const subscriber of SUBSCRIBERS) {
      // ApproximateNumberOfMessagesVisible (any dead letter) and ApproximateAgeOfOldestMessage (one SQS deletes soon)
      expect(alarms.get(keyAt(model.queues, `Orders/${subscriber}/Queue/DeadLetterQueue/Resource`)), subscriber).toEqual([
        `${STACK}/Orders/${subscriber}/Alarms/DeadLetters/Resource`,
        `${STACK}/Orders/${subscriber}/Alarms/DeadLetterExpiring/Resource`,
      ]);
      expect(alarms.get(keyAt(model.queues, `Orders/${subscriber}/SubscriptionDeadLetterQueue/Resource`)), subscriber).toEqual([
        `${STACK}/Orders/${subscriber}/Alarms/SubscriptionDeadLetters/Resource`,
      ]);
      // ApproximateAgeOfOldestMessage watches the work queue too
      expect(alarms.get(keyAt(model.queues, `Orders/${subscriber}/Queue/Resource/Resource`)), subscriber).toEqual([`${STACK}/Orders/${subscriber}/Alarms/OldestMessageAge/Resource`]);
    }
    // the ordered path's dead-letter queues: the relay queue's, the pipe's, OrderTracking's
    expect(alarms.get(keyAt(model.queues, 'OrderedRelay/RelayQueue/DeadLetterQueue/Resource'))).toEqual([
      `${STACK}/OrderedRelay/RelayDeadLetters/Resource`,
      `${STACK}/OrderedRelay/RelayDeadLetterExpiring/Resource`,
    ]);
    expect(alarms.get(keyAt(model.queues, 'OrderedRelay/PipeDeadLetterQueue/Resource'))).toEqual([`${STACK}/OrderedRelay/PipeDeadLetters/Resource`]);
    // HeldAggregate counts the FIFO dead-letter queue's letters, visible and being read (one entry per metric it reads)
    expect(alarms.get(keyAt(model.queues, 'OrderTracking/Queue/DeadLetterQueue/Resource'))).toEqual([
      `${STACK}/OrderTracking/DeadLetters/Resource`,
      `${STACK}/OrderTracking/HeldAggregate/Resource`,
      `${STACK}/OrderTracking/HeldAggregate/Resource`,
      `${STACK}/OrderTracking/DeadLetterExpiring/Resource`,
    ]);
    // OrderTracking's FIFO work queue: OldestMessageAge (falling behind; HeldAggregate watches the runtime's SequenceGaps, the function's Errors and the dead-letter queue)
    expect(alarms.get(keyAt(model.queues, 'OrderTracking/Queue/Resource/Resource'))).toEqual([`${STACK}/OrderTracking/OldestMessageAge/Resource`]);
    // Loyalty's, in the loyalty account, as any subscriber's
    expect(alarms.get(atLoyalty(model.queues, 'Loyalty/Queue/DeadLetterQueue/Resource').key)).toEqual([
      `${LOYALTY}/Loyalty/Alarms/DeadLetters/Resource`,
      `${LOYALTY}/Loyalty/Alarms/DeadLetterExpiring/Resource`,
    ]);
    expect(alarms.get(atLoyalty(model.queues, 'Loyalty/SubscriptionDeadLetterQueue/Resource').key)).toEqual([`${LOYALTY}/Loyalty/Alarms/SubscriptionDeadLetters/Resource`]);
    expect(alarms.get(atLoyalty(model.queues, 'Loyalty/Queue/Resource/Resource').key)).toEqual([`${LOYALTY}/Loyalty/Alarms/OldestMessageAge/Resource`]);
    // and nothing else: no other queue is watched
    expect(alarms.size).toBe(1 + SUBSCRIBERS.length * 3 + 3 + 1 + 3);
  });

  it('reads 7 event source mappings in the orders stack (1 in the loyalty stack): batch size 10, ReportBatchItemFailures, from each subscriber queue to its function (and the ordered relay queue to the fan-out function)', () => {
    expect(inOrders(model.eventSourceMappings)).toHaveLength(7);
    expect(model.eventSourceMappings.filter((mapping) => mapping.stackName === LOYALTY)).toEqual([
      expect.objectContaining({ queue: atLoyalty(model.queues, 'Loyalty/Queue/Resource/Resource').key, function: atLoyalty(model.functions, 'Loyalty/Function/Resource/Resource').key, batchSize: 10, reportBatchItemFailures: true }),
    ]);
    expect(model.eventSourceMappings.find((mapping) => mapping.queue === keyAt(model.queues, 'OrderedRelay/RelayQueue/Resource/Resource'))).toMatchObject({
      function: keyAt(model.functions, 'OrderedRelay/FanOut/Resource/Resource'),
      batchSize: 10,
      reportBatchItemFailures: true,
    });
    for (const subscriber of SUBSCRIBERS) {
      const queue = keyAt(model.queues, `Orders/${subscriber}/Queue/Resource/Resource`);
      const mapping = model.eventSourceMappings.find((candidate) => candidate.queue === queue);
      expect(mapping, subscriber).toEqual({
        key: mapping?.key,
        stackName: STACK,
        logicalId: mapping?.logicalId,
        constructPath: mapping?.constructPath,
        queue,
        function: keyAt(model.functions, `Orders/${subscriber}/Function/Resource/Resource`),
        batchSize: 10,
        reportBatchItemFailures: true,
        enabled: true,
      });
    }
  });

  it('reads 9 Node.js functions in the orders stack (1 in the loyalty stack) whose asset directories in the assembly hold index.js', () => {
    // 2 producers (PlaceOrder, Fulfilment), 5 subscribers', the ordered relay's fan-out, OrderTracking's
    expect(inOrders(model.functions)).toHaveLength(9);
    // and Loyalty's, in the loyalty account
    expect(model.functions.filter((fn) => fn.stackName === LOYALTY).map((fn) => fn.constructPath)).toEqual([`${LOYALTY}/Loyalty/Function/Resource/Resource`]);
    for (const fn of model.functions) {
      expect(fn).toMatchObject({ handler: 'index.handler', runtime: 'nodejs24.x', timeoutSeconds: 30, memorySizeMb: 256 });
      expect(path.dirname(fn.assetDirectory)).toBe(model.assemblyDirectory);
      expect(fs.existsSync(path.join(fn.assetDirectory, 'index.js')), fn.assetDirectory).toBe(true);
    }
    expect(model.functions.map((fn) => fn.constructPath)).toContain(`${STACK}/Orders/PlaceOrder/Resource/Resource`);
  });

  it("resolves the Billing consumer's environment with the local names", () => {
    const names: LocalNames = {
      ref: (key) => `ref:${key}`,
      getAtt: (key, attribute) => `getAtt:${key}.${attribute}`,
      region: 'us-east-1',
      accountId: '000000000000',
    };
    const billing = at(model.functions, 'Orders/Billing/Function/Resource/Resource');
    expect(resolveEnvironment(billing, names)).toEqual({
      LEDGER_TABLE_NAME: `ref:${keyAt(model.tables, 'LedgerTable/Resource')}`,
      IEF_SUBSCRIBER_NAME: 'Billing',
      IEF_PROCESSING_MODE: 'transactional',
      IEF_INBOX_TABLE_NAME: `ref:${keyAt(model.tables, 'Orders/Billing/InboxTable/Resource/Resource')}`,
      IEF_DEDUPLICATION_WINDOW_SECONDS: '2592000',
      IEF_DEAD_LETTER_QUEUE_URL: `ref:${keyAt(model.queues, 'Orders/Billing/Queue/DeadLetterQueue/Resource')}`,
      IEF_OUTBOX_TABLE_NAME: `ref:${keyAt(model.tables, 'Orders/OutboxTable/Resource/Resource')}`,
      IEF_OUTBOX_PARTITION_KEY_NAME: 'pk',
      IEF_OUTBOX_SORT_KEY_NAME: 'sk',
      IEF_OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME: 'expiresAt',
      IEF_OUTBOX_EVENT_RETENTION_SECONDS: '604800',
      IEF_EVENT_SOURCE: 'urn:example:orders',
      // the relay's batches of 10 fit one 262,144-byte PublishBatch
      IEF_MAX_EVENT_BYTES: '26214',
      // the flow offloads large events: Billing reads them and, publishing OrderBilled, writes them
      IEF_PAYLOAD_BUCKET_NAME: expect.stringMatching(/^ref:.*OrdersPayloadBucket/),
      IEF_PAYLOAD_KEY_PREFIX: 'event-data/',
    });
  });
});

describe('synthesize', () => {
  it('fails with the exit code, the command and the last lines of the output', async () => {
    const failing = synthesize({
      cwd: PROJECT,
      app: `node -e "console.error('cannot build the app: missing prop'); process.exit(3)"`,
      outputDirectory: path.join(inject('testRunDirectory'), 'failed.out'),
      context: { 'ief:probe': 'yes' },
    });
    await expect(failing).rejects.toThrow(SynthesisError);
    await expect(failing).rejects.toThrow(/^cdk synth failed \(exit code [1-9]\d*\) in .*synth --app .*--output .*failed\.out.* --context ief:probe=yes\n[\s\S]*cannot build the app: missing prop/);
  });
});

describe('the example app, as the IAM report names it', () => {
  it("names each Subscriber's function by the subscriber's consumerFunction, found from the construct paths", () => {
    const resources = Object.values(model.access?.resources ?? {});
    expect(granteeOf(`${STACK}/Orders/Billing/Function`, resources)).toEqual({ expression: 'billing.consumerFunction', note: `billing: the Subscriber ${STACK}/Orders/Billing` });
    expect(granteeOf(`${STACK}/Orders/PlaceOrder`, resources)).toEqual({ expression: 'placeOrder' });
  });
});
