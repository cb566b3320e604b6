/**
 * Issue 41: `OrderedRelay.grantOperator`, the outbox read `replay` to an ordered subscriber needs (it reads the
 * relay's outbox history items by id, `GetItem`, or by time, `Scan`), for an ordered path on its own outbox table (no
 * `IdempotentEventFlow` whose `grantOperator` would cover it). As the flow's: a principal of the relay's account gets it
 * in its own policy, one of another account a role of the relay's account trusted by exactly it. Template assertions
 * pin the actions, the resources (the table, its key through DynamoDB only), the trust policy and the output.
 */
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, test } from 'vitest';
import { OrderedRelay } from '../../lib/ordered';
import { OutboxTable } from '../../lib/outbox';
import { OUTBOX_OPERATOR_ACTIONS } from '../../lib/private/flow-operator';

const RELAY_ENV = { account: '111111111111', region: 'eu-west-1' };

function relayStack(outbox?: (stack: Stack) => OutboxTable | ReturnType<typeof OutboxTable.fromTableAttributes>): { app: App; stack: Stack; relay: OrderedRelay; outboxTable: OrderedRelay['outboxTable'] } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Fulfilment', { env: RELAY_ENV });
  const outboxTable = outbox === undefined ? new OutboxTable(stack, 'Outbox') : outbox(stack);
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable });
  CdkAnnotations.of(relay).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  return { app, stack, relay, outboxTable };
}

function tableArn(stack: Stack, outboxTable: OrderedRelay['outboxTable']): unknown {
  return { 'Fn::GetAtt': [stack.getLogicalId(outboxTable.table.node.defaultChild as dynamodb.CfnTable), 'Arn'] };
}

/** Every statement of the stack's policies attached to the role `roleId`. */
function statementsOf(template: Template, roleId: string): unknown[] {
  return Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } })).flatMap(
    (policy) => (policy as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement,
  );
}

describe('OrderedRelay.grantOperator', () => {
  test("a role of the relay's account gets exactly GetItem, Scan, DescribeTimeToLive and DescribeTable on the outbox table in its own policy, and no role is created", () => {
    const { stack, relay, outboxTable } = relayStack();
    const oncall = new iam.Role(stack, 'OnCall', { assumedBy: new iam.AccountRootPrincipal() });
    relay.grantOperator(oncall);
    const template = Template.fromStack(stack);
    expect(statementsOf(template, stack.getLogicalId(oncall.node.defaultChild as iam.CfnRole))).toEqual([
      { Sid: 'IdempotentEventFlowGrantOperator', Effect: 'Allow', Action: [...OUTBOX_OPERATOR_ACTIONS], Resource: tableArn(stack, outboxTable) },
    ]);
    expect(OUTBOX_OPERATOR_ACTIONS).toEqual(['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable']);
    expect(Object.keys(template.findResources('AWS::IAM::Role')).filter((id) => id.includes('CrossAccountOperator'))).toEqual([]);
    expect(relay.crossAccountOperatorRole('111111111111')).toBeUndefined();
  });

  test("a role of another account, by ARN: a role of the relay's account trusted by exactly it, holding only the outbox read, its ARN in an output", () => {
    const { stack, relay, outboxTable } = relayStack();
    const grant = relay.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/shipping-oncall'));
    const role = relay.crossAccountOperatorRole('222222222222');
    expect(role).toBeDefined();
    expect(grant.principalStatements).toHaveLength(1);
    const template = Template.fromStack(stack);
    const roleId = stack.getLogicalId(role!.node.defaultChild as iam.CfnRole);
    expect(roleId).toMatch(/^OrderedCrossAccountOperator222222222222/);
    expect(template.toJSON().Resources[roleId].Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: 'arn:aws:iam::222222222222:role/shipping-oncall' } },
    ]);
    expect(template.toJSON().Resources[roleId].Properties.Description).toBe('Operators of account 222222222222: read the outbox of OrderedRelay Fulfilment/Ordered (idempotent-event-flow replay), nothing else');
    // nothing else: one statement, the outbox table's read (no stream, no index, no topic, no queue, no write)
    expect(statementsOf(template, roleId)).toEqual([
      { Sid: 'IdempotentEventFlowGrantOperator', Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable'], Resource: tableArn(stack, outboxTable) },
    ]);
    const outputs = Object.entries(template.findOutputs('*')).filter(([id]) => id.startsWith('OrderedCrossAccountOperator222222222222RoleArn'));
    expect(outputs.map(([, output]) => (output as { Value: unknown }).Value)).toEqual([{ 'Fn::GetAtt': [roleId, 'Arn'] }]);
    expect(JSON.stringify(template.toJSON())).not.toMatch(/"Effect":"Allow","Principal":\{"AWS":"\*"\}/);
  });

  test("a role of this app in another account's stack works: trusted by its ARN, and given sts:AssumeRole on the relay's role in its own stack", () => {
    const { app, stack, relay } = relayStack();
    const shipping = new Stack(app, 'Shipping', { env: { account: '222222222222', region: 'eu-west-1' } });
    const oncall = new iam.Role(shipping, 'OnCall', { assumedBy: new iam.AccountRootPrincipal(), roleName: 'shipping-oncall' });
    relay.grantOperator(oncall);
    relay.grantOperator(new iam.AccountPrincipal('222222222222'));
    const roleId = stack.getLogicalId(relay.crossAccountOperatorRole('222222222222')!.node.defaultChild as iam.CfnRole);
    expect(Template.fromStack(stack).toJSON().Resources[roleId].Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::222222222222:role/shipping-oncall']] } } },
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::222222222222:root']] } } },
    ]);
    Template.fromStack(shipping).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, Match.stringLikeRegexp('^:iam::111111111111:role/fulfilment')]] } }],
      },
    });
  });

  test('an outbox under a customer-managed key: kms:Decrypt on that key, through DynamoDB of its Region only', () => {
    let key: kms.Key | undefined;
    const { stack, relay, outboxTable } = relayStack((scope) => {
      key = new kms.Key(scope, 'OutboxKey');
      const table = new dynamodb.Table(scope, 'OutboxTable', {
        partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
        stream: dynamodb.StreamViewType.NEW_IMAGE,
        encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
        encryptionKey: key,
      });
      return OutboxTable.fromTableAttributes(scope, 'Existing', { table, partitionKeyName: 'pk', sortKeyName: 'sk' });
    });
    relay.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/shipping-oncall'));
    const roleId = stack.getLogicalId(relay.crossAccountOperatorRole('222222222222')!.node.defaultChild as iam.CfnRole);
    expect(statementsOf(Template.fromStack(stack), roleId)).toEqual([
      { Sid: 'IdempotentEventFlowGrantOperator', Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable'], Resource: tableArn(stack, outboxTable) },
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: { 'Fn::GetAtt': [stack.getLogicalId(key!.node.defaultChild as kms.CfnKey), 'Arn'] },
        Condition: { StringEquals: { 'kms:ViaService': 'dynamodb.eu-west-1.amazonaws.com' } },
      }),
    ]);
  });

  test("refuses any principal ('*') and a principal of its account it can not give a policy, naming the relay", () => {
    const { relay } = relayStack();
    expect(() => relay.grantOperator(new iam.AnyPrincipal())).toThrow(/^OrderedRelay 'Ordered': grantOperator takes one principal, but .* is any principal \('\*'\)/);
    expect(() => relay.grantOperator(new iam.OrganizationPrincipal('o-abcdefghij'))).toThrow(/OrderedRelay 'Ordered': grantOperator takes one principal/);
    expect(() => relay.grantOperator(new iam.AccountRootPrincipal())).toThrow(/^OrderedRelay 'Ordered': grantOperator could not give/);
  });
});
