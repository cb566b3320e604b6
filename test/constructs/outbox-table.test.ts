import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, test } from 'vitest';
import { loadProducerConfig } from '../../lambda/config';
import { ENV } from '../../lambda/contract/environment';
import { OutboxTable, type IOutboxTable, type OutboxTableAttributes } from '../../lib/outbox';
import { viaService } from '../fixtures/kms-conditions';

const STREAM_ARN = 'arn:aws:dynamodb:eu-west-1:111111111111:table/Orders/stream/2024-01-01T00:00:00.000';

function newStack(): Stack {
  return new Stack(new App(), 'Stack');
}

/** Statements of the one IAM policy in the stack. */
function policyStatements(stack: Stack): unknown[] {
  const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy');
  const [policy] = Object.values(policies) as Array<{ Properties: { PolicyDocument: { Statement: unknown[] } } }>;
  return policy.Properties.PolicyDocument.Statement;
}

function grantToNewRole(stack: Stack, outbox: IOutboxTable): iam.Grant {
  const role = new iam.Role(stack, 'Producer', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  return outbox.grantAppendEvents(role);
}

function existingTable(stack: Stack, stream?: dynamodb.StreamViewType, timeToLiveAttribute?: string): dynamodb.Table {
  return new dynamodb.Table(stack, 'Business', {
    partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'SK', type: dynamodb.AttributeType.STRING },
    stream,
    timeToLiveAttribute,
  });
}

describe('OutboxTable', () => {
  test('creates one table as its child "Resource"', () => {
    // GIVEN
    const stack = newStack();
    // WHEN
    const outbox = new OutboxTable(stack, 'Outbox');
    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(outbox.node.findChild('Resource')).toBe(outbox.table);
  });

  test('keys the table by pk (partition, S) and sk (sort, S)', () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
    });
    expect([outbox.partitionKeyName, outbox.sortKeyName]).toEqual(['pk', 'sk']);
  });

  test('bills on demand', () => {
    const stack = newStack();
    new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', { BillingMode: 'PAY_PER_REQUEST' });
  });

  test('streams new images and exposes the stream ARN', () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
    });
    const cfnTable = outbox.table.node.defaultChild as dynamodb.CfnTable;
    expect(stack.resolve(outbox.tableStreamArn)).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(cfnTable), 'StreamArn'] });
  });

  test('expires items through the TTL attribute expiresAt', () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
    expect(outbox.timeToLiveAttributeName).toBe('expiresAt');
  });

  test('turns point-in-time recovery on', () => {
    const stack = newStack();
    new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  test('encrypts with the AWS managed KMS key by default', () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, KMSMasterKeyId: Match.absent() },
    });
    Template.fromStack(stack).resourceCountIs('AWS::KMS::Key', 0);
    expect(outbox.encryptionKey).toBeUndefined();
  });

  test('encrypts with the customer-managed key it is given', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const outbox = new OutboxTable(stack, 'Outbox', { encryptionKey: key });
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: stack.resolve(key.keyArn) },
    });
    expect(outbox.encryptionKey).toBe(key);
  });

  test('retains the table by default', () => {
    const stack = newStack();
    new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  test('applies the removal policy it is given', () => {
    const stack = newStack();
    new OutboxTable(stack, 'Outbox', { removalPolicy: RemovalPolicy.DESTROY });
    Template.fromStack(stack).hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });

  test('lets CloudFormation name the table by default', () => {
    const stack = newStack();
    new OutboxTable(stack, 'Outbox');
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', { TableName: Match.absent() });
  });

  test('uses the table name it is given', () => {
    const stack = newStack();
    new OutboxTable(stack, 'Outbox', { tableName: 'orders-outbox' });
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::Table', { TableName: 'orders-outbox' });
  });

  test('keeps events for 7 days by default', () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Outbox');
    expect(outbox.eventRetention.toDays()).toBe(7);
  });

  test('derives the default event source from the construct path', () => {
    const stack = newStack();
    const outbox = new OutboxTable(stack, 'Order Outbox');
    expect(outbox.eventSource).toBe('/Stack/Order%20Outbox');
  });

  describe('producerEnvironment', () => {
    test('carries table name, key names, TTL attribute, retention and event source under the ENV names', () => {
      const stack = newStack();
      const outbox = new OutboxTable(stack, 'Outbox');
      expect(stack.resolve(outbox.producerEnvironment)).toEqual({
        [ENV.OUTBOX_TABLE_NAME]: stack.resolve(outbox.table.tableName),
        [ENV.OUTBOX_PARTITION_KEY_NAME]: 'pk',
        [ENV.OUTBOX_SORT_KEY_NAME]: 'sk',
        [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: 'expiresAt',
        [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: '604800',
        [ENV.EVENT_SOURCE]: '/Stack/Outbox',
        // no relay reads this outbox: the SNS limit of one message
        [ENV.MAX_EVENT_BYTES]: '262144',
      });
    });

    test('is read back by the runtime loader', () => {
      const stack = newStack();
      const outbox = new OutboxTable(stack, 'Outbox');
      const config = loadProducerConfig({ ...outbox.producerEnvironment, [ENV.MAX_EVENT_BYTES]: stack.resolve(outbox.producerEnvironment[ENV.MAX_EVENT_BYTES]) });
      expect(stack.resolve(config.outboxTableName)).toEqual(stack.resolve(outbox.table.tableName));
      expect(config).toEqual({
        outboxTableName: outbox.table.tableName,
        partitionKeyName: 'pk',
        sortKeyName: 'sk',
        timeToLiveAttributeName: 'expiresAt',
        eventRetentionSeconds: 604800,
        eventSource: '/Stack/Outbox',
        maxEventBytes: 262_144,
      });
    });

    test('carries the event retention it is given, in seconds', () => {
      const stack = newStack();
      const outbox = new OutboxTable(stack, 'Outbox', { eventRetention: Duration.days(1) });
      expect(outbox.producerEnvironment[ENV.OUTBOX_EVENT_RETENTION_SECONDS]).toBe('86400');
    });

    test('carries the event source it is given', () => {
      const stack = newStack();
      const outbox = new OutboxTable(stack, 'Outbox', { eventSource: 'urn:example:orders' });
      expect(outbox.producerEnvironment[ENV.EVENT_SOURCE]).toBe('urn:example:orders');
    });
  });

  describe('grantAppendEvents', () => {
    test('grants only dynamodb:PutItem on the table', () => {
      const stack = newStack();
      const outbox = new OutboxTable(stack, 'Outbox');
      grantToNewRole(stack, outbox);
      expect(policyStatements(stack)).toEqual([
        { Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: stack.resolve(outbox.table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
      ]);
    });

    test('adds kms:Encrypt and kms:Decrypt on a customer-managed key', () => {
      const stack = newStack();
      const key = new kms.Key(stack, 'Key');
      const outbox = new OutboxTable(stack, 'Outbox', { encryptionKey: key });
      grantToNewRole(stack, outbox);
      expect(policyStatements(stack)).toEqual([
        { Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: stack.resolve(outbox.table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
        { Sid: 'IdempotentEventFlowGrantAppendEvents2', Action: ['kms:Encrypt', 'kms:Decrypt'], Condition: viaService(stack, key, 'dynamodb'), Effect: 'Allow', Resource: stack.resolve(key.keyArn) },
      ]);
    });

    test('returns a grant that was applied to the principal', () => {
      const stack = newStack();
      const grant = grantToNewRole(stack, new OutboxTable(stack, 'Outbox'));
      expect(grant.success).toBe(true);
    });
  });

  describe('validation', () => {
    test('fails if eventRetention is below 1 day', () => {
      const stack = newStack();
      expect(() => new OutboxTable(stack, 'Outbox', { eventRetention: Duration.hours(23) })).toThrow(
        /OutboxTable 'Outbox': eventRetention must be 1 day or more, but 23 hours was provided/,
      );
    });

    test('accepts an eventRetention of exactly 1 day', () => {
      const stack = newStack();
      expect(() => new OutboxTable(stack, 'Outbox', { eventRetention: Duration.days(1) })).not.toThrow();
    });

    test('fails if tableName has characters DynamoDB does not allow', () => {
      const stack = newStack();
      expect(() => new OutboxTable(stack, 'Outbox', { tableName: 'orders outbox' })).toThrow(
        /tableName must be 3 to 255 of .*, but 'orders outbox' was provided/,
      );
    });

    test('fails if tableName is shorter than 3 characters', () => {
      const stack = newStack();
      expect(() => new OutboxTable(stack, 'Outbox', { tableName: 'ab' })).toThrow(/tableName must be 3 to 255/);
    });

    test('fails if eventSource is empty', () => {
      const stack = newStack();
      expect(() => new OutboxTable(stack, 'Outbox', { eventSource: '' })).toThrow(/eventSource must be a non-empty URI-reference/);
    });

    test('fails if eventSource contains whitespace', () => {
      const stack = newStack();
      expect(() => new OutboxTable(stack, 'Outbox', { eventSource: 'orders service' })).toThrow(
        /eventSource must be a non-empty URI-reference without whitespace, but 'orders service' was provided/,
      );
    });
  });
});

describe('OutboxTable.fromTableAttributes', () => {
  test('uses the existing table and its stream, creating no table', () => {
    const stack = newStack();
    const table = existingTable(stack, dynamodb.StreamViewType.NEW_AND_OLD_IMAGES);
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', sortKeyName: 'SK' });
    Template.fromStack(stack).resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(outbox.table).toBe(table);
    expect(stack.resolve(outbox.tableStreamArn)).toEqual(stack.resolve(table.tableStreamArn));
  });

  test('prefers the tableStreamArn it is given', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableName(stack, 'Orders', 'Orders');
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, tableStreamArn: STREAM_ARN, partitionKeyName: 'PK' });
    expect(outbox.tableStreamArn).toBe(STREAM_ARN);
  });

  test('takes the stream ARN of a table imported with one', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' });
    expect(outbox.tableStreamArn).toBe(STREAM_ARN);
  });

  test('exposes the key schema it is given', () => {
    const stack = newStack();
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', {
      table: existingTable(stack, dynamodb.StreamViewType.NEW_IMAGE, 'ttl'),
      partitionKeyName: 'PK',
      sortKeyName: 'SK',
      timeToLiveAttributeName: 'ttl',
    });
    expect([outbox.partitionKeyName, outbox.sortKeyName, outbox.timeToLiveAttributeName]).toEqual(['PK', 'SK', 'ttl']);
  });

  test('keeps events for 7 days by default', () => {
    const stack = newStack();
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', {
      table: existingTable(stack, dynamodb.StreamViewType.NEW_IMAGE),
      partitionKeyName: 'PK',
      sortKeyName: 'SK',
    });
    expect(outbox.eventRetention.toDays()).toBe(7);
  });

  test('leaves sort key and TTL attribute out of the producer environment when the table has neither', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' });
    expect(stack.resolve(outbox.producerEnvironment)).toEqual({
      [ENV.MAX_EVENT_BYTES]: '262144',
      [ENV.OUTBOX_TABLE_NAME]: 'Orders',
      [ENV.OUTBOX_PARTITION_KEY_NAME]: 'PK',
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: '604800',
      [ENV.EVENT_SOURCE]: '/Stack/Outbox',
    });
  });

  test('puts the sort key, TTL attribute, retention and event source it is given into the producer environment', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', {
      table,
      partitionKeyName: 'PK',
      sortKeyName: 'SK',
      timeToLiveAttributeName: 'ttl',
      eventRetention: Duration.days(2),
      eventSource: 'urn:example:orders',
    });
    expect(stack.resolve(outbox.producerEnvironment)).toEqual({
      [ENV.MAX_EVENT_BYTES]: '262144',
      [ENV.OUTBOX_TABLE_NAME]: 'Orders',
      [ENV.OUTBOX_PARTITION_KEY_NAME]: 'PK',
      [ENV.OUTBOX_SORT_KEY_NAME]: 'SK',
      [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: 'ttl',
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: '172800',
      [ENV.EVENT_SOURCE]: 'urn:example:orders',
    });
  });

  test("takes the table's encryption key by default", () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN, encryptionKey: key });
    const outbox = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' });
    expect(outbox.encryptionKey).toBe(key);
  });

  test('grants dynamodb:PutItem on the existing table only', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    grantToNewRole(stack, OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' }));
    expect(policyStatements(stack)).toEqual([
      { Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: stack.resolve(table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
    ]);
  });

  test('fails if the table has no stream ARN', () => {
    const stack = newStack();
    const table = existingTable(stack);
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK' })).toThrow(
      /OutboxTable 'Outbox': the table has no stream ARN\. Enable a stream with new images .* pass tableStreamArn/,
    );
  });

  test('fails if eventRetention is below 1 day', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    expect(() =>
      OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', eventRetention: Duration.hours(12) }),
    ).toThrow(/eventRetention must be 1 day or more, but 12 hours was provided/);
  });

  test('fails if partitionKeyName is empty', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: '' })).toThrow(
      /partitionKeyName must be 1 to 255 characters, but '' was provided/,
    );
  });

  test('fails if eventSource contains whitespace', () => {
    const stack = newStack();
    const table = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    expect(() =>
      OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', eventSource: 'a b' }),
    ).toThrow(/eventSource must be a non-empty URI-reference without whitespace/);
  });
});

/**
 * Item 16 of issue 10: a table of this app (an L2 `Table` or `TableV2`) is checked against what the outbox needs, through
 * its CloudFormation resource: the stream view type, the key schema and its attribute types, the TTL attribute.
 */
describe('OutboxTable.fromTableAttributes: a table of this app', () => {
  function table(stack: Stack, props: Partial<dynamodb.TableProps> = {}): dynamodb.Table {
    return new dynamodb.Table(stack, 'Business', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'SK', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      timeToLiveAttribute: 'ttl',
      ...props,
    });
  }
  const attrs = { partitionKeyName: 'PK', sortKeyName: 'SK', timeToLiveAttributeName: 'ttl' };
  const build = (props: Partial<dynamodb.TableProps>, given: Partial<OutboxTableAttributes> = {}) => () => {
    const stack = newStack();
    return OutboxTable.fromTableAttributes(stack, 'Outbox', { table: table(stack, props), ...attrs, ...given });
  };

  test('accepts a table that matches, with NEW_IMAGE or NEW_AND_OLD_IMAGES', () => {
    expect(build({})).not.toThrow();
    expect(build({ stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES })).not.toThrow();
  });
  test('fails if the stream is KEYS_ONLY', () => {
    expect(build({ stream: dynamodb.StreamViewType.KEYS_ONLY })).toThrow(
      /OutboxTable 'Outbox': table must have a stream with new images \(NEW_IMAGE or NEW_AND_OLD_IMAGES\), but the stream of Stack\/Business is KEYS_ONLY/,
    );
  });
  test('fails if the stream is OLD_IMAGE', () => {
    expect(build({ stream: dynamodb.StreamViewType.OLD_IMAGE })).toThrow(/table must have a stream with new images .* but the stream of Stack\/Business is OLD_IMAGE/);
  });
  test('fails if tableStreamArn is given for a table of this app that has no stream', () => {
    expect(build({ stream: undefined }, { tableStreamArn: STREAM_ARN })).toThrow(
      /table must have a stream with new images .* but Stack\/Business has no stream/,
    );
  });
  test('fails if partitionKeyName is not the table\'s partition key', () => {
    expect(build({}, { partitionKeyName: 'pk' })).toThrow(
      /OutboxTable 'Outbox': partitionKeyName must be the partition key of Stack\/Business \('PK'\), but 'pk' was provided/,
    );
  });
  test('fails if the partition key is a NUMBER', () => {
    expect(build({ partitionKey: { name: 'PK', type: dynamodb.AttributeType.NUMBER } })).toThrow(
      /partitionKeyName must name a key of type S \(string\), but 'PK' of Stack\/Business is of type N/,
    );
  });
  test('fails if sortKeyName is missing on a table with a sort key', () => {
    expect(build({}, { sortKeyName: undefined })).toThrow(
      /OutboxTable 'Outbox': sortKeyName must be the sort key of Stack\/Business \('SK'\), but none was provided/,
    );
  });
  test('fails if sortKeyName is not the table\'s sort key', () => {
    expect(build({}, { sortKeyName: 'sk' })).toThrow(/sortKeyName must be the sort key of Stack\/Business \('SK'\), but 'sk' was provided/);
  });
  test('fails if sortKeyName is given for a table without a sort key', () => {
    expect(build({ sortKey: undefined })).toThrow(/sortKeyName must be omitted \(Stack\/Business has no sort key\), but 'SK' was provided/);
  });
  test('fails if the sort key is BINARY', () => {
    expect(build({ sortKey: { name: 'SK', type: dynamodb.AttributeType.BINARY } })).toThrow(
      /sortKeyName must name a key of type S \(string\), but 'SK' of Stack\/Business is of type B/,
    );
  });
  test('fails if timeToLiveAttributeName is not the table\'s TTL attribute', () => {
    expect(build({}, { timeToLiveAttributeName: 'expiresAt' })).toThrow(
      /OutboxTable 'Outbox': timeToLiveAttributeName must be the TTL attribute of Stack\/Business \('ttl'\), but 'expiresAt' was provided/,
    );
  });
  test('fails if timeToLiveAttributeName is given for a table without TTL', () => {
    expect(build({ timeToLiveAttribute: undefined })).toThrow(
      /timeToLiveAttributeName must be the TTL attribute of Stack\/Business \(none: enable TTL on the table or omit timeToLiveAttributeName\), but 'ttl' was provided/,
    );
  });
  test('accepts no timeToLiveAttributeName on a table with TTL (outbox items are then kept)', () => {
    expect(build({}, { timeToLiveAttributeName: undefined })).not.toThrow();
  });
  test('checks a TableV2 too', () => {
    const stack = newStack();
    const tableV2 = new dynamodb.TableV2(stack, 'Business', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.NUMBER },
      dynamoStream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table: tableV2, partitionKeyName: 'PK' })).toThrow(
      /partitionKeyName must name a key of type S \(string\), but 'PK' of Stack\/Business is of type N/,
    );
  });
  test('does not check a table imported by name (nothing is known at synth)', () => {
    const stack = newStack();
    const imported = dynamodb.Table.fromTableAttributes(stack, 'Orders', { tableName: 'Orders', tableStreamArn: STREAM_ARN });
    expect(() => OutboxTable.fromTableAttributes(stack, 'Outbox', { table: imported, partitionKeyName: 'anything', sortKeyName: 'x', timeToLiveAttributeName: 'y' })).not.toThrow();
  });
});
