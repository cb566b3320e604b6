/**
 * Issue 41: a flow in one account with a subscriber in a second account, one in another Region, and one of a flow
 * imported with fromFlowAttributes (another pipeline's): every stack passes cdk-nag and the CloudFormation validation.
 * (test/constructs/cross-account-subscriber.test.ts pins the policies.)
 */
import { Annotations, Stack } from 'aws-cdk-lib';
import { beforeAll, expect, test } from 'vitest';
import { IdempotentEventFlow, ProcessingMode, Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';
import { checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

let result: ComplianceResult;
let stackNames: string[];

beforeAll(() => {
  const app = complianceApp();
  const payments = new Stack(app, 'Payments', { env: { account: '111111111111', region: 'eu-west-1' } });
  const flow = new IdempotentEventFlow(payments, 'Payments', { dashboard: true, subscriberAccounts: ['222222222222', '333333333333'] });
  Annotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app: nobody is on call for it.');
  const ledger = new Subscriber(new Stack(app, 'Ledger', { env: { account: '222222222222', region: 'eu-west-1' } }), 'Ledger', { flow, entry: HANDLER_ENTRY });
  const reports = new Subscriber(new Stack(app, 'Reports', { env: { account: '111111111111', region: 'eu-central-1' } }), 'Reports', {
    flow,
    entry: HANDLER_ENTRY,
    processingMode: ProcessingMode.LEASE,
  });
  const auditStack = new Stack(app, 'Audit', { env: { account: '333333333333', region: 'us-east-1' } });
  const imported = IdempotentEventFlow.fromFlowAttributes(auditStack, 'Payments', { topicArn: 'arn:aws:sns:eu-west-1:111111111111:Payments-EventTopic-674D61B3' });
  const audit = new Subscriber(auditStack, 'Audit', { flow: imported, entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE });
  for (const subscriber of [ledger, reports, audit]) {
    Annotations.of(subscriber).acknowledgeWarning('idempotent-event-flow:subscriberNoAlarmActions', 'A test app: nobody is on call for it.');
  }
  result = checkCompliance(app);
  stackNames = app.synth().stacks.map((s) => s.stackName).sort();
});

test('a flow with subscribers in a second account, another Region and of an imported flow passes cdk-nag and the CloudFormation validation', () => {
  expect(stackNames).toEqual(['Audit', 'Ledger', 'Payments', 'Reports']);
  expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
  expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
});
