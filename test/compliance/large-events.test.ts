/**
 * A flow that offloads large events (issue 42, `offloadLargeEvents`): its payload bucket, the producers' and
 * subscribers' grants on it, checked by cdk-nag (AwsSolutions, Serverless and the regulatory packs) and the
 * CloudFormation validator in strict mode, as `cdk synth` in this repository runs them.
 */
import { Annotations, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';
import { assertCompliant, checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

function synthesize(regulatoryPacks: boolean): { result: ComplianceResult; template: Template; strict: unknown } {
  const app = complianceApp({ regulatoryPacks });
  const stack = new Stack(app, 'LargeEventsStack');
  const flow = new IdempotentEventFlow(stack, 'Orders', { offloadLargeEvents: true });
  flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
  flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
  flow.addSubscriber('Shipping', { entry: HANDLER_ENTRY, publishesEvents: true });
  Annotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test stack: nobody is on call for it.');
  const result = checkCompliance(app);
  return { result, strict: app.node.tryGetContext(cxapi.STRICT_CFN_VALIDATE_ERRORS), template: Template.fromJSON(app.synth().getStackByName(stack.stackName).template) };
}

describe('a flow with offloadLargeEvents, a producer, a subscriber and a publishing subscriber (AwsSolutions, Serverless)', () => {
  let result: ComplianceResult;
  let template: Template;
  let strict: unknown;
  beforeAll(() => {
    ({ result, template, strict } = synthesize(false));
  });

  test('the template has the payload bucket', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
  });

  test('has no unanswered findings, and AwsSolutions answered the bucket', () => {
    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    expect(result.acknowledged.some((a) => a.path.includes('PayloadBucket') && a.ruleId === 'AwsSolutions-S1')).toBe(true);
  });

  test('has no CloudFormation validation findings in strict mode', () => {
    expect(strict).toBe(true);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
  });

  test('gives a reason for every acknowledgement, and passes assertCompliant', () => {
    expect(result.acknowledgementsWithoutReason).toEqual([]);
    expect(result.acknowledged.filter((a) => a.reason.trim().length < 20)).toEqual([]);
    expect(() => assertCompliant(result)).not.toThrow();
  });
});

describe('the same flow under the regulatory packs (NIST 800-53 R5, HIPAA, PCI DSS)', () => {
  let result: ComplianceResult;
  beforeAll(() => {
    ({ result } = synthesize(true));
  });

  // The flow's other findings under these packs (alarm actions, backup plans, VPCs, log keys) are the user's to answer
  // (minimal-flow.test.ts has the stack that answers them); here: nothing about the bucket or the S3 grants is left.
  test('leaves no finding on the payload bucket or about S3 unanswered, and every pack answered the bucket', () => {
    const ours = result.unansweredFindings.filter((f) => f.path.includes('PayloadBucket') || /S3|IAM/.test(f.ruleId));
    expect(ours).toEqual([]);
    const onBucket = result.acknowledged.filter((a) => a.path.includes('PayloadBucket'));
    expect(new Set(onBucket.map((a) => a.source))).toEqual(new Set(['AwsSolutions', 'NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321']));
  });
});
