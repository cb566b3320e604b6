/**
 * Review r41 of issue 41 (branch s6-r41): findings in the constructs' cross-Region and cross-account templates,
 * written as failing tests. Each says what it expects, which AWS fact it rests on, and its severity. The simulator's
 * side of the same findings: test/simulator/run/cross-account-review.int.test.ts.
 */
import * as path from 'node:path';
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, Subscriber } from '../../lib';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { OutboxTable } from '../../lib/outbox';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');

/** eu-south-1 (Milan) is an opt-in Region; eu-central-1 (Frankfurt) is enabled by default. */
const OPT_IN_FLOW = { account: '111111111111', region: 'eu-south-1' };
const DEFAULT_REGION_SUBSCRIBER = { account: '111111111111', region: 'eu-central-1' };

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Principal?: { Service?: string | string[] };
}

/** The service principals of the Allow statements of `stack`'s queue policies that let anyone `sqs:SendMessage`. */
function sendMessagePrincipals(stack: Stack): string[] {
  return Object.values(Template.fromStack(stack).findResources('AWS::SQS::QueuePolicy'))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[])
    .filter((statement) => statement.Effect === 'Allow' && [statement.Action].flat().includes('sqs:SendMessage'))
    .flatMap((statement) => [statement.Principal?.Service ?? []].flat());
}

describe('review r41, issue 41: the constructs', () => {
  /**
   * HIGH. "When one of the Regions is an opt-in Region, you must specify a different Amazon SNS service principal in
   * the subscribed resource's policy ... When you use Amazon SNS to deliver messages from opt-in Regions to Regions
   * that are enabled by default, you must alter the resource policy created for the queue. Replace the principal
   * sns.amazonaws.com with sns.<opt-in-region>.amazonaws.com" (SNS developer guide, "Sending Amazon SNS messages to an
   * Amazon SQS queue or AWS Lambda function in a different Region",
   * https://docs.aws.amazon.com/sns/latest/dg/sns-cross-region-delivery.html; aws-cdk issue #32526: with the global
   * principal the messages are silently dropped). lib/consumer/private/subscription.ts always writes
   * `sns.amazonaws.com`: a subscriber in eu-central-1 of a flow in eu-south-1 synthesizes, deploys, and receives
   * nothing; with no subscription dead-letter queue across Regions, only the topic's DeliveryFailed alarm tells.
   * Either the regional principal or a synth-time refusal naming both Regions would be right.
   */
  test('R41-5: a subscriber in a default Region of a flow in an opt-in Region lets sns.<opt-in Region>.amazonaws.com send (or synth refuses)', () => {
    const a = app();
    const payments = new Stack(a, 'Payments', { env: OPT_IN_FLOW });
    const flow = new IdempotentEventFlow(payments, 'Payments', {});
    CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    const reportsStack = new Stack(a, 'Reports', { env: DEFAULT_REGION_SUBSCRIBER });
    let refused: unknown;
    try {
      new Subscriber(reportsStack, 'Reports', { flow, entry: HANDLER_ENTRY });
    } catch (error) {
      refused = error;
    }
    if (refused !== undefined) {
      expect(String(refused)).toMatch(/opt-in/);
      return;
    }
    expect(sendMessagePrincipals(reportsStack)).toEqual(['sns.eu-south-1.amazonaws.com']);
  });

  /** HIGH. The same on the ordered path (SNS FIFO to SQS FIFO), which subscribes through the same function. */
  test('R41-6: an ordered subscriber in a default Region of a relay in an opt-in Region lets sns.<opt-in Region>.amazonaws.com send (or synth refuses)', () => {
    const a = app();
    const fulfilment = new Stack(a, 'Fulfilment', { env: OPT_IN_FLOW });
    const relay = new OrderedRelay(fulfilment, 'Ordered', { outboxTable: new OutboxTable(fulfilment, 'Outbox') });
    const trackingStack = new Stack(a, 'Tracking', { env: DEFAULT_REGION_SUBSCRIBER });
    let refused: unknown;
    try {
      new OrderedSubscriber(trackingStack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
    } catch (error) {
      refused = error;
    }
    if (refused !== undefined) {
      expect(String(refused)).toMatch(/opt-in/);
      return;
    }
    expect(sendMessagePrincipals(trackingStack)).toEqual(['sns.eu-south-1.amazonaws.com']);
  });

  /**
   * LOW. Issue 41: "Refuse at synth what cannot deploy (naming both environments and the prop), e.g. an
   * environment-agnostic stack on either side." Two stacks with accounts but no Region (`env: { account }`) in
   * different accounts are accepted (lib/private/environments.ts takes a part unknown on both sides to be the same):
   * the subscription's TopicArn is `arn:...:sns:${AWS::Region}:111111111111:...` resolved in the subscriber's stack, and
   * the topic grant's sns:Endpoint `arn:...:sqs:${AWS::Region}:222222222222:...` resolved in the flow's stack. Each
   * takes the Region its own account's deployment runs in (two accounts, two CLI profiles or pipeline stages): when
   * they differ, the subscription names a topic that does not exist there and the grant a queue that does not exist.
   * Across accounts nothing makes "unknown on both sides" the same Region.
   */
  test('R41-7: a cross-account subscriber whose Region is unknown on both sides is refused at synth, naming the Region', () => {
    const a = app();
    const payments = new Stack(a, 'Payments', { env: { account: '111111111111' } });
    const flow = new IdempotentEventFlow(payments, 'Payments', {});
    CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    const ledgerStack = new Stack(a, 'Ledger', { env: { account: '222222222222' } });
    expect(() => new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY })).toThrow(/region/i);
  });
});
