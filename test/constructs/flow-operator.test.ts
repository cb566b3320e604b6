/**
 * Issue 41: `flow.grantOperator`, the outbox read `replay` needs, to a principal of the flow's account (its own
 * policy) and of another account (a role of the flow's account trusted by exactly that principal). Template assertions
 * pin the trust policy, the role's policy (resource ARNs, no write, no `*` principal) and the output.
 */
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, OutboxTable } from '../../lib';

const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };

function flowStack(): { app: App; stack: Stack; flow: IdempotentEventFlow } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Payments', { env: FLOW_ENV });
  const flow = new IdempotentEventFlow(stack, 'Payments');
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  return { app, stack, flow };
}

const OUTBOX_ARN = { 'Fn::GetAtt': [Match.stringLikeRegexp('^PaymentsOutboxTable'), 'Arn'] };

describe('flow.grantOperator', () => {
  test("a role of the flow's account gets GetItem, Scan, DescribeTimeToLive and DescribeTable on the outbox table in its own policy, and no role is created", () => {
    const { stack, flow } = flowStack();
    const oncall = new iam.Role(stack, 'OnCall', { assumedBy: new iam.AccountRootPrincipal() });
    flow.grantOperator(oncall);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: stack.getLogicalId(oncall.node.defaultChild as iam.CfnRole) }],
      PolicyDocument: { Statement: [{ Sid: 'IdempotentEventFlowGrantOperator', Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable'], Resource: OUTBOX_ARN }] },
    });
    expect(Object.keys(template.findResources('AWS::IAM::Role')).filter((id) => id.includes('CrossAccountOperator'))).toEqual([]);
    expect(flow.crossAccountOperatorRole('111111111111')).toBeUndefined();
  });

  test("a role of another account, by ARN: a role of the flow's account trusted by exactly that role, holding only the outbox read, its ARN in an output", () => {
    const { stack, flow } = flowStack();
    const grant = flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall'));
    const role = flow.crossAccountOperatorRole('222222222222');
    expect(role).toBeDefined();
    expect(grant.principalStatements).toHaveLength(1);
    const template = Template.fromStack(stack);
    const roleId = stack.getLogicalId(role!.node.defaultChild as iam.CfnRole);
    expect(roleId).toMatch(/^PaymentsCrossAccountOperator222222222222/);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: 'arn:aws:iam::222222222222:role/ledger-oncall' } }] },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleId }],
      PolicyDocument: { Statement: [{ Sid: 'IdempotentEventFlowGrantOperator', Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable'], Resource: OUTBOX_ARN }] },
    });
    // nothing else is granted to it: one policy, one statement; and no statement of the stack allows '*'
    expect(Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }))).toHaveLength(1);
    const outputs = Object.entries(template.findOutputs('*')).filter(([id]) => id.startsWith('PaymentsCrossAccountOperator222222222222RoleArn'));
    expect(outputs.map(([, output]) => (output as { Value: unknown }).Value)).toEqual([{ 'Fn::GetAtt': [roleId, 'Arn'] }]);
    const allows = JSON.stringify(template.toJSON()).match(/"Effect":"Allow","Principal":\{"AWS":"\*"\}/g);
    expect(allows).toBeNull();
  });

  test('a second principal of the same account joins the trust policy of the same role; an account principal is its root', () => {
    const { stack, flow } = flowStack();
    flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall'));
    flow.grantOperator(new iam.AccountPrincipal('222222222222'));
    flow.grantOperator(new iam.AccountPrincipal('333333333333'));
    const template = Template.fromStack(stack);
    const role = stack.getLogicalId(flow.crossAccountOperatorRole('222222222222')!.node.defaultChild as iam.CfnRole);
    expect(template.toJSON().Resources[role].Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: 'arn:aws:iam::222222222222:role/ledger-oncall' } },
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::222222222222:root']] } } },
    ]);
    expect(flow.crossAccountOperatorRole('333333333333')).toBeDefined();
  });

  test("a role of this app in another account's stack is trusted by its ARN and gets sts:AssumeRole on the flow's role, by its literal ARN", () => {
    const { app, stack, flow } = flowStack();
    const ledger = new Stack(app, 'Ledger', { env: { account: '222222222222', region: 'eu-west-1' } });
    const oncall = new iam.Role(ledger, 'OnCall', { assumedBy: new iam.AccountRootPrincipal(), roleName: 'ledger-oncall' });
    flow.grantOperator(oncall);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [{ Action: 'sts:AssumeRole', Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::222222222222:role/ledger-oncall']] } } }] },
    });
    Template.fromStack(ledger).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, Match.stringLikeRegexp('^:iam::111111111111:role/payments')]] } }],
      },
    });
  });

  test('an outbox under a customer-managed key: kms:Decrypt through DynamoDB only, on that key', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Payments', { env: FLOW_ENV });
    const key = new kms.Key(stack, 'OutboxKey');
    const table = new dynamodb.Table(stack, 'Outbox', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: key,
    });
    const flow = new IdempotentEventFlow(stack, 'Payments', { outboxTable: OutboxTable.fromTableAttributes(stack, 'Existing', { table, partitionKeyName: 'pk', sortKeyName: 'sk' }) });
    flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall'));
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: stack.getLogicalId(flow.crossAccountOperatorRole('222222222222')!.node.defaultChild as iam.CfnRole) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] }, Condition: { StringEquals: { 'kms:ViaService': 'dynamodb.eu-west-1.amazonaws.com' } } }),
        ]),
      },
    });
  });

  test("refuses any principal ('*'), naming grantOperator", () => {
    const { flow } = flowStack();
    expect(() => flow.grantOperator(new iam.AnyPrincipal())).toThrow(/IdempotentEventFlow 'Payments': grantOperator takes one principal, but .* is any principal \('\*'\)/);
    expect(() => flow.grantOperator(new iam.OrganizationPrincipal('o-abcdefghij'))).toThrow(/grantOperator takes one principal/);
  });
});
