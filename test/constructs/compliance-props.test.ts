import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, InboxTable, OutboxTable, ProcessingMode } from '../../lib';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

/** The KMS key ids of every log group of the template, by logical id. */
function logGroupKeys(template: Template): Record<string, unknown> {
  const groups = template.findResources('AWS::Logs::LogGroup') as Record<string, { Properties: { KmsKeyId?: unknown } }>;
  return Object.fromEntries(Object.entries(groups).map(([id, group]) => [id, group.Properties.KmsKeyId]));
}

describe('log group encryption (logEncryptionKey)', () => {
  test('encrypts no log group with a customer-managed key by default', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    const keys = logGroupKeys(Template.fromStack(stack));
    expect(Object.keys(keys)).toHaveLength(2);
    expect(Object.values(keys)).toEqual([undefined, undefined]);
  });

  test("flow-wide: the relay's and every function's log group use the flow's logEncryptionKey; a function's own key wins", () => {
    const stack = newStack();
    const logKey = new kms.Key(stack, 'LogKey');
    const ownKey = new kms.Key(stack, 'OwnKey');
    const flow = new IdempotentEventFlow(stack, 'Orders', { logEncryptionKey: logKey });
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    const shipping = flow.addSubscriber('Shipping', { entry: HANDLER_ENTRY, logEncryptionKey: ownKey });
    const template = Template.fromStack(stack);
    const keys = logGroupKeys(template);
    const shippingLogGroup = stack.getLogicalId(shipping.consumerFunction.logGroup.node.defaultChild as never);
    expect(Object.keys(keys)).toHaveLength(4);
    for (const [id, keyId] of Object.entries(keys)) {
      expect(keyId, id).toEqual(stack.resolve(id === shippingLogGroup ? ownKey.keyArn : logKey.keyArn));
    }
  });

  test('lets CloudWatch Logs use the key only for log groups of this account and region (encryption context), once per key', () => {
    const stack = newStack();
    const logKey = new kms.Key(stack, 'LogKey');
    const flow = new IdempotentEventFlow(stack, 'Orders', { logEncryptionKey: logKey });
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    flow.addSubscriber('Shipping', { entry: HANDLER_ENTRY });
    const template = Template.fromStack(stack);
    const keyResource = template.toJSON().Resources[stack.getLogicalId(logKey.node.defaultChild as never)];
    const forLogs = (keyResource.Properties.KeyPolicy.Statement as Array<Record<string, unknown>>).filter((s) =>
      JSON.stringify(s.Principal).includes('logs.'),
    );
    expect(forLogs).toEqual([
      {
        Sid: 'AllowCloudWatchLogsToEncryptLogGroupsOfThisAccount',
        Effect: 'Allow',
        Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
        Action: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        Resource: '*',
        Condition: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': {
              'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':logs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':log-group:*']],
            },
          },
        },
      },
    ]);
  });

  test('warns, naming the statement, when the key is imported (its policy can not be changed)', () => {
    const stack = newStack();
    const imported = kms.Key.fromKeyArn(stack, 'Imported', 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');
    const flow = new IdempotentEventFlow(stack, 'Orders', { logEncryptionKey: imported });
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('imported log encryption key'));
    // the relay's log group and the function's: one warning each, naming the statement and the condition
    expect(warnings).toHaveLength(2);
    expect(warnings[0]!.entry.data).toMatch(/kms:EncryptionContext:aws:logs:arn/);
  });
});

describe('reserved concurrency (reservedConcurrentExecutions)', () => {
  test('is not set by default, and set per function when given', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, reservedConcurrentExecutions: 5 });
    flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')).map(
      (f) => (f as { Properties: { ReservedConcurrentExecutions?: number } }).Properties.ReservedConcurrentExecutions,
    );
    expect(functions.sort()).toEqual([5, undefined]);
  });

  test.each([0, 1.5, -1])('fails at synth for %s, naming the prop, the bound and the value', (value) => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(() => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, reservedConcurrentExecutions: value })).toThrow(
      new RegExp(`reservedConcurrentExecutions must be .*${String(value).replace('.', '\\.')}`),
    );
  });
});

describe('VPC (vpc, vpcSubnets, securityGroups)', () => {
  test('puts the function in the VPC and gives its role the network-interface actions', () => {
    const stack = newStack();
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, subnetConfiguration: [{ name: 'Isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, vpc, vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } });
    const template = Template.fromStack(stack);
    const fn = template.toJSON().Resources[stack.getLogicalId(billing.consumerFunction.lambdaFunction.node.defaultChild as never)];
    expect(fn.Properties.VpcConfig.SubnetIds).toHaveLength(2);
    expect(fn.Properties.VpcConfig.SecurityGroupIds).toHaveLength(1);
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('ec2:CreateNetworkInterface');
    // no AWS managed policy on the function's role
    const roles = Object.values(template.findResources('AWS::IAM::Role')) as Array<{ Properties: { ManagedPolicyArns?: unknown } }>;
    expect(roles.map((role) => role.Properties.ManagedPolicyArns)).toEqual(roles.map(() => undefined));
  });

  test.each(['vpcSubnets', 'securityGroups'] as const)('%s without vpc fails at synth, naming the prop', (prop) => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const value = prop === 'vpcSubnets' ? { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } : [];
    expect(() => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, [prop]: value })).toThrow(`${prop} can only be used with vpc, but no vpc was provided`);
  });
});

describe('tables (for an AWS Backup selection)', () => {
  test('lists the outbox the flow created and the inbox tables its subscribers created, not an aggregate one (no inbox)', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    flow.addSubscriber('Stats', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE });
    expect(flow.tables).toEqual([flow.outboxTable.table, (billing.inboxTable as InboxTable).table]);
  });

  test('leaves out tables the flow was given: an outbox table and a shared inbox table', () => {
    const stack = newStack();
    const shared = new InboxTable(stack, 'SharedInbox');
    const outboxTable = new OutboxTable(stack, 'Outbox');
    const flow = new IdempotentEventFlow(stack, 'Orders', { outboxTable });
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, inboxTable: shared });
    expect(flow.tables).toEqual([]);
  });
});
