/**
 * Review r41 of issue 41 (R41-5): a subscriber in a Region enabled by default of a flow in an opt-in Region lets
 * `sns.<opt-in Region>.amazonaws.com` use its own queue key as well as send to its queue (SNS developer guide,
 * sns-cross-region-delivery.html: the subscribed resource's policy names the Region-specific principal); within one
 * Region, and between Regions enabled by default, the principal stays `sns.amazonaws.com`.
 */
import { Annotations as CdkAnnotations, App, Aws, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, Subscriber } from '../../lib';
import { snsDeliveryPrincipal } from '../../lib/private/sns-delivery-principal';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

interface Statement {
  Effect: string;
  Action: string | string[];
  Principal?: { Service?: string | string[] };
}

/** The service principals of the key policies' Allow statements of `stack` that let anyone `kms:Decrypt`. */
function keyPrincipals(stack: Stack): string[] {
  return Object.values(Template.fromStack(stack).findResources('AWS::KMS::Key'))
    .flatMap((key) => key.Properties.KeyPolicy.Statement as Statement[])
    .filter((statement) => statement.Effect === 'Allow' && [statement.Action].flat().includes('kms:Decrypt'))
    .flatMap((statement) => [statement.Principal?.Service ?? []].flat());
}

describe('the SNS principal of a subscriber of a flow in an opt-in Region', () => {
  test("the subscriber's own queue key names sns.eu-south-1.amazonaws.com for a flow in eu-south-1", () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const payments = new Stack(app, 'Payments', { env: { account: '111111111111', region: 'eu-south-1' } });
    const flow = new IdempotentEventFlow(payments, 'Payments', {});
    CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    const reports = new Stack(app, 'Reports', { env: { account: '111111111111', region: 'eu-central-1' } });
    new Subscriber(reports, 'Reports', { flow, entry: HANDLER_ENTRY });

    expect(keyPrincipals(reports)).toEqual(['sns.eu-south-1.amazonaws.com']);
  });

  test('sns.amazonaws.com within one Region, between Regions enabled by default, and for a Region known only at deploy', () => {
    expect(snsDeliveryPrincipal('eu-south-1', 'eu-central-1')).toBe('sns.eu-south-1.amazonaws.com');
    expect(snsDeliveryPrincipal('eu-south-1', 'eu-south-1')).toBe('sns.amazonaws.com');
    expect(snsDeliveryPrincipal('eu-west-1', 'eu-central-1')).toBe('sns.amazonaws.com');
    expect(snsDeliveryPrincipal(undefined, 'eu-central-1')).toBe('sns.amazonaws.com');
    expect(snsDeliveryPrincipal(Aws.REGION, 'eu-central-1')).toBe('sns.amazonaws.com');
  });
});
