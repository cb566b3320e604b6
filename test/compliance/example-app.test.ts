import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, test } from 'vitest';
import { OrdersExampleStack } from '../../example/orders-example-stack';
import type { ProducerFunction } from '../../lib';
import { assertCompliant, checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

// The example app of bin/example-app.ts, synthesized once with both cdk-nag packs and strict CloudFormation validation.
let app: App;
let stack: OrdersExampleStack;
let result: ComplianceResult;
let template: Template;

beforeAll(() => {
  app = complianceApp();
  stack = new OrdersExampleStack(app, 'IdempotentEventFlowExample', {
    description: 'idempotent-event-flow example: orders -> billing (exactly-once ledger) and shipping (filtered)',
  });
  result = checkCompliance(app);
  // synth() is cached: this is the assembly checkCompliance validated.
  template = Template.fromJSON(app.synth().getStackByName(stack.stackName).template);
});

function r(value: unknown): unknown {
  return stack.resolve(value);
}

/** Statements of the default policy attached to the role named `roleName`. */
function roleStatements(roleName: string): Array<{ Action: string | string[]; Resource: unknown }> {
  const policies = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [r(roleName)] } }));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: Array<{ Action: string | string[]; Resource: unknown }> } } }).Properties
    .PolicyDocument.Statement;
}

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

/** Every (action, resource) pair the statements allow, whatever the policy minimization merged. */
function grants(statements: Array<{ Action: string | string[]; Resource: unknown }>): Array<[string, unknown]> {
  return statements.flatMap((s) => asList(s.Action).flatMap((action) => asList(s.Resource).map((resource): [string, unknown] => [action, resource])));
}

describe('example app: compliance', () => {
  test('has no unanswered AwsSolutions or Serverless findings', () => {
    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    // Both packs really ran: each answered findings of its own.
    expect(new Set(result.acknowledged.map((a) => a.source))).toEqual(new Set(['AwsSolutions', 'Serverless']));
  });

  test('has no CloudFormation validation findings in strict mode', () => {
    expect(app.node.tryGetContext(cxapi.STRICT_CFN_VALIDATE_ERRORS)).toBe(true);
    expect(app.node.tryGetContext(cxapi.VALIDATE_AGAINST_DEFAULT_RULES)).toBe(true);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
  });

  test('gives a reason for every acknowledgement', () => {
    expect(result.acknowledgementsWithoutReason).toEqual([]);
    expect(result.acknowledged.filter((a) => a.reason.trim().length < 20)).toEqual([]);
  });

  test('passes assertCompliant', () => {
    expect(() => assertCompliant(result)).not.toThrow();
  });
});

describe('example app: wiring', () => {
  test('delivers to shipping only OrderPlaced events whose data has a shipping country', () => {
    // GIVEN
    const shipping = stack.flow.subscribers.find((s) => s.subscriberName === 'Shipping')!;
    // THEN
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Endpoint: r(shipping.queue.queueArn),
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: {
        type: ['com.example.orders.OrderPlaced'],
        data: { shippingAddress: { country: [{ exists: true }] } },
      },
    });
  });

  test('delivers every event to billing', () => {
    // GIVEN
    const billing = stack.flow.subscribers.find((s) => s.subscriberName === 'Billing')!;
    // THEN
    const subscriptions = Object.values(
      template.findResources('AWS::SNS::Subscription', { Properties: { Endpoint: r(billing.queue.queueArn) } }),
    ) as Array<{ Properties: Record<string, unknown> }>;
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0].Properties.FilterPolicy).toBeUndefined();
  });

  test('lets the billing function UpdateItem the ledger table and nothing else on it', () => {
    // GIVEN
    const billing = stack.flow.subscribers.find((s) => s.subscriberName === 'Billing')!;
    const ledgerArn = r((stack.node.findChild('LedgerTable') as dynamodb.Table).tableArn);
    // THEN
    const allowed = grants(roleStatements(billing.consumerFunction.role.roleName));
    expect(allowed.filter(([, resource]) => JSON.stringify(resource) === JSON.stringify(ledgerArn))).toEqual([['dynamodb:UpdateItem', ledgerArn]]);
    // and UpdateItem on no other resource
    expect(allowed.filter(([action]) => action === 'dynamodb:UpdateItem')).toEqual([['dynamodb:UpdateItem', ledgerArn]]);
  });

  test('gives the shipping function no access to the ledger table', () => {
    // GIVEN
    const shipping = stack.flow.subscribers.find((s) => s.subscriberName === 'Shipping')!;
    const ledger = stack.node.findChild('LedgerTable') as dynamodb.Table;
    // THEN
    const ledgerId = stack.getLogicalId(ledger.node.defaultChild as dynamodb.CfnTable);
    expect(JSON.stringify(roleStatements(shipping.consumerFunction.role.roleName))).not.toContain(ledgerId);
  });

  test('notifies the ops topic from every alarm of the flow', () => {
    // GIVEN
    const ops = stack.node.findChild('OpsAlarms') as sns.Topic;
    // THEN
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: Record<string, unknown> }>;
    expect(alarms).toHaveLength(2 + 4 * 2);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([r(ops.topicArn)]);
      expect(alarm.Properties.OKActions).toEqual([r(ops.topicArn)]);
    }
  });

  test('lets the producer append events and put orders, nothing more on its tables', () => {
    // GIVEN
    const placeOrder = stack.node.findChild('Orders').node.findChild('PlaceOrder') as ProducerFunction;
    const ordersArn = r((stack.node.findChild('OrdersTable') as dynamodb.Table).tableArn);
    // THEN
    const dynamoGrants = grants(roleStatements(placeOrder.role.roleName)).filter(([action]) => action.startsWith('dynamodb:'));
    expect(dynamoGrants).toEqual([
      ['dynamodb:PutItem', r(stack.flow.outboxTable.table.tableArn)],
      ['dynamodb:PutItem', ordersArn],
    ]);
  });
});
