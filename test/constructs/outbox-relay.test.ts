import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as pipes from 'aws-cdk-lib/aws-pipes';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, test } from 'vitest';
import { outboxFilterPattern, outboxInputTemplate } from '../../lambda/contract/wire-format';
import { OutboxRelay, OutboxRelayLogLevel, OutboxTable, type IOutboxTable, type OutboxRelayProps } from '../../lib/outbox';
import { viaService } from '../fixtures/kms-conditions';

const STREAM_ARN = 'arn:aws:dynamodb:eu-west-1:111111111111:table/Orders/stream/2024-01-01T00:00:00.000';

interface Fixture {
  readonly stack: Stack;
  readonly outboxTable: IOutboxTable;
  readonly topic: sns.ITopic;
  readonly topicKey: kms.IKey;
}

/** The Sid of a statement of the relay's own wiring (numbered per statement of its role). */
const RELAY_SID = expect.stringMatching(/^IdempotentEventFlowOutboxRelay[0-9]*$/);

function fixture(options: { tableKey?: boolean } = {}): Fixture {
  const stack = new Stack(new App(), 'Stack');
  const tableKey = options.tableKey ? new kms.Key(stack, 'TableKey') : undefined;
  const outboxTable = new OutboxTable(stack, 'Outbox', { encryptionKey: tableKey });
  const topicKey = new kms.Key(stack, 'TopicKey');
  const topic = new sns.Topic(stack, 'Topic', { masterKey: topicKey });
  return { stack, outboxTable, topic, topicKey };
}

function relay(f: Fixture, props: Partial<OutboxRelayProps> = {}): OutboxRelay {
  return new OutboxRelay(f.stack, 'Relay', { outboxTable: f.outboxTable, topic: f.topic, ...props });
}

function pipeProperties(stack: Stack): Record<string, any> {
  const pipeResources = Template.fromStack(stack).findResources('AWS::Pipes::Pipe');
  expect(Object.keys(pipeResources)).toHaveLength(1);
  return Object.values(pipeResources)[0].Properties;
}

/** Statements of the relay role's policy. */
function roleStatements(stack: Stack, r: OutboxRelay): Array<Record<string, any>> {
  const roleRef = stack.resolve((r.role as iam.Role).roleName);
  const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy', { Properties: { Roles: [roleRef] } });
  expect(Object.keys(policies)).toHaveLength(1);
  return Object.values(policies)[0].Properties.PolicyDocument.Statement;
}

describe('OutboxRelay', () => {
  describe('pipe', () => {
    test('is the child "Resource", a stable L1 pipe', () => {
      const f = fixture();
      const r = relay(f);
      expect(r.node.findChild('Resource')).toBeInstanceOf(pipes.CfnPipe);
      Template.fromStack(f.stack).resourceCountIs('AWS::Pipes::Pipe', 1);
    });

    test("reads the outbox table's stream", () => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack).Source).toEqual(f.stack.resolve(f.outboxTable.tableStreamArn));
    });

    test('publishes to the topic', () => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack).Target).toEqual(f.stack.resolve(f.topic.topicArn));
    });

    test('filters with the shared outbox filter pattern, and only with it', () => {
      const f = fixture();
      relay(f);
      const filters = pipeProperties(f.stack).SourceParameters.FilterCriteria.Filters;
      expect(filters).toHaveLength(1);
      expect(JSON.parse(filters[0].Pattern)).toEqual(outboxFilterPattern());
    });

    test('publishes the envelope with the shared input template', () => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack).TargetParameters).toEqual({ InputTemplate: outboxInputTemplate() });
    });

    test('derives the pipe name from the construct path and the stream label by default (so the trust policy can name the pipe)', () => {
      const f = fixture();
      const r = relay(f);
      const name = pipeProperties(f.stack).Name;
      // <path>-<label without colons>; replacement-names.test.ts resolves it before and after each replacement
      expect(name['Fn::Join'][0]).toBe('');
      expect(name['Fn::Join'][1][0]).toMatch(/^Stack-Relay-[A-Za-z0-9-]{1,30}-$/);
      expect(JSON.stringify(name)).toContain(JSON.stringify(f.stack.resolve(f.outboxTable.tableStreamArn)));
      expect(f.stack.resolve(r.pipeName)).toEqual({ Ref: expect.any(String) });
    });

    test('uses the pipe name it is given', () => {
      const f = fixture();
      relay(f, { pipeName: 'orders-outbox-relay' });
      expect(pipeProperties(f.stack).Name).toBe('orders-outbox-relay');
    });

    test('exposes the pipe name and ARN', () => {
      const f = fixture();
      const r = relay(f);
      const pipe = r.node.findChild('Resource') as pipes.CfnPipe;
      expect(f.stack.resolve(r.pipeName)).toEqual({ Ref: f.stack.getLogicalId(pipe) });
      expect(f.stack.resolve(r.pipeArn)).toEqual({ 'Fn::GetAtt': [f.stack.getLogicalId(pipe), 'Arn'] });
    });

    test('is created after the policy of its role', () => {
      const f = fixture();
      const r = relay(f);
      const pipe = r.node.findChild('Resource') as pipes.CfnPipe;
      const policy = (r.role as iam.Role).node.findChild('DefaultPolicy').node.defaultChild as iam.CfnPolicy;
      const pipeResource = Template.fromStack(f.stack).toJSON().Resources[f.stack.getLogicalId(pipe)];
      expect(pipeResource.DependsOn).toContain(f.stack.getLogicalId(policy));
    });
  });

  describe('stream parameters', () => {
    test('start at TRIM_HORIZON', () => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack).SourceParameters.DynamoDBStreamParameters.StartingPosition).toBe('TRIM_HORIZON');
    });

    test('bisect a partly failing batch', () => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack).SourceParameters.DynamoDBStreamParameters.OnPartialBatchItemFailure).toBe('AUTOMATIC_BISECT');
    });

    test.each([
      ['BatchSize', 10],
      ['MaximumRetryAttempts', 10],
      ['MaximumRecordAgeInSeconds', 3600],
      ['ParallelizationFactor', 1],
    ])('default %s to %s', (key, expected) => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack).SourceParameters.DynamoDBStreamParameters[key]).toBe(expected);
    });

    test.each<[string, Partial<OutboxRelayProps>, number]>([
      ['BatchSize', { batchSize: 1 }, 1],
      ['MaximumRetryAttempts', { maximumRetryAttempts: 0 }, 0],
      ['MaximumRecordAgeInSeconds', { maximumRecordAge: Duration.hours(23) }, 82800],
      ['ParallelizationFactor', { parallelizationFactor: 10 }, 10],
    ])('set %s from props %o', (key, props, expected) => {
      const f = fixture();
      relay(f, props);
      expect(pipeProperties(f.stack).SourceParameters.DynamoDBStreamParameters[key]).toBe(expected);
    });
  });

  describe('dead-letter queue', () => {
    test('is created and set as the pipe dead-letter target by default', () => {
      const f = fixture();
      const r = relay(f);
      expect(r.node.findChild('DeadLetterQueue')).toBe(r.deadLetterQueue);
      expect(pipeProperties(f.stack).SourceParameters.DynamoDBStreamParameters.DeadLetterConfig).toEqual({
        Arn: f.stack.resolve(r.deadLetterQueue.queueArn),
      });
    });

    test('keeps messages 14 days', () => {
      const f = fixture();
      relay(f);
      Template.fromStack(f.stack).hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 1209600 });
    });

    test('is encrypted with SQS-managed keys by default', () => {
      const f = fixture();
      relay(f);
      Template.fromStack(f.stack).hasResourceProperties('AWS::SQS::Queue', {
        SqsManagedSseEnabled: true,
        KmsMasterKeyId: Match.absent(),
      });
    });

    test('is encrypted with deadLetterQueueEncryptionKey when given', () => {
      const f = fixture();
      const key = new kms.Key(f.stack, 'DlqKey');
      relay(f, { deadLetterQueueEncryptionKey: key });
      Template.fromStack(f.stack).hasResourceProperties('AWS::SQS::Queue', { KmsMasterKeyId: f.stack.resolve(key.keyArn) });
    });

    test('accepts only TLS requests', () => {
      const f = fixture();
      const r = relay(f);
      Template.fromStack(f.stack).hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [f.stack.resolve(r.deadLetterQueue.queueUrl)],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    });

    test('is retained by default', () => {
      const f = fixture();
      relay(f);
      Template.fromStack(f.stack).hasResource('AWS::SQS::Queue', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    });

    test('takes the removal policy it is given', () => {
      const f = fixture();
      relay(f, { removalPolicy: RemovalPolicy.DESTROY });
      Template.fromStack(f.stack).hasResource('AWS::SQS::Queue', { DeletionPolicy: 'Delete' });
    });

    test('is the queue it is given, creating none', () => {
      const f = fixture();
      const queue = new sqs.Queue(f.stack, 'MyDlq');
      const r = relay(f, { deadLetterQueue: queue });
      Template.fromStack(f.stack).resourceCountIs('AWS::SQS::Queue', 1);
      expect(r.deadLetterQueue).toBe(queue);
      expect(pipeProperties(f.stack).SourceParameters.DynamoDBStreamParameters.DeadLetterConfig).toEqual({
        Arn: f.stack.resolve(queue.queueArn),
      });
    });

    test('may be an imported queue, whose key the role may use', () => {
      const f = fixture();
      const queue = sqs.Queue.fromQueueAttributes(f.stack, 'Imported', {
        queueArn: 'arn:aws:sqs:eu-west-1:111111111111:relay-dlq',
        keyArn: 'arn:aws:kms:eu-west-1:111111111111:key/dlq-key',
      });
      const r = relay(f, { deadLetterQueue: queue });
      expect(roleStatements(f.stack, r)).toEqual(
        expect.arrayContaining([
          { Sid: RELAY_SID, Action: 'sqs:SendMessage', Effect: 'Allow', Resource: 'arn:aws:sqs:eu-west-1:111111111111:relay-dlq' },
          {
            Sid: RELAY_SID,
            Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
            Condition: { StringEquals: { 'kms:ViaService': 'sqs.eu-west-1.amazonaws.com' } },
            Effect: 'Allow',
            Resource: 'arn:aws:kms:eu-west-1:111111111111:key/dlq-key',
          },
        ]),
      );
    });
  });

  describe('encryption of the pipe', () => {
    test('uses an AWS owned key unless given one: no KmsKeyIdentifier', () => {
      const f = fixture();
      relay(f);
      expect(pipeProperties(f.stack)).not.toHaveProperty('KmsKeyIdentifier');
    });

    test('uses the encryptionKey it is given, which its role may describe and use', () => {
      const f = fixture();
      const key = new kms.Key(f.stack, 'PipeKey');
      const r = relay(f, { encryptionKey: key });
      expect(pipeProperties(f.stack).KmsKeyIdentifier).toEqual(f.stack.resolve(key.keyArn));
      const statements = roleStatements(f.stack, r).filter((s) => JSON.stringify(s.Resource) === JSON.stringify(f.stack.resolve(key.keyArn)));
      // the pipe's ARN, as the trust policy names it
      const [role] = Object.values(Template.fromStack(f.stack).findResources('AWS::IAM::Role'));
      const pipeArn = role!.Properties.AssumeRolePolicyDocument.Statement[0].Condition.ArnEquals['aws:SourceArn'];
      expect(statements).toEqual([
        { Sid: RELAY_SID, Action: 'kms:DescribeKey', Effect: 'Allow', Resource: f.stack.resolve(key.keyArn) },
        ...['aws:pipes:arn', 'aws:pipe:arn'].map((contextKey) => ({
          Sid: RELAY_SID,
          Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
          Condition: { ArnEquals: { [`kms:EncryptionContext:${contextKey}`]: pipeArn } },
          Effect: 'Allow',
          Resource: f.stack.resolve(key.keyArn),
        })),
      ]);
    });
  });

  describe('role', () => {
    test('is the child "Role", assumable only by this pipe (aws:SourceArn) of this account (aws:SourceAccount)', () => {
      const f = fixture();
      const r = relay(f, { pipeName: 'orders-relay' });
      expect(r.node.findChild('Role')).toBe(r.role);
      const roles = Template.fromStack(f.stack).findResources('AWS::IAM::Role');
      const trust = Object.values(roles).map((role) => role.Properties.AssumeRolePolicyDocument.Statement);
      expect(trust).toEqual([
        [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { Service: 'pipes.amazonaws.com' },
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnEquals: {
                'aws:SourceArn': {
                  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':pipes:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':pipe/orders-relay']],
                },
              },
            },
          },
        ],
      ]);
    });

    test("names the pipe's ARN in the trust policy with the default name too, without a circular reference", () => {
      const f = fixture();
      relay(f);
      const name = pipeProperties(f.stack).Name;
      const roles = Object.values(Template.fromStack(f.stack).findResources('AWS::IAM::Role'));
      const sourceArn = JSON.stringify(roles[0]!.Properties.AssumeRolePolicyDocument.Statement[0].Condition.ArnEquals['aws:SourceArn']);
      // replacement-names.test.ts resolves both and compares them
      expect(sourceArn).toContain(`:pipe/${name['Fn::Join'][1][0]}`);
      expect(sourceArn).toContain(JSON.stringify(f.stack.resolve(f.outboxTable.tableStreamArn)));
      expect(JSON.stringify(roles[0]!.Properties.AssumeRolePolicyDocument)).not.toContain('Pipes::Pipe');
    });

    test('may do exactly: read the stream, publish to the topic with its key, send to the DLQ, write its logs', () => {
      const f = fixture();
      const r = relay(f);
      const resolve = (value: string): unknown => f.stack.resolve(value);
      // each statement marked as the relay's own (its Sid, numbered: a Sid is unique within its policy)
      expect(roleStatements(f.stack, r)).toEqual([
        {
          Sid: 'IdempotentEventFlowOutboxRelay',
          Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          Effect: 'Allow',
          Resource: resolve(f.outboxTable.tableStreamArn),
        },
        // no resource type: IAM authorizes ListStreams on "*" only (relay-permissions.test.ts evaluates it)
        { Sid: 'IdempotentEventFlowOutboxRelay2', Action: 'dynamodb:ListStreams', Effect: 'Allow', Resource: '*' },
        { Sid: 'IdempotentEventFlowOutboxRelay3', Action: 'sns:Publish', Effect: 'Allow', Resource: resolve(f.topic.topicArn) },
        { Sid: 'IdempotentEventFlowOutboxRelay4', Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Condition: viaService(f.stack, f.topicKey, 'sns'), Effect: 'Allow', Resource: resolve(f.topicKey.keyArn) },
        { Sid: 'IdempotentEventFlowOutboxRelay5', Action: 'sqs:SendMessage', Effect: 'Allow', Resource: resolve(r.deadLetterQueue.queueArn) },
        { Sid: 'IdempotentEventFlowOutboxRelay6', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Effect: 'Allow', Resource: resolve(r.logGroup.logGroupArn) },
      ]);
    });

    test('has no wildcard resource in any statement but ListStreams, which has no resource type', () => {
      const f = fixture({ tableKey: true });
      const r = relay(f, { deadLetterQueueEncryptionKey: new kms.Key(f.stack, 'DlqKey') });
      const statements = roleStatements(f.stack, r).filter((statement) => statement.Action !== 'dynamodb:ListStreams');
      const resources = statements.flatMap((statement) => [statement.Resource].flat());
      expect(JSON.stringify(resources)).not.toMatch(/\*/);
    });

    test('may decrypt the stream with the table key when the table has one', () => {
      const f = fixture({ tableKey: true });
      const r = relay(f);
      expect(roleStatements(f.stack, r)).toContainEqual({
        Sid: RELAY_SID,
        Action: 'kms:Decrypt',
        Condition: viaService(f.stack, f.outboxTable.encryptionKey!, 'dynamodb'),
        Effect: 'Allow',
        Resource: f.stack.resolve(f.outboxTable.encryptionKey!.keyArn),
      });
    });

    test('may use the dead-letter queue key when given one', () => {
      const f = fixture();
      const key = new kms.Key(f.stack, 'DlqKey');
      const r = relay(f, { deadLetterQueueEncryptionKey: key });
      expect(roleStatements(f.stack, r)).toContainEqual({
        Sid: RELAY_SID,
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Condition: viaService(f.stack, key, 'sqs'),
        Effect: 'Allow',
        Resource: f.stack.resolve(key.keyArn),
      });
    });

    test('reads the stream ARN of an imported outbox table, and only it', () => {
      const f = fixture();
      const table = dynamodb.Table.fromTableName(f.stack, 'Orders', 'Orders');
      const outboxTable = OutboxTable.fromTableAttributes(f.stack, 'Existing', { table, tableStreamArn: STREAM_ARN, partitionKeyName: 'PK' });
      const r = relay(f, { outboxTable });
      expect(pipeProperties(f.stack).Source).toBe(STREAM_ARN);
      const streamStatements = roleStatements(f.stack, r).filter((s) => JSON.stringify(s.Action).includes('dynamodb:'));
      expect(streamStatements).toEqual([
        expect.objectContaining({ Resource: STREAM_ARN }),
        { Sid: RELAY_SID, Action: 'dynamodb:ListStreams', Effect: 'Allow', Resource: '*' },
      ]);
    });

    test('may use the key of a topic imported with its key ARN', () => {
      const f = fixture();
      const topic = sns.Topic.fromTopicAttributes(f.stack, 'Imported', {
        topicArn: 'arn:aws:sns:eu-west-1:111111111111:events',
        keyArn: 'arn:aws:kms:eu-west-1:111111111111:key/topic-key',
      });
      const r = relay(f, { topic });
      expect(roleStatements(f.stack, r)).toEqual(
        expect.arrayContaining([
          { Sid: RELAY_SID, Action: 'sns:Publish', Effect: 'Allow', Resource: 'arn:aws:sns:eu-west-1:111111111111:events' },
          {
            Sid: RELAY_SID,
            Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
            Condition: { StringEquals: { 'kms:ViaService': 'sns.eu-west-1.amazonaws.com' } },
            Effect: 'Allow',
            Resource: 'arn:aws:kms:eu-west-1:111111111111:key/topic-key',
          },
        ]),
      );
    });
  });

  describe('logs', () => {
    test('go to the child "LogGroup" at level ERROR, without execution data, by default', () => {
      const f = fixture();
      const r = relay(f);
      expect(r.node.findChild('LogGroup')).toBe(r.logGroup);
      expect(pipeProperties(f.stack).LogConfiguration).toEqual({
        CloudwatchLogsLogDestination: { LogGroupArn: f.stack.resolve(r.logGroup.logGroupArn) },
        Level: 'ERROR',
      });
    });

    test('use the log level it is given', () => {
      const f = fixture();
      relay(f, { logLevel: OutboxRelayLogLevel.TRACE });
      expect(pipeProperties(f.stack).LogConfiguration.Level).toBe('TRACE');
    });

    test('never include execution data (payloads) unless asked to', () => {
      const f = fixture();
      relay(f, { logLevel: OutboxRelayLogLevel.TRACE });
      expect(pipeProperties(f.stack).LogConfiguration).not.toHaveProperty('IncludeExecutionData');
    });

    test('include execution data when asked to', () => {
      const f = fixture();
      relay(f, { includeExecutionData: true });
      expect(pipeProperties(f.stack).LogConfiguration.IncludeExecutionData).toEqual(['ALL']);
    });

    test('are kept 1 year by default', () => {
      const f = fixture();
      relay(f);
      Template.fromStack(f.stack).hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
    });

    test('are kept as long as logRetention says', () => {
      const f = fixture();
      relay(f, { logRetention: logs.RetentionDays.ONE_MONTH });
      Template.fromStack(f.stack).hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    });

    test('are retained by default', () => {
      const f = fixture();
      relay(f);
      Template.fromStack(f.stack).hasResource('AWS::Logs::LogGroup', { DeletionPolicy: 'Retain' });
    });
  });

  describe('metrics', () => {
    test('metric() is in AWS/EventBridge/Pipes with the PipeName dimension', () => {
      const f = fixture();
      const r = relay(f);
      const metric = r.metric('ExecutionThrottled', { period: Duration.minutes(1) });
      expect(metric.namespace).toBe('AWS/EventBridge/Pipes');
      expect(metric.metricName).toBe('ExecutionThrottled');
      expect(f.stack.resolve(metric.dimensions)).toEqual({ PipeName: f.stack.resolve(r.pipeName) });
      expect(metric.period.toMinutes()).toBe(1);
    });

    test('metricExecutionFailed() sums ExecutionFailed', () => {
      const f = fixture();
      const metric = relay(f).metricExecutionFailed();
      expect([metric.metricName, metric.statistic]).toEqual(['ExecutionFailed', cloudwatch.Stats.SUM]);
    });

    test('metricExecutionPartiallyFailed() sums ExecutionPartiallyFailed', () => {
      const f = fixture();
      const metric = relay(f).metricExecutionPartiallyFailed();
      expect([metric.metricName, metric.statistic]).toEqual(['ExecutionPartiallyFailed', cloudwatch.Stats.SUM]);
    });

    test('named metrics take overrides', () => {
      const f = fixture();
      const metric = relay(f).metricExecutionFailed({ statistic: cloudwatch.Stats.MAXIMUM });
      expect(metric.statistic).toBe(cloudwatch.Stats.MAXIMUM);
    });
  });

  describe('validation', () => {
    test.each<[string, Partial<OutboxRelayProps>, RegExp]>([
      ['batchSize is below 1', { batchSize: 0 }, /OutboxRelay 'Relay': batchSize must be 1 or more, but 0 was provided/],
      ['batchSize is above 10', { batchSize: 11 }, /batchSize must be 10 or less, but 11 was provided/],
      ['batchSize is not whole', { batchSize: 2.5 }, /batchSize must be a whole number, but 2.5 was provided/],
      ['maximumRetryAttempts is below 0', { maximumRetryAttempts: -1 }, /maximumRetryAttempts must be 0 or more, but -1 was provided/],
      ['maximumRetryAttempts is above 185', { maximumRetryAttempts: 186 }, /maximumRetryAttempts must be 185 or less, but 186 was provided/],
      ['maximumRecordAge is below 1 minute', { maximumRecordAge: Duration.seconds(59) }, /maximumRecordAge must be 1 minute or more, but 59 seconds was provided/],
      ['maximumRecordAge is above 23 hours', { maximumRecordAge: Duration.hours(24) }, /maximumRecordAge must be 23 hours or less, but 1 day was provided/],
      ['parallelizationFactor is below 1', { parallelizationFactor: 0 }, /parallelizationFactor must be 1 or more, but 0 was provided/],
      ['parallelizationFactor is above 10', { parallelizationFactor: 11 }, /parallelizationFactor must be 10 or less, but 11 was provided/],
      ['pipeName has invalid characters', { pipeName: 'orders relay' }, /pipeName must be 1 to 64 of .*, but 'orders relay' was provided/],
    ])('fails if %s', (_case, props, message) => {
      const f = fixture();
      expect(() => relay(f, props)).toThrow(message);
    });

    test.each<[string, Partial<OutboxRelayProps>]>([
      ['batchSize 1', { batchSize: 1 }],
      ['batchSize 10', { batchSize: 10 }],
      ['maximumRetryAttempts 0', { maximumRetryAttempts: 0 }],
      ['maximumRetryAttempts 185', { maximumRetryAttempts: 185 }],
      ['maximumRecordAge 1 minute', { maximumRecordAge: Duration.minutes(1) }],
      ['maximumRecordAge 23 hours', { maximumRecordAge: Duration.hours(23) }],
      ['parallelizationFactor 1', { parallelizationFactor: 1 }],
      ['parallelizationFactor 10', { parallelizationFactor: 10 }],
    ])('accepts the bound %s', (_case, props) => {
      const f = fixture();
      expect(() => relay(f, props)).not.toThrow();
    });

    test('fails if deadLetterQueue and deadLetterQueueEncryptionKey are both given', () => {
      const f = fixture();
      const props = { deadLetterQueue: new sqs.Queue(f.stack, 'MyDlq'), deadLetterQueueEncryptionKey: new kms.Key(f.stack, 'DlqKey') };
      expect(() => relay(f, props)).toThrow(/deadLetterQueueEncryptionKey only applies to the dead-letter queue the relay creates/);
    });

    test('fails if the topic is a FIFO topic', () => {
      const f = fixture();
      const topic = new sns.Topic(f.stack, 'Fifo', { fifo: true, topicName: 'events.fifo' });
      expect(() => relay(f, { topic })).toThrow(/topic must be a standard SNS topic, because EventBridge Pipes can not target FIFO topics/);
    });
  });
});
