/**
 * The outbox's TTL attribute, for `replay` and `fence replay` (which never send an item past it): `grantOperator` gives
 * `dynamodb:DescribeTimeToLive` and `dynamodb:DescribeTable` (whether a TTL-off table was restored) on the outbox table
 * (its ARN only) beside the read, and the flow's and its subscribers'
 * Operator outputs name the attribute (`outboxTimeToLiveAttribute`), so the operator's CLI need not ask DynamoDB nor
 * guess it. Template assertions pin the grant and the outputs.
 */
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, OutboxTable, Subscriber } from '../../lib';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import * as path from 'node:path';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');

const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };
const OTHER_ACCOUNT = { account: '222222222222', region: 'eu-west-1' };
const OPERATOR_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable'];

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

function flowIn(stack: Stack, props: ConstructorParameters<typeof IdempotentEventFlow>[2] = {}): IdempotentEventFlow {
  const flow = new IdempotentEventFlow(stack, 'Payments', props);
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  return flow;
}

/** The value of the output whose id starts with `prefix`, its tokens resolved, as text (what JSON it will hold). */
function outputValue(stack: Stack, prefix: string): string {
  const entries = Object.entries(Template.fromStack(stack).findOutputs('*')).filter(([id]) => id.startsWith(prefix));
  expect(entries).toHaveLength(1);
  return JSON.stringify(entries[0]![1].Value);
}

describe('grantOperator grants DescribeTimeToLive and DescribeTable on the outbox table', () => {
  test("a role of the flow's account: GetItem, Scan, DescribeTimeToLive and DescribeTable, on the outbox table's ARN only", () => {
    const stack = new Stack(app(), 'Payments', { env: FLOW_ENV });
    const flow = flowIn(stack);
    const oncall = new iam.Role(stack, 'OnCall', { assumedBy: new iam.AccountRootPrincipal() });
    flow.grantOperator(oncall);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: stack.getLogicalId(oncall.node.defaultChild as iam.CfnRole) }],
      PolicyDocument: {
        Statement: [
          {
            Sid: 'IdempotentEventFlowGrantOperator',
            Effect: 'Allow',
            Action: OPERATOR_ACTIONS,
            Resource: { 'Fn::GetAtt': [stack.getLogicalId(flow.outboxTable.table.node.defaultChild as dynamodb.CfnTable), 'Arn'] },
          },
        ],
      },
    });
  });

  test("a principal of another account: the role it assumes holds the same four actions on the outbox table", () => {
    const stack = new Stack(app(), 'Payments', { env: FLOW_ENV });
    const flow = flowIn(stack);
    flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall'));
    const roleId = stack.getLogicalId(flow.crossAccountOperatorRole('222222222222')!.node.defaultChild as iam.CfnRole);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleId }],
      PolicyDocument: { Statement: [{ Sid: 'IdempotentEventFlowGrantOperator', Action: OPERATOR_ACTIONS, Resource: Match.objectLike({ 'Fn::GetAtt': Match.anyValue() }) }] },
    });
  });
});

describe("the Operator outputs name the outbox's TTL attribute", () => {
  test("the flow's: expiresAt on its own table, the user's attribute on an existing one", () => {
    const own = new Stack(app(), 'Payments', { env: FLOW_ENV });
    flowIn(own);
    expect(outputValue(own, 'PaymentsOperator')).toContain('\\"outboxTimeToLiveAttribute\\":\\"expiresAt\\"');

    const existing = new Stack(app(), 'Existing', { env: FLOW_ENV });
    const table = new dynamodb.TableV2(existing, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      dynamoStream: dynamodb.StreamViewType.NEW_IMAGE,
      timeToLiveAttribute: 'ttl',
    });
    flowIn(existing, { outboxTable: OutboxTable.fromTableAttributes(existing, 'Outbox', { table, partitionKeyName: 'pk', sortKeyName: 'sk', timeToLiveAttributeName: 'ttl' }) });
    expect(outputValue(existing, 'PaymentsOperator')).toContain('\\"outboxTimeToLiveAttribute\\":\\"ttl\\"');
  });

  test('a subscriber of the same account and one of another account (whose output names no outbox table) both name it', () => {
    const a = app();
    const payments = new Stack(a, 'Payments', { env: FLOW_ENV });
    const flow = flowIn(payments);
    new Subscriber(payments, 'Billing', { flow, entry: HANDLER_ENTRY });
    const ledgerStack = new Stack(a, 'Ledger', { env: OTHER_ACCOUNT });
    new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY });
    expect(outputValue(payments, 'BillingOperator')).toContain('\\"outboxTimeToLiveAttribute\\":\\"expiresAt\\"');
    const ledger = outputValue(ledgerStack, 'LedgerOperator');
    expect(ledger).not.toContain('outboxTable\\"');
    expect(ledger).toContain('\\"outboxTimeToLiveAttribute\\":\\"expiresAt\\"');
  });

  test("an ordered subscriber's names its relay outbox's attribute", () => {
    const stack = new Stack(app(), 'Fulfilment', { env: FLOW_ENV });
    const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: new OutboxTable(stack, 'Outbox') });
    CdkAnnotations.of(relay).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    new OrderedSubscriber(stack, 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER });
    expect(outputValue(stack, 'ShippingOperator')).toContain('\\"outboxTimeToLiveAttribute\\":\\"expiresAt\\"');
  });
});
