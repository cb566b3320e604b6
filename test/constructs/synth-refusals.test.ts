/**
 * Issue 30: configurations that cannot deploy or cannot work fail at synth, naming the construct, the prop, the bound
 * and the value.
 */
import { App, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { ENV } from '../../lambda/contract/environment';
import { IdempotentEventFlow, InboxTable, OutboxRelay, OutboxTable, Subscriber } from '../../lib';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

/** A stack in a Region of an MRSC region set, as a multi-Region strongly consistent table needs. */
function regionalStack(): Stack {
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'TestStack', { env: { account: '111111111111', region: 'us-east-1' } });
}

function mrscTable(stack: Stack, props: Partial<dynamodb.TablePropsV2> = {}): dynamodb.TableV2 {
  return new dynamodb.TableV2(stack, 'Global', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    multiRegionConsistency: dynamodb.MultiRegionConsistency.STRONG,
    replicas: [{ region: 'us-east-2' }, { region: 'us-west-2' }],
    ...props,
  });
}

describe('outbox table', () => {
  test('a TableV2 without a stream is refused (it has a StreamArn attribute, but no stream to relay)', () => {
    const stack = newStack();
    const table = new dynamodb.TableV2(stack, 'Business', { partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING } });
    expect(table.tableStreamArn).toBeDefined();
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' })).toThrow(
      "OutboxTable 'Outbox': table must have a stream with new images (NEW_IMAGE or NEW_AND_OLD_IMAGES), but TestStack/Business has no stream; set dynamoStream (TableV2) or stream (Table)",
    );
  });

  test('a TableV2 with a new-image stream is taken', () => {
    const stack = newStack();
    const table = new dynamodb.TableV2(stack, 'Business', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
      dynamoStream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' })).not.toThrow();
  });

  test('a multi-Region strongly consistent global table is refused: no transactions, no TTL', () => {
    const stack = regionalStack();
    const table = mrscTable(stack, { dynamoStream: dynamodb.StreamViewType.NEW_IMAGE });
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'pk', sortKeyName: 'sk' })).toThrow(
      "OutboxTable 'Outbox': table must not be a multi-Region strongly consistent (MRSC) global table, because MRSC tables support neither " +
        'transactions nor TTL (producers append each event in the transaction of their business writes, and outbox items expire through TTL), ' +
        'but TestStack/Global has multiRegionConsistency STRONG',
    );
  });
});

describe('inbox table', () => {
  test.each([
    ['by name', (stack: Stack, table: dynamodb.TableV2) => InboxTable.fromTableName(stack, 'Inbox', table.tableName)],
    ['by ARN', (stack: Stack, table: dynamodb.TableV2) => InboxTable.fromTableArn(stack, 'Inbox', table.tableArn)],
  ])('a multi-Region strongly consistent global table imported %s is refused', (_how, importInbox) => {
    const stack = regionalStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const inboxTable = importInbox(stack, mrscTable(stack));
    expect(() => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, inboxTable })).toThrow(
      /^Subscriber 'Billing': inboxTable must not be a multi-Region strongly consistent \(MRSC\) global table, because MRSC tables support neither transactions nor TTL \(the runtime records each message in the transaction of the handler's writes, and inbox records expire through TTL\), but TestStack\/Global has multiRegionConsistency STRONG/,
    );
  });

  test('an eventually consistent TableV2 imported as the inbox is taken', () => {
    const stack = regionalStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const table = mrscTable(stack, { multiRegionConsistency: dynamodb.MultiRegionConsistency.EVENTUAL, replicas: [{ region: 'us-east-2' }] });
    expect(() => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, inboxTable: InboxTable.fromTableName(stack, 'Inbox', table.tableName) })).not.toThrow();
  });
});

describe('a FIFO topic', () => {
  test('given to a Subscriber is refused', () => {
    const stack = newStack();
    const topic = new sns.Topic(stack, 'Orders', { fifo: true, topicName: 'orders.fifo' });
    expect(() => new Subscriber(stack, 'Billing', { topic, entry: HANDLER_ENTRY })).toThrow(
      "Subscriber 'Billing': topic must be a standard SNS topic (the outbox relay, an EventBridge Pipe, can not publish to a FIFO topic), but the FIFO topic TestStack/Orders was provided",
    );
  });
});

describe('relay batches fit one SNS PublishBatch', () => {
  /** The relay's BatchSize and the producers' IEF_MAX_EVENT_BYTES, as synthesized. */
  function sizing(stack: Stack, flow: IdempotentEventFlow): { batchSize: number; maxEventBytes: string } {
    const pipe = Object.values(Template.fromStack(stack).findResources('AWS::Pipes::Pipe'))[0];
    return {
      batchSize: pipe.Properties.SourceParameters.DynamoDBStreamParameters.BatchSize as number,
      maxEventBytes: stack.resolve(flow.producerEnvironment[ENV.MAX_EVENT_BYTES]) as string,
    };
  }

  test('by default: batches of 10, events of at most a tenth of 262,144 bytes', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(sizing(stack, flow)).toEqual({ batchSize: 10, maxEventBytes: '26214' });
    expect(flow.relay.maxEventSize.toBytes()).toBe(26_214);
  });

  test('relayBatchSize: 1 lets events of the whole 256 KiB through', () => {
    const stack = newStack();
    expect(sizing(stack, new IdempotentEventFlow(stack, 'Orders', { relayBatchSize: 1 }))).toEqual({ batchSize: 1, maxEventBytes: '262144' });
  });

  test('maxEventSize alone: as many such events per batch as fit, at most 10', () => {
    const stack = newStack();
    expect(sizing(stack, new IdempotentEventFlow(stack, 'Orders', { maxEventSize: Size.kibibytes(100) }))).toEqual({ batchSize: 2, maxEventBytes: '102400' });
    const other = newStack();
    expect(sizing(other, new IdempotentEventFlow(other, 'Orders', { maxEventSize: Size.kibibytes(1) }))).toEqual({ batchSize: 10, maxEventBytes: '1024' });
  });

  test('ten events of 100 KB in one batch are refused, naming both props, the bound and the values', () => {
    const stack = newStack();
    expect(() => new IdempotentEventFlow(stack, 'Orders', { relayBatchSize: 10, maxEventSize: Size.kibibytes(100) })).toThrow(
      "IdempotentEventFlow 'Orders': relayBatchSize x maxEventSize must be at most the topic's MaximumMessageSize (262,144 bytes), which one SNS " +
        'PublishBatch of a full relay batch must fit, but 10 x 102,400 bytes = 1,024,000 bytes was provided; lower one of them',
    );
  });

  test('an event larger than the topic takes is refused', () => {
    const stack = newStack();
    expect(() => new IdempotentEventFlow(stack, 'Orders', { maxEventSize: Size.kibibytes(300) })).toThrow(
      "IdempotentEventFlow 'Orders': maxEventSize must be at most the topic's MaximumMessageSize (262,144 bytes), which one SNS PublishBatch of a full relay batch must fit, but 307,200 bytes was provided",
    );
  });

  test("OutboxRelay reads a larger MaximumMessageSize from a topic of the app and names its own props", () => {
    const stack = newStack();
    const outboxTable = new OutboxTable(stack, 'Outbox');
    const topic = new sns.Topic(stack, 'Topic');
    (topic.node.defaultChild as sns.CfnTopic).maximumMessageSize = 1_048_576;
    const relay = new OutboxRelay(stack, 'Relay', { outboxTable, topic, maxEventSize: Size.kibibytes(256), batchSize: 4 });
    expect(relay.maxEventSize.toBytes()).toBe(262_144);
    expect(stack.resolve(outboxTable.producerEnvironment[ENV.MAX_EVENT_BYTES])).toBe('262144');
    expect(() => new OutboxRelay(stack, 'Second', { outboxTable, topic, maxEventSize: Size.kibibytes(256), batchSize: 5 })).toThrow(
      /^OutboxRelay 'Second': batchSize x maxEventSize must be at most the topic's MaximumMessageSize \(1,048,576 bytes\).* but 5 x 262,144 bytes = 1,310,720 bytes was provided/,
    );
  });

  test('the producers and the publishing subscribers of a flow get the limit', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { relayBatchSize: 5 });
    const producer = flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, publishesEvents: true });
    const template = Template.fromStack(stack);
    for (const fn of [producer.lambdaFunction, billing.consumerFunction.lambdaFunction]) {
      const resource = template.toJSON().Resources[stack.getLogicalId(fn.node.defaultChild as never)];
      expect(resource.Properties.Environment.Variables[ENV.MAX_EVENT_BYTES]).toBe('52428');
    }
  });
});

describe('runtime-contract variables set after construction', () => {
  test('addEnvironment changing an IEF_* variable fails synth, naming the function, the variable and both values', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    billing.consumerFunction.lambdaFunction.addEnvironment(ENV.DEDUPLICATION_WINDOW_SECONDS, '120');
    expect(() => Template.fromStack(stack)).toThrow(
      "ConsumerFunction 'Function': environment variable IEF_DEDUPLICATION_WINDOW_SECONDS must keep the value the construct set (\"2592000\"), " +
        'because it is part of the runtime contract, but it was changed to "120", e.g. with addEnvironment',
    );
  });

  test('addEnvironment adding an IEF_* variable the function does not use fails synth', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const producer = flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    producer.lambdaFunction.addEnvironment(ENV.LEASE_DURATION_SECONDS, '30');
    expect(() => Template.fromStack(stack)).toThrow(
      "ProducerFunction 'PlaceOrder': environment variable IEF_LEASE_DURATION_SECONDS must not be set (it belongs to the runtime contract and this function does not use it), but it was set to \"30\"",
    );
  });

  test('addEnvironment with other variables, or an IEF_* variable at the value the construct set, synthesizes', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    billing.consumerFunction.lambdaFunction.addEnvironment('STAGE', 'prod');
    billing.consumerFunction.lambdaFunction.addEnvironment(ENV.SUBSCRIBER_NAME, 'Billing');
    expect(() => Template.fromStack(stack)).not.toThrow();
  });
});
