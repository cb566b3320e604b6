/**
 * The stack outputs that give the operator CLI what it takes (issue 22, item 9): resolved as CloudFormation would,
 * each is a JSON object naming the flow's and each subscriber's tables and queues.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Duration } from 'aws-cdk-lib';
import { IdempotentEventFlow, ProcessingMode } from '../../lib';
import { parseSubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { resolveValue } from '../../simulator/model/intrinsics';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';
import * as path from 'node:path';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { OutboxTable } from '../../lib/outbox';

/** Every output of the stack, its value resolved with `Ref`/`Fn::GetAtt` as `<logicalId>`/`<logicalId>.<attribute>`. */
function resolvedOutputs(template: Template): Record<string, { description: string; value: Record<string, unknown> }> {
  const names = {
    region: 'eu-west-1',
    accountId: '111111111111',
    ref: (key: string) => `<${key.split('/')[1]}>`,
    getAtt: (key: string, attribute: string) => `<${key.split('/')[1]}.${attribute}>`,
  };
  const outputs = template.toJSON().Outputs as Record<string, { Description: string; Value: unknown }>;
  return Object.fromEntries(
    Object.entries(outputs).map(([id, output]) => [
      id,
      { description: output.Description, value: JSON.parse(resolveValue(output.Value, 'TestStack', names, `output ${id}`)) as Record<string, unknown> },
    ]),
  );
}

describe('operator outputs', () => {
  test("name the flow's outbox, topic, relay and relay dead-letter queue, and each subscriber's inbox and queues", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    const stats = flow.addSubscriber('Stats', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE, subscriberName: 'stats' });
    const template = Template.fromStack(stack);
    const ref = (value: string): string => {
      const resolved = stack.resolve(value) as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
      return resolved.Ref !== undefined ? `<${resolved.Ref}>` : `<${resolved['Fn::GetAtt']![0]}.${resolved['Fn::GetAtt']![1]}>`;
    };
    const values = Object.values(resolvedOutputs(template)).map((output) => output.value);
    expect(values).toEqual([
      {
        outboxTable: ref(flow.outboxTable.table.tableName),
        outboxTimeToLiveAttribute: 'expiresAt',
        topicArn: ref(flow.eventTopic.topicArn),
        relayPipeName: ref(flow.relay.pipeName),
        relayDeadLetterQueueUrl: ref(flow.relay.deadLetterQueue.queueUrl),
      },
      {
        format: 1,
        subscriberName: 'Billing',
        processingMode: 'transactional',
        deduplicationWindowSeconds: 30 * 86_400,
        keepBlockedMessageBody: false,
        outboxTable: ref(flow.outboxTable.table.tableName),
        outboxTimeToLiveAttribute: 'expiresAt',
        inboxTable: ref(billing.inboxTable!.tableName),
        queueUrl: ref(billing.queue.queueUrl),
        deadLetterQueueUrl: ref(billing.deadLetterQueue.queueUrl),
        subscriptionDeadLetterQueueUrl: ref(billing.subscriptionDeadLetterQueue!.queueUrl),
        consumerFunctionName: ref(billing.consumerFunction.lambdaFunction.functionName),
        // the flow's account and Region, which replay --flow-profile proves the profile reaches
        topicArn: ref(flow.eventTopic.topicArn),
      },
      {
        // AGGREGATE has no inbox table and no deduplication window
        format: 1,
        subscriberName: 'stats',
        processingMode: 'aggregate',
        keepBlockedMessageBody: false,
        outboxTable: ref(flow.outboxTable.table.tableName),
        outboxTimeToLiveAttribute: 'expiresAt',
        queueUrl: ref(stats.queue.queueUrl),
        deadLetterQueueUrl: ref(stats.deadLetterQueue.queueUrl),
        subscriptionDeadLetterQueueUrl: ref(stats.subscriptionDeadLetterQueue!.queueUrl),
        consumerFunctionName: ref(stats.consumerFunction.lambdaFunction.functionName),
        topicArn: ref(flow.eventTopic.topicArn),
      },
    ]);
  });

  test("a subscriber's output holds everything the operator commands need (issue 28, finding 8): its window, mode and filter policy, and the CLI reads it", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Invoicing', {
      entry: HANDLER_ENTRY,
      processingMode: ProcessingMode.LEASE,
      deduplicationWindow: Duration.days(26),
      keepBlockedMessageBody: true,
      filterPolicyWithMessageBody: {
        type: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: ['OrderPlaced'] })),
        source: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: ['urn:orders'] })),
      },
    });
    const output = Object.values(resolvedOutputs(Template.fromStack(stack))).find((each) => each.value.subscriberName === 'Invoicing')!.value;

    expect(output).toMatchObject({
      processingMode: 'lease',
      deduplicationWindowSeconds: 26 * 86_400,
      keepBlockedMessageBody: true,
      filterPolicy: { type: ['OrderPlaced'], source: ['urn:orders'] },
      filterPolicyScope: 'MessageBody',
    });
    expect(parseSubscriberDeployment(JSON.stringify(output))).toEqual(output);
  });

  test("say in their description the CLI command a subscriber's values go into", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    const descriptions = Object.values(resolvedOutputs(Template.fromStack(stack))).map((output) => output.description);
    expect(descriptions).toContain(
      'What operators of subscriber Billing need, e.g. for idempotent-event-flow blocked list --table <inboxTable> --subscriber Billing',
    );
  });

  // nu7 finding 11: an aggregate subscriber keeps no inbox, so 'blocked list --table <inboxTable>' was no example for it
  test("an aggregate subscriber's description names a command it can use, not an inbox it does not have", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Invoicing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE });
    const descriptions = Object.values(resolvedOutputs(Template.fromStack(stack))).map((output) => output.description);
    const description = descriptions.find((text) => typeof text === 'string' && text.startsWith('What operators of subscriber Invoicing'));
    expect(description).toBe('What operators of subscriber Invoicing need, e.g. for idempotent-event-flow dlq redrive --subscriber-output <this value>');
  });

  test("an ordered subscriber's output is marked ordered and names its FIFO queues, its inbox (the fences) and the ordered relay's outbox table (the history), and the CLI reads it (issue 33)", () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Outbox');
    const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: outbox });
    const shipping = new OrderedSubscriber(stack, 'Shipping', {
      relay,
      subscriberName: 'shipping',
      entry: path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts'),
      deduplicationWindow: Duration.days(20),
    });
    const template = Template.fromStack(stack);
    const ref = (value: string): string => {
      const resolved = stack.resolve(value) as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
      return resolved.Ref !== undefined ? `<${resolved.Ref}>` : `<${resolved['Fn::GetAtt']![0]}.${resolved['Fn::GetAtt']![1]}>`;
    };
    const outputs = resolvedOutputs(template);
    const [id, output] = Object.entries(outputs).find(([, each]) => each.value.subscriberName === 'shipping')!;
    expect(id).toMatch(/^ShippingOperator/);
    expect(output.value).toEqual({
      format: 1,
      subscriberName: 'shipping',
      processingMode: 'transactional',
      ordered: true,
      deduplicationWindowSeconds: 20 * 86_400,
      outboxTable: ref(outbox.table.tableName),
      outboxTimeToLiveAttribute: 'expiresAt',
      inboxTable: ref(shipping.inboxTable.tableName),
      queueUrl: ref(shipping.queue.queueUrl),
      deadLetterQueueUrl: ref(shipping.deadLetterQueue.queueUrl),
      // one FIFO dead-letter queue for both: the subscription's is the queue's
      subscriptionDeadLetterQueueUrl: ref(shipping.deadLetterQueue.queueUrl),
      consumerFunctionName: ref(shipping.consumerFunction.lambdaFunction.functionName),
      // the ordered relay's FIFO topic: its account and Region are the outbox's
      topicArn: ref(relay.topic.topicArn),
    });
    expect(output.description).toContain('fence show|list|skip|redrive|replay');
    // its dead-letter alarm points to the redrive that takes this output
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('Ordered subscriber shipping: .*`idempotent-event-flow dlq redrive --subscriber-output <its Operator output>`.*`fence list`'),
    });
    expect(parseSubscriberDeployment(JSON.stringify(output.value))).toEqual(output.value);
    // the queues it names are the FIFO ones
    for (const queue of [shipping.queue, shipping.deadLetterQueue]) {
      const logicalId = (stack.resolve(queue.queueUrl) as { Ref: string }).Ref;
      expect(template.toJSON().Resources[logicalId].Properties.FifoQueue).toBe(true);
    }
  });

  test('an output that says ordered must be transactional, and ordered must be true or false', () => {
    const base = { format: 1, subscriberName: 's', processingMode: 'transactional', queueUrl: 'q', deadLetterQueueUrl: 'd', inboxTable: 'i', deduplicationWindowSeconds: 60 };
    expect(parseSubscriberDeployment(JSON.stringify({ ...base, ordered: true })).ordered).toBe(true);
    expect(() => parseSubscriberDeployment(JSON.stringify({ ...base, ordered: 'yes' }))).toThrow("its field 'ordered' must be true or false");
    expect(() => parseSubscriberDeployment(JSON.stringify({ ...base, processingMode: 'lease', ordered: true }))).toThrow("its field 'processingMode' must be transactional for an ordered subscriber");
  });
});
