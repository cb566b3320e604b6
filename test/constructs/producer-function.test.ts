import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { describe, expect, test } from 'vitest';
import { loadProducerConfig } from '../../lambda/config';
import { ENV } from '../../lambda/contract/environment';
import { type IOutboxTable, OutboxTable, ProducerFunction, type ProducerFunctionProps } from '../../lib/outbox';
import { HANDLER_ENTRY, nagFindings, newStack } from '../fixtures/construct-test-kit';
import { viaService } from '../fixtures/kms-conditions';

/** The producer runtime's variables, which the construct sets and the user may not. */
const PRODUCER_ENV_KEYS = [
  ENV.OUTBOX_TABLE_NAME,
  ENV.OUTBOX_PARTITION_KEY_NAME,
  ENV.OUTBOX_SORT_KEY_NAME,
  ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME,
  ENV.OUTBOX_EVENT_RETENTION_SECONDS,
  ENV.EVENT_SOURCE,
  ENV.MAX_EVENT_BYTES,
];

interface Fixture {
  readonly stack: Stack;
  readonly outboxTable: IOutboxTable;
}

function fixture(outboxTable?: (stack: Stack) => IOutboxTable): Fixture {
  const stack = newStack();
  return { stack, outboxTable: outboxTable ? outboxTable(stack) : new OutboxTable(stack, 'Outbox') };
}

function create(f: Fixture, props: Partial<ProducerFunctionProps> = {}, id = 'PlaceOrder'): ProducerFunction {
  return new ProducerFunction(f.stack, id, { outboxTable: f.outboxTable, entry: HANDLER_ENTRY, ...props });
}

function synth(props: Partial<ProducerFunctionProps> = {}): { f: Fixture; producer: ProducerFunction; template: Template } {
  const f = fixture();
  const producer = create(f, props);
  return { f, producer, template: Template.fromStack(f.stack) };
}

function r(stack: Stack, value: unknown): unknown {
  return stack.resolve(value);
}

function functionProperties(template: Template): Record<string, any> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function'));
  expect(functions).toHaveLength(1);
  return (functions[0] as { Properties: Record<string, any> }).Properties;
}

/** The statements of the producer role's default policy. */
function producerPolicyStatements(template: Template): unknown[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy'));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement;
}

describe('ProducerFunction: environment', () => {
  test('sets exactly the outbox contract of the runtime', () => {
    // WHEN
    const { f, template } = synth();
    // THEN
    const variables = functionProperties(template).Environment.Variables;
    expect(variables).toEqual({
      [ENV.OUTBOX_TABLE_NAME]: r(f.stack, f.outboxTable.table.tableName),
      [ENV.OUTBOX_PARTITION_KEY_NAME]: 'pk',
      [ENV.OUTBOX_SORT_KEY_NAME]: 'sk',
      [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: 'expiresAt',
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: String(7 * 86400),
      [ENV.EVENT_SOURCE]: '/TestStack/Outbox',
      [ENV.MAX_EVENT_BYTES]: '262144',
    });
    expect(variables).toEqual(r(f.stack, f.outboxTable.producerEnvironment));
  });

  test('sets an environment the producer runtime loads', () => {
    // WHEN
    const { template } = synth();
    // THEN the runtime reads every value it needs from what the construct set (the table name is a deploy-time Ref)
    const variables = functionProperties(template).Environment.Variables as Record<string, unknown>;
    const deployed = { ...variables, [ENV.OUTBOX_TABLE_NAME]: 'Outbox-1234' } as Record<string, string>;
    expect(loadProducerConfig(deployed)).toEqual({
      outboxTableName: 'Outbox-1234',
      partitionKeyName: 'pk',
      sortKeyName: 'sk',
      timeToLiveAttributeName: 'expiresAt',
      eventRetentionSeconds: 7 * 86400,
      eventSource: '/TestStack/Outbox',
      maxEventBytes: 262_144,
    });
  });

  test('leaves out the sort key and TTL variables for an outbox without them', () => {
    // GIVEN
    const f = fixture((stack) =>
      OutboxTable.fromTableAttributes(stack, 'Outbox', {
        table: new dynamodb.Table(stack, 'Table', {
          partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
          stream: dynamodb.StreamViewType.NEW_IMAGE,
        }),
        partitionKeyName: 'PK',
        eventSource: 'urn:orders',
        eventRetention: Duration.days(2),
      }),
    );
    // WHEN
    create(f);
    // THEN
    expect(functionProperties(Template.fromStack(f.stack)).Environment.Variables).toEqual({
      [ENV.OUTBOX_TABLE_NAME]: r(f.stack, f.outboxTable.table.tableName),
      [ENV.OUTBOX_PARTITION_KEY_NAME]: 'PK',
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: String(2 * 86400),
      [ENV.EVENT_SOURCE]: 'urn:orders',
      [ENV.MAX_EVENT_BYTES]: '262144',
    });
  });

  test('adds the given variables next to the outbox contract', () => {
    // WHEN
    const { template } = synth({ environment: { ORDERS_TABLE_NAME: 'orders', STAGE: 'prod' } });
    // THEN
    const variables = functionProperties(template).Environment.Variables;
    expect(variables).toMatchObject({ ORDERS_TABLE_NAME: 'orders', STAGE: 'prod', [ENV.OUTBOX_PARTITION_KEY_NAME]: 'pk' });
    expect(Object.keys(variables)).toHaveLength(PRODUCER_ENV_KEYS.length + 2);
  });
});

describe('ProducerFunction: hardening', () => {
  test('runs the handler on ARM64 Node.js 24 with JSON logs and active tracing, 30 s and 256 MiB by default', () => {
    // WHEN
    const { f, producer, template } = synth();
    // THEN
    expect(functionProperties(template)).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 30,
      MemorySize: 256,
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogFormat: 'JSON', LogGroup: r(f.stack, producer.logGroup.logGroupName) },
      Description: 'Producer appending events to TestStack/Outbox',
    });
  });

  test('passes the function settings to the function', () => {
    // WHEN
    const { template } = synth({ handler: 'placeOrder', timeout: Duration.seconds(10), memorySize: 1024 });
    // THEN
    expect(functionProperties(template)).toMatchObject({ Handler: 'index.placeOrder', Timeout: 10, MemorySize: 1024 });
  });

  test('uses a role of its own without AWS managed policies', () => {
    // WHEN
    const { f, producer, template } = synth();
    // THEN
    template.resourceCountIs('AWS::IAM::Role', 1);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      },
      ManagedPolicyArns: Match.absent(),
    });
    expect(functionProperties(template).Role).toEqual(r(f.stack, producer.role.roleArn));
    expect(producer.grantPrincipal).toBe(producer.role);
  });

  test('logs to its own log group, kept one year and retained by default', () => {
    // WHEN
    const { f, producer, template } = synth();
    // THEN
    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    template.hasResource('AWS::Logs::LogGroup', { Properties: { RetentionInDays: 365 }, DeletionPolicy: 'Retain' });
    expect(functionProperties(template).LoggingConfig.LogGroup).toEqual(r(f.stack, producer.logGroup.logGroupName));
    template.hasResourceProperties('AWS::IAM::Role', {
      Policies: [
        {
          PolicyName: 'Logs',
          PolicyDocument: {
            Statement: [
              { Sid: 'IdempotentEventFlowFunction', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Effect: 'Allow', Resource: r(f.stack, producer.logGroup.logGroupArn) },
            ],
          },
        },
      ],
    });
  });

  test('uses the given log retention and removal policy', () => {
    // WHEN
    const { template } = synth({ logRetention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    // THEN
    template.hasResource('AWS::Logs::LogGroup', { Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Delete' });
  });

  test('has no unacknowledged AwsSolutions or Serverless findings: LambdaDLQ is answered by the construct, with its reason', () => {
    // WHEN
    const { producer } = synth();
    // THEN a producer is invoked synchronously by the user's API: no asynchronous invocation to dead-letter
    expect(nagFindings(producer)).toEqual([]);
  });
});

describe('ProducerFunction: permissions', () => {
  test('may trace and append events to the outbox table, nothing else', () => {
    // WHEN
    const { f, template } = synth();
    // THEN
    expect(producerPolicyStatements(template)).toEqual([
      { Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Effect: 'Allow', Resource: '*' },
      { Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: r(f.stack, f.outboxTable.table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
    ]);
  });

  test("may use the outbox table's customer-managed key", () => {
    // GIVEN
    const f = fixture((stack) => new OutboxTable(stack, 'Outbox', { encryptionKey: new kms.Key(stack, 'Key') }));
    // WHEN
    create(f);
    // THEN
    expect(producerPolicyStatements(Template.fromStack(f.stack))).toContainEqual({
      Sid: 'IdempotentEventFlowGrantAppendEvents2',
      Action: ['kms:Encrypt', 'kms:Decrypt'],
      Condition: viaService(f.stack, f.outboxTable.encryptionKey!, 'dynamodb'),
      Effect: 'Allow',
      Resource: r(f.stack, f.outboxTable.encryptionKey!.keyArn),
    });
  });

  test('exposes the function errors metric', () => {
    // WHEN
    const { f, producer } = synth();
    // THEN
    const metric = producer.metricErrors();
    expect(metric.namespace).toBe('AWS/Lambda');
    expect(metric.metricName).toBe('Errors');
    expect(r(f.stack, metric.dimensions)).toEqual({ FunctionName: r(f.stack, producer.lambdaFunction.functionName) });
    expect(producer.lambdaFunction).toBeInstanceOf(lambda.Function);
  });
});

describe('ProducerFunction: validation', () => {
  const build = (props: Partial<ProducerFunctionProps>) => () => create(fixture(), props);

  test.each(PRODUCER_ENV_KEYS)('fails if environment sets %s', (key) => {
    expect(build({ environment: { [key]: 'x' } })).toThrow(
      new RegExp(`ProducerFunction 'PlaceOrder': environment must not set ${key} \\(the construct sets it for the runtime\\), but it was provided`),
    );
  });
  test('fails if handler is not an exported function name', () => {
    expect(build({ handler: 'my-handler' })).toThrow(
      /ProducerFunction 'PlaceOrder': handler must be the name of an exported function, but 'my-handler' was provided/,
    );
  });
  test('fails if timeout is above 15 minutes', () => {
    expect(build({ timeout: Duration.minutes(16) })).toThrow(/ProducerFunction 'PlaceOrder': timeout must be 15 minutes or less, but 16 minutes was provided/);
  });
  test('fails if timeout is below 1 second', () => {
    expect(build({ timeout: Duration.millis(500) })).toThrow(/ProducerFunction 'PlaceOrder': timeout must be 1 second or more, but 500 millis was provided/);
  });
  test('fails if memorySize is below 128', () => {
    expect(build({ memorySize: 64 })).toThrow(/ProducerFunction 'PlaceOrder': memorySize must be 128 or more, but 64 was provided/);
  });
  test('fails if memorySize is above 10240', () => {
    expect(build({ memorySize: 10241 })).toThrow(/ProducerFunction 'PlaceOrder': memorySize must be 10240 or less, but 10241 was provided/);
  });
  test('fails if memorySize is not a whole number', () => {
    expect(build({ memorySize: 256.5 })).toThrow(/ProducerFunction 'PlaceOrder': memorySize must be a whole number, but 256.5 was provided/);
  });
  test('accepts the bounds and non-contract variables', () => {
    expect(build({ handler: '$handler_1', timeout: Duration.seconds(1), memorySize: 128, environment: { STAGE: 'prod' } })).not.toThrow();
    expect(build({ timeout: Duration.minutes(15), memorySize: 10240 })).not.toThrow();
  });
});
