import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, test } from 'vitest';
import { IInboxTable, InboxTable, InboxTableProps } from '../../lib/consumer';
import { PROCESSING_RECORD, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { nagFindings, newStack } from '../fixtures/construct-test-kit';
import { viaService } from '../fixtures/kms-conditions';

function synth(props: InboxTableProps = {}): { stack: Stack; inbox: InboxTable; template: Template } {
  const stack = newStack();
  const inbox = new InboxTable(stack, 'Inbox', props);
  return { stack, inbox, template: Template.fromStack(stack) };
}

/** The statements of the only IAM policy in the stack. */
function policyStatements(stack: Stack): unknown[] {
  const policies = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement;
}

type GrantMethod = 'grantRecordMessages' | 'grantProcessingRecords' | 'grantBatchRead' | 'grantOperator' | 'grantOperatorRead' | 'grantOperatorResolve';

function grantToNewRole(stack: Stack, inbox: IInboxTable, method: GrantMethod = 'grantRecordMessages'): iam.Grant {
  return inbox[method](new iam.Role(stack, 'Consumer', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') }));
}

/** The ARN of the inbox's BlockedMessages index, as the policy holds it. */
function blockedIndexArn(stack: Stack, inbox: IInboxTable): unknown {
  return stack.resolve(`${inbox.tableArn}/index/${PROCESSING_RECORD.BLOCKED_INDEX_NAME}`);
}

const KEY_ACTIONS = ['kms:Decrypt', 'kms:GenerateDataKey'];

describe('InboxTable: schema', () => {
  test('has only the string partition key pk', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: TABLE_SCHEMA.PARTITION_KEY, KeyType: 'HASH' }],
    });
  });

  test('defines string attributes for the key and the BlockedMessages index only', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      AttributeDefinitions: [
        { AttributeName: TABLE_SCHEMA.PARTITION_KEY, AttributeType: 'S' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, AttributeType: 'S' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, AttributeType: 'S' },
      ],
    });
  });

  test('has the sparse BlockedMessages index on blockedSubscriber and blockedAt, projecting only what the operator listing reads (never the body)', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        {
          IndexName: 'BlockedMessages',
          KeySchema: [
            { AttributeName: 'blockedSubscriber', KeyType: 'HASH' },
            { AttributeName: 'blockedAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'mode', 'activeStep', 'version', 'blockedReason', 'subscriber', 'eventId', 'eventType'] },
        },
      ],
    });
    expect(PROCESSING_RECORD.BLOCKED_INDEX_NAME).toBe('BlockedMessages');
    expect(JSON.stringify(template.toJSON())).not.toContain(PROCESSING_RECORD.BLOCKED_BODY_ATTRIBUTE);
  });

  test('expires records through the TTL attribute expiresAt', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE, Enabled: true },
    });
  });

  test('bills on demand', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', { BillingMode: 'PAY_PER_REQUEST' });
  });

  test('enables point-in-time recovery', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  test('names the table Resource', () => {
    // WHEN
    const { inbox } = synth();
    // THEN
    expect(inbox.node.findChild('Resource')).toBe(inbox.table);
  });
});

describe('InboxTable: encryption and removal', () => {
  test('encrypts with the AWS-managed key by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: Match.exact({ SSEEnabled: true }) });
  });

  test('encrypts with the given customer-managed key', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    // WHEN
    const inbox = new InboxTable(stack, 'Inbox', { encryptionKey: key });
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: stack.resolve(key.keyArn) },
    });
    expect(inbox.encryptionKey).toBe(key);
  });

  test('retains the table by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  test('applies the given removal policy', () => {
    // WHEN
    const { template } = synth({ removalPolicy: RemovalPolicy.DESTROY });
    // THEN
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });

  test('applyRemovalPolicy reaches the table', () => {
    // GIVEN
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    // WHEN
    inbox.applyRemovalPolicy(RemovalPolicy.DESTROY);
    // THEN
    Template.fromStack(stack).hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });
});

describe('InboxTable: grantRecordMessages', () => {
  test('grants only dynamodb:BatchGetItem and dynamodb:PutItem on the table', () => {
    // GIVEN
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    // WHEN
    grantToNewRole(stack, inbox);
    // THEN
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantRecordMessages', Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
    ]);
    expect(stack.resolve(inbox.tableArn)).toEqual({
      'Fn::GetAtt': [stack.getLogicalId(inbox.table.node.defaultChild as dynamodb.CfnTable), 'Arn'],
    });
  });

  test('also grants the key actions DynamoDB needs when a customer-managed key encrypts the table', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const inbox = new InboxTable(stack, 'Inbox', { encryptionKey: key });
    // WHEN
    grantToNewRole(stack, inbox);
    // THEN
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantRecordMessages', Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
      {
        Sid: 'IdempotentEventFlowGrantRecordMessages2',
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Condition: viaService(stack, key, 'dynamodb'),
        Effect: 'Allow',
        Resource: stack.resolve(key.keyArn),
      },
    ]);
  });
});

describe('InboxTable: grantBatchRead', () => {
  test('grants only dynamodb:BatchGetItem on the table (and the key actions with a customer-managed key), for a consumer created with batchRead: true', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const inbox = new InboxTable(stack, 'Inbox', { encryptionKey: key });
    // WHEN
    grantToNewRole(stack, inbox, 'grantBatchRead');
    // THEN
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantBatchRead', Action: 'dynamodb:BatchGetItem', Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
      { Sid: 'IdempotentEventFlowGrantBatchRead2', Action: KEY_ACTIONS, Condition: viaService(stack, key, 'dynamodb'), Effect: 'Allow', Resource: stack.resolve(key.keyArn) },
    ]);
  });
});

describe('InboxTable: grantProcessingRecords', () => {
  test('grants only dynamodb:GetItem, dynamodb:PutItem and dynamodb:UpdateItem on the table: no BatchGetItem, the batch read being off by default', () => {
    // GIVEN
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    // WHEN
    const grant = grantToNewRole(stack, inbox, 'grantProcessingRecords');
    // THEN
    expect(grant.success).toBe(true);
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantProcessingRecords', Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
    ]);
  });

  test('also grants the key actions when a customer-managed key encrypts the table', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const inbox = new InboxTable(stack, 'Inbox', { encryptionKey: key });
    // WHEN
    grantToNewRole(stack, inbox, 'grantProcessingRecords');
    // THEN
    expect(policyStatements(stack)).toContainEqual({ Sid: 'IdempotentEventFlowGrantProcessingRecords2', Action: KEY_ACTIONS, Condition: viaService(stack, key, 'dynamodb'), Effect: 'Allow', Resource: stack.resolve(key.keyArn) });
  });
});

describe('InboxTable: grantOperator', () => {
  test('grants exactly what the CLI calls: Query and Scan on the BlockedMessages index, GetItem and UpdateItem on the table', () => {
    // GIVEN
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    // WHEN
    const grant = grantToNewRole(stack, inbox, 'grantOperator');
    // THEN
    expect(grant.success).toBe(true);
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantOperator', Action: ['dynamodb:Query', 'dynamodb:Scan'], Effect: 'Allow', Resource: blockedIndexArn(stack, inbox) },
      { Sid: 'IdempotentEventFlowGrantOperator2', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
    ]);
  });

  test('grantOperatorRead (list, show) grants no write: Query and Scan on the index, GetItem on the table', () => {
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    const grant = grantToNewRole(stack, inbox, 'grantOperatorRead');
    expect(grant.success).toBe(true);
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantOperatorRead', Action: ['dynamodb:Query', 'dynamodb:Scan'], Effect: 'Allow', Resource: blockedIndexArn(stack, inbox) },
      { Sid: 'IdempotentEventFlowGrantOperatorRead2', Action: 'dynamodb:GetItem', Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
    ]);
  });

  test('grantOperatorResolve grants GetItem and UpdateItem on the table, nothing on the index', () => {
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    const grant = grantToNewRole(stack, inbox, 'grantOperatorResolve');
    expect(grant.success).toBe(true);
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantOperatorResolve', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Effect: 'Allow', Resource: stack.resolve(inbox.tableArn) },
    ]);
  });

  test('names the index by its ARN under the table', () => {
    // GIVEN
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    // WHEN
    grantToNewRole(stack, inbox, 'grantOperator');
    // THEN
    const [read] = policyStatements(stack) as Array<{ Resource: unknown }>;
    expect(read!.Resource).toEqual({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [stack.getLogicalId(inbox.table.node.defaultChild as dynamodb.CfnTable), 'Arn'] }, '/index/BlockedMessages']],
    });
  });

  test('also grants the key actions when a customer-managed key encrypts the table', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const inbox = new InboxTable(stack, 'Inbox', { encryptionKey: key });
    // WHEN
    grantToNewRole(stack, inbox, 'grantOperator');
    // THEN
    expect(policyStatements(stack)).toContainEqual({ Sid: 'IdempotentEventFlowGrantOperator3', Action: KEY_ACTIONS, Condition: viaService(stack, key, 'dynamodb'), Effect: 'Allow', Resource: stack.resolve(key.keyArn) });
  });

  test('grants on an imported table and its index by ARN', () => {
    // GIVEN
    const stack = newStack();
    const inbox = InboxTable.fromTableArn(stack, 'Shared', 'arn:aws:dynamodb:eu-west-1:111122223333:table/shared-inbox');
    // WHEN
    grantToNewRole(stack, inbox, 'grantOperator');
    // THEN
    expect(policyStatements(stack)).toEqual([
      {
        Sid: 'IdempotentEventFlowGrantOperator',
        Action: ['dynamodb:Query', 'dynamodb:Scan'],
        Effect: 'Allow',
        Resource: 'arn:aws:dynamodb:eu-west-1:111122223333:table/shared-inbox/index/BlockedMessages',
      },
      { Sid: 'IdempotentEventFlowGrantOperator2', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Effect: 'Allow', Resource: 'arn:aws:dynamodb:eu-west-1:111122223333:table/shared-inbox' },
    ]);
  });
});

describe('InboxTable: import', () => {
  const arn = 'arn:aws:dynamodb:eu-west-1:111122223333:table/shared-inbox';

  test('fromTableArn takes the name from the ARN', () => {
    // GIVEN
    const stack = newStack();
    // WHEN
    const inbox = InboxTable.fromTableArn(stack, 'Shared', arn);
    // THEN
    expect(inbox.tableArn).toBe(arn);
    expect(stack.resolve(inbox.tableName)).toBe('shared-inbox');
    expect(inbox.encryptionKey).toBeUndefined();
  });

  test('fromTableArn grants BatchGetItem and PutItem on the imported table only', () => {
    // GIVEN
    const stack = newStack();
    const inbox = InboxTable.fromTableArn(stack, 'Shared', arn);
    // WHEN
    grantToNewRole(stack, inbox);
    // THEN
    expect(policyStatements(stack)).toEqual([{ Sid: 'IdempotentEventFlowGrantRecordMessages', Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: arn }]);
  });

  test('fromTableName builds the ARN in the importing stack', () => {
    // GIVEN
    const stack = newStack();
    // WHEN
    const inbox = InboxTable.fromTableName(stack, 'Shared', 'shared-inbox');
    // THEN
    expect(inbox.tableName).toBe('shared-inbox');
    expect(stack.resolve(inbox.tableArn)).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':dynamodb:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':table/shared-inbox']],
    });
  });

  test('fromInboxTableAttributes with a key includes the key in grants', () => {
    // GIVEN
    const stack = newStack();
    const key = kms.Key.fromKeyArn(stack, 'Key', 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');
    const inbox = InboxTable.fromInboxTableAttributes(stack, 'Shared', { tableArn: arn, encryptionKey: key });
    // WHEN
    grantToNewRole(stack, inbox);
    // THEN
    expect(policyStatements(stack)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantRecordMessages2',
      Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
      Condition: viaService(stack, key, 'dynamodb'),
      Effect: 'Allow',
      Resource: key.keyArn,
    });
  });

  test('fails if neither tableArn nor tableName is given', () => {
    expect(() => InboxTable.fromInboxTableAttributes(newStack(), 'Shared', {})).toThrow(
      /InboxTable 'Shared': exactly one of tableArn and tableName must be provided/,
    );
  });

  test('fails if both tableArn and tableName are given', () => {
    expect(() => InboxTable.fromInboxTableAttributes(newStack(), 'Shared', { tableArn: arn, tableName: 'shared-inbox' })).toThrow(
      /exactly one of tableArn and tableName must be provided/,
    );
  });
});

describe('InboxTable: cdk-nag', () => {
  test('has no unacknowledged AwsSolutions or Serverless findings', () => {
    // GIVEN
    const { inbox } = synth();
    // THEN
    expect(nagFindings(inbox)).toEqual([]);
  });
});
