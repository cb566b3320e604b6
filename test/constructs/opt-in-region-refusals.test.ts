/**
 * Issue 41, opt-in Regions. SNS does not forward messages across Regions from an opt-in Region to another opt-in Region
 * (SNS developer guide, "Prerequisites for integrating Amazon SNS with Lambda functions across regions",
 * lambda-prereq.html: "cross-region forwarding of Amazon SNS messages from opt-in regions to other opt-in regions is
 * not supported"), and it documents no service principal for a delivery from a Region enabled by default into an
 * opt-in Region (sns-cross-region-delivery.html: "When one of the Regions is an opt-in Region, you must specify a
 * different Amazon SNS service principal", with the opt-in-to-default case only). A wrong principal makes SNS discard
 * every delivery (a client-side error: not retried, and no dead-letter queue across Regions). So a subscriber whose
 * queue is in an opt-in Region other than its topic's is refused at synth, naming both environments and the prop, on
 * the standard and the ordered path. A subscriber in a Region enabled by default of a flow in an opt-in Region, and a
 * subscriber in the flow's own opt-in Region, still synthesize.
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

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

/** A flow in `flowRegion` (account 111111111111) and a Subscriber in `subscriberRegion` (account 222222222222). */
function standard(flowRegion: string, subscriberRegion: string): Stack {
  const root = app();
  const payments = new Stack(root, 'Payments', { env: { account: '111111111111', region: flowRegion } });
  const flow = new IdempotentEventFlow(payments, 'Payments', {});
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  const ledger = new Stack(root, 'Ledger', { env: { account: '222222222222', region: subscriberRegion } });
  new Subscriber(ledger, 'Ledger', { flow, entry: HANDLER_ENTRY });
  return ledger;
}

/** An OrderedRelay in `relayRegion` and an OrderedSubscriber in `subscriberRegion`, both of account 111111111111. */
function ordered(relayRegion: string, subscriberRegion: string): Stack {
  const root = app();
  const fulfilment = new Stack(root, 'Fulfilment', { env: { account: '111111111111', region: relayRegion } });
  const relay = new OrderedRelay(fulfilment, 'Ordered', { outboxTable: new OutboxTable(fulfilment, 'Outbox') });
  const shipping = new Stack(root, 'Shipping', { env: { account: '111111111111', region: subscriberRegion } });
  new OrderedSubscriber(shipping, 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER });
  return shipping;
}

describe('subscribers in opt-in Regions', () => {
  test('a subscriber in an opt-in Region of a flow in another opt-in Region is refused, naming both environments', () => {
    expect(() => standard('ap-east-1', 'me-south-1')).toThrow(/aws:\/\/222222222222\/me-south-1.*aws:\/\/111111111111\/ap-east-1.*opt-in Region.*not supported/s);
  });

  test('a subscriber in an opt-in Region of a flow in a Region enabled by default is refused, naming both environments and the prop', () => {
    expect(() => standard('eu-west-1', 'ap-east-1')).toThrow(/aws:\/\/222222222222\/ap-east-1.*aws:\/\/111111111111\/eu-west-1.*opt-in Region.*env\.region/s);
  });

  test('an ordered subscriber in an opt-in Region of a relay in another Region is refused the same way', () => {
    expect(() => ordered('ap-east-1', 'me-south-1')).toThrow(/aws:\/\/111111111111\/me-south-1.*aws:\/\/111111111111\/ap-east-1.*opt-in Region/s);
    expect(() => ordered('eu-west-1', 'me-south-1')).toThrow(/aws:\/\/111111111111\/me-south-1.*aws:\/\/111111111111\/eu-west-1.*opt-in Region/s);
  });

  test("a subscriber in a Region enabled by default of a flow in an opt-in Region synthesizes, SNS allowed as the flow Region's principal", () => {
    const ledger = standard('ap-east-1', 'eu-west-1');
    const policies = Object.values(Template.fromStack(ledger).findResources('AWS::SQS::QueuePolicy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Principal?: { Service?: string } }[]);
    expect(policies.map((statement) => statement.Principal?.Service)).toContain('sns.ap-east-1.amazonaws.com');
  });

  test("a subscriber in the flow's own opt-in Region synthesizes, in another account too", () => {
    expect(() => standard('me-south-1', 'me-south-1')).not.toThrow();
    expect(() => ordered('me-south-1', 'me-south-1')).not.toThrow();
  });
});
