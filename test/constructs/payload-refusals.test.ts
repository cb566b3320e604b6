/**
 * What a flow with `offloadLargeEvents` refuses at synth (issue 42): the parts whose functions the flow cannot give its
 * payload bucket (variables and grants), so that an offloaded event would reach a consumer that cannot fetch it:
 * - ordered relays on the flow's outbox table that are not registered with the flow (registered ones, and their
 *   registered ordered subscribers, are given the bucket);
 * - `subscriberAccounts` (subscribers in other apps, which the flow never sees). Subscribers of this app in another
 *   account or Region are given the bucket (test/constructs/payload-remote-readers.test.ts).
 * Each error names the prop, the part and why. Each refusal is paired with the same layout without `offloadLargeEvents`
 * synthesizing, so the refusal is the payload bucket's and nothing else's.
 */
import * as path from 'node:path';
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, OutboxTable, Subscriber, type IdempotentEventFlowProps } from '../../lib';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');
const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

/** A flow, an ordered relay on its outbox table and one ordered subscriber; `register` registers both with the flow. */
function orderedLayout(props: IdempotentEventFlowProps, register: boolean): Stack {
  const stack = newStack();
  const flow = new IdempotentEventFlow(stack, 'Orders', props);
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: flow.outboxTable });
  if (register) flow.registerOrderedRelay(relay);
  const subscriber = new OrderedSubscriber(stack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
  if (register) flow.registerOrderedSubscriber(subscriber);
  return stack;
}

/** A flow in 111111111111/eu-west-1 and one subscriber of it in `env`. */
function remoteLayout(props: IdempotentEventFlowProps, env: { account: string; region: string }): App {
  const a = app();
  const payments = new Stack(a, 'Payments', { env: FLOW_ENV });
  const flow = new IdempotentEventFlow(payments, 'Payments', props);
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  const other = new Stack(a, 'Ledger', { env });
  new Subscriber(other, 'Ledger', { flow, entry: HANDLER_ENTRY });
  return a;
}

describe('offloadLargeEvents with ordered relays', () => {
  test('an ordered relay on the flow\'s outbox table that is not registered fails at synth, naming the prop, the relay, its subscriber and why', () => {
    const stack = orderedLayout({ offloadLargeEvents: true }, false);
    expect(() => Template.fromStack(stack)).toThrow(
      /offloadLargeEvents is true, but the ordered relay TestStack\/Ordered relays this flow's outbox table to the ordered subscriber Tracking \(TestStack\/Tracking\) without being registered, so its function is not given the payload bucket: an offloaded ordered event would be dead-lettered there/,
    );
    expect(() => Template.fromStack(orderedLayout({}, false))).not.toThrow();
    // registered, the same layout synthesizes (test/constructs/payload-remote-readers.test.ts pins its grants)
    expect(() => Template.fromStack(orderedLayout({ offloadLargeEvents: true }, true))).not.toThrow();
  });

  test('an ordered relay on another outbox table is not this flow\'s concern', () => {
    const stack = newStack();
    new IdempotentEventFlow(stack, 'Orders', { offloadLargeEvents: true });
    const other = new IdempotentEventFlow(stack, 'Other', {});
    const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: other.outboxTable });
    new OrderedSubscriber(stack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::S3::Bucket', 1);
  });
});

describe('offloadLargeEvents with subscribers in another account or Region', () => {
  test('a subscriber of this app in another account or Region synthesizes (its grants: payload-remote-readers.test.ts)', () => {
    for (const env of [{ account: '222222222222', region: 'eu-west-1' }, { account: '111111111111', region: 'eu-central-1' }]) {
      expect(() => remoteLayout({ offloadLargeEvents: true }, env).synth()).not.toThrow();
    }
  });

  test('subscriberAccounts fails, naming both props and why', () => {
    expect(() => new IdempotentEventFlow(newStack(), 'Orders', { offloadLargeEvents: true, subscriberAccounts: ['222222222222'] })).toThrow(
      /IdempotentEventFlow 'Orders': subscriberAccounts cannot be used with offloadLargeEvents yet: the subscribers of 222222222222 are deployed by other apps, which are not given the payload bucket \(its name, s3:GetObject and kms:Decrypt\), so they could not fetch an offloaded event; but subscriberAccounts is \[222222222222\] and offloadLargeEvents is true/,
    );
    expect(() => new IdempotentEventFlow(newStack(), 'Orders', { subscriberAccounts: ['222222222222'] })).not.toThrow();
  });
});

describe('offloadLargeEvents on an existing outbox table without a TTL (review rx15, RX15-4)', () => {
  /** A flow on an existing outbox table, with `timeToLiveAttributeName` or not, and one subscriber. */
  function existingTableLayout(timeToLiveAttributeName: string | undefined, offloadLargeEvents: boolean): Stack {
    const stack = new Stack(app(), 'Payments', { env: FLOW_ENV });
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const table = new dynamodb.Table(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: key,
      ...(timeToLiveAttributeName === undefined ? {} : { timeToLiveAttribute: timeToLiveAttributeName }),
    });
    const outboxTable = OutboxTable.fromTableAttributes(stack, 'Existing', { table, partitionKeyName: 'pk', sortKeyName: 'sk', ...(timeToLiveAttributeName === undefined ? {} : { timeToLiveAttributeName }) });
    const flow = new IdempotentEventFlow(stack, 'Payments', { outboxTable, ...(offloadLargeEvents ? { offloadLargeEvents } : {}) });
    CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'not under test');
    new Subscriber(stack, 'Billing', { flow, entry: HANDLER_ENTRY });
    return stack;
  }

  test('is refused at synth, naming offloadLargeEvents, timeToLiveAttributeName and why; with a TTL attribute, or without offloading, it synthesizes', () => {
    expect(() => Template.fromStack(existingTableLayout(undefined, true))).toThrow(
      /offloadLargeEvents.*timeToLiveAttributeName.*undefined.*eventRetention \(7 days\)/s,
    );
    expect(() => Template.fromStack(existingTableLayout('ttl', true))).not.toThrow();
    expect(() => Template.fromStack(existingTableLayout(undefined, false))).not.toThrow();
  });
});
