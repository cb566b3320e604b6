import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConsumerFunction, ConsumerFunctionProps, InboxTable, ProcessingMode } from '../../lib/consumer';
import { OutboxTable } from '../../lib/outbox';
import { ENV, PROCESSING_MODE } from '../../lambda/contract/environment';
import { HANDLER_ENTRY, nagFindings, newStack } from '../fixtures/construct-test-kit';
import { viaService } from '../fixtures/kms-conditions';

interface Fixture {
  readonly stack: Stack;
  readonly inbox: InboxTable;
  readonly deadLetterQueue: sqs.Queue;
}

function fixture(stack: Stack = newStack()): Fixture {
  return {
    stack,
    inbox: new InboxTable(stack, 'Inbox'),
    deadLetterQueue: new sqs.Queue(stack, 'DeadLetters', { encryption: sqs.QueueEncryption.SQS_MANAGED }),
  };
}

function create(f: Fixture, props: Partial<ConsumerFunctionProps> = {}): ConsumerFunction {
  return new ConsumerFunction(f.stack, 'Function', {
    entry: HANDLER_ENTRY,
    subscriberName: 'Billing',
    inboxTable: f.inbox,
    deadLetterQueue: f.deadLetterQueue,
    ...props,
  });
}

function synth(props: Partial<ConsumerFunctionProps> = {}): { f: Fixture; fn: ConsumerFunction; template: Template } {
  const f = fixture();
  const fn = create(f, props);
  return { f, fn, template: Template.fromStack(f.stack) };
}

function ref(stack: Stack, value: string): unknown {
  return stack.resolve(value);
}

/** The statements of the execution role's default policy (grants added after the role was created). */
function defaultPolicyStatements(template: Template): unknown[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy'));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement;
}

describe('ConsumerFunction: runtime settings', () => {
  test('runs on Node.js 24, the latest Node.js runtime aws-cdk-lib offers', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Runtime: 'nodejs24.x' });
    const nodeVersions = lambda.Runtime.ALL.filter((r) => r.family === lambda.RuntimeFamily.NODEJS)
      .map((r) => Number(/^nodejs(\d+)/.exec(r.name)?.[1] ?? 0));
    expect(Math.max(...nodeVersions)).toBe(24);
  });

  test('runs on ARM64', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Architectures: ['arm64'] });
  });

  test('times out after 30 seconds with 256 MiB by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Timeout: 30, MemorySize: 256 });
  });

  test('uses the given timeout and memory size', () => {
    // WHEN
    const { template } = synth({ timeout: Duration.minutes(2), memorySize: 1024 });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Timeout: 120, MemorySize: 1024 });
  });

  test('calls the exported function handler by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.handler' });
  });

  test('calls the given exported function', () => {
    // WHEN
    const { template } = synth({ handler: 'consume' });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.consume' });
  });

  test('traces with X-Ray by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
  });

  test('uses the given tracing mode', () => {
    // WHEN
    const { template } = synth({ tracing: lambda.Tracing.PASS_THROUGH });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'PassThrough' } });
  });

  test('logs in JSON without an application log level by default (the runtime then logs at INFO)', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: Match.absent() } });
  });

  test('sets the given application log level, which Lambda passes to the runtime as AWS_LAMBDA_LOG_LEVEL', () => {
    // WHEN
    const { template } = synth({ applicationLogLevel: lambda.ApplicationLogLevel.DEBUG });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: 'DEBUG' } });
  });

  test('names the function Resource, its role Role and its log group LogGroup', () => {
    // WHEN
    const { fn } = synth();
    // THEN
    expect(fn.node.defaultChild).toBe(fn.lambdaFunction);
    expect(fn.node.findChild('Role')).toBe(fn.role);
    expect(fn.node.findChild('LogGroup')).toBe(fn.logGroup);
  });
});

describe('ConsumerFunction: logging', () => {
  test('logs JSON to its own log group', () => {
    // WHEN
    const { f, fn, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogFormat: 'JSON', LogGroup: ref(f.stack, fn.logGroup.logGroupName) },
    });
  });

  test('keeps logs for one year and retains the log group by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResource('AWS::Logs::LogGroup', { Properties: { RetentionInDays: 365 }, DeletionPolicy: 'Retain' });
  });

  test('uses the given log retention and removal policy', () => {
    // WHEN
    const { template } = synth({ logRetention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    // THEN
    template.hasResource('AWS::Logs::LogGroup', { Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Delete' });
  });
});

describe('ConsumerFunction: role', () => {
  test('has no AWS managed policies', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourceCountIs('AWS::IAM::Role', 1);
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
  });

  test('may write only to its own log group', () => {
    // WHEN
    const { f, fn, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::IAM::Role', {
      Policies: [
        {
          PolicyName: 'Logs',
          PolicyDocument: {
            Statement: [
              { Sid: 'IdempotentEventFlowFunction', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Effect: 'Allow', Resource: ref(f.stack, fn.logGroup.logGroupArn) },
            ],
          },
        },
      ],
    });
  });

  test('may record messages in the inbox, send to the dead-letter queue and trace, nothing else', () => {
    // WHEN
    const { f, template } = synth();
    // THEN
    expect(defaultPolicyStatements(template)).toEqual([
      { Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Effect: 'Allow', Resource: '*' },
      { Sid: 'IdempotentEventFlowGrantRecordMessages', Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: ref(f.stack, f.inbox.tableArn) },
      { Sid: 'IdempotentEventFlowConsumerFunction', Action: 'sqs:SendMessage', Effect: 'Allow', Resource: ref(f.stack, f.deadLetterQueue.queueArn) },
    ]);
  });

  test('may encrypt for a KMS-encrypted dead-letter queue', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const f: Fixture = {
      stack,
      inbox: new InboxTable(stack, 'Inbox'),
      deadLetterQueue: new sqs.Queue(stack, 'DeadLetters', { encryptionMasterKey: key }),
    };
    // WHEN
    create(f);
    // THEN
    expect(defaultPolicyStatements(Template.fromStack(stack))).toContainEqual({
      Sid: 'IdempotentEventFlowConsumerFunction2',
      Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
      Condition: viaService(stack, key, 'sqs'),
      Effect: 'Allow',
      Resource: ref(stack, key.keyArn),
    });
  });

  test('has no permission on a queue when no dead-letter queue is given', () => {
    // GIVEN
    const f = fixture();
    // WHEN
    create(f, { deadLetterQueue: undefined, tracing: lambda.Tracing.DISABLED });
    // THEN
    expect(defaultPolicyStatements(Template.fromStack(f.stack))).toEqual([
      { Sid: 'IdempotentEventFlowGrantRecordMessages', Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: ref(f.stack, f.inbox.tableArn) },
    ]);
  });

  test('is a grantable whose grants land on its role', () => {
    // GIVEN
    const f = fixture();
    const fn = create(f);
    const orders = new dynamodb.Table(f.stack, 'Orders', { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING } });
    // WHEN
    orders.grantWriteData(fn);
    // THEN
    expect(fn.grantPrincipal).toBe(fn.role);
    Template.fromStack(f.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Resource: Match.arrayWith([ref(f.stack, orders.tableArn)]) })]) },
      Roles: [ref(f.stack, fn.role.roleName)],
    });
  });
});

describe('ConsumerFunction: environment', () => {
  test('carries exactly the runtime contract from ENV', () => {
    // WHEN
    const { f, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.exact({
          [ENV.SUBSCRIBER_NAME]: 'Billing',
          [ENV.PROCESSING_MODE]: PROCESSING_MODE.TRANSACTIONAL,
          [ENV.INBOX_TABLE_NAME]: ref(f.stack, f.inbox.tableName),
          [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(30 * 86400),
          [ENV.DEAD_LETTER_QUEUE_URL]: ref(f.stack, f.deadLetterQueue.queueUrl),
        }),
      },
    });
  });

  test('adds the user environment to the contract', () => {
    // WHEN
    const { template } = synth({ environment: { STAGE: 'prod' }, deduplicationWindow: Duration.days(20) });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { STAGE: 'prod', [ENV.SUBSCRIBER_NAME]: 'Billing', [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(20 * 86400) } },
    });
  });

  test('leaves out the dead-letter queue URL when no dead-letter queue is given', () => {
    // WHEN
    const { template } = synth({ deadLetterQueue: undefined });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.DEAD_LETTER_QUEUE_URL]: Match.absent() } },
    });
  });

  test('enables source maps in NODE_OPTIONS when they are bundled', () => {
    // WHEN
    const { template } = synth({ bundling: { sourceMap: true } });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps' } },
    });
  });

  test('keeps the user NODE_OPTIONS when enabling source maps', () => {
    // WHEN
    const { template } = synth({ bundling: { sourceMap: true }, environment: { NODE_OPTIONS: '--max-old-space-size=200' } });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps --max-old-space-size=200' } },
    });
  });
});

describe('ConsumerFunction: processing modes', () => {
  /** The function's environment variables. */
  function variables(template: Template): Record<string, unknown> {
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(1);
    return (functions[0] as { Properties: { Environment: { Variables: Record<string, unknown> } } }).Properties.Environment.Variables;
  }

  test('runs in transactional mode by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    expect(variables(template)[ENV.PROCESSING_MODE]).toBe('transactional');
  });

  test.each([
    [ProcessingMode.TRANSACTIONAL, PROCESSING_MODE.TRANSACTIONAL],
    [ProcessingMode.LEASE, PROCESSING_MODE.LEASE],
    [ProcessingMode.MULTI_STEP, PROCESSING_MODE.MULTI_STEP],
    [ProcessingMode.AGGREGATE, PROCESSING_MODE.AGGREGATE],
  ])('tells the runtime the mode %s as %s', (processingMode, runtimeName) => {
    // WHEN
    const { template } = synth(processingMode === ProcessingMode.AGGREGATE ? { processingMode, inboxTable: undefined } : { processingMode });
    // THEN
    expect(variables(template)[ENV.PROCESSING_MODE]).toBe(runtimeName);
  });

  test('sets no lease duration in transactional mode', () => {
    // WHEN
    const { template } = synth();
    // THEN
    expect(variables(template)).not.toHaveProperty(ENV.LEASE_DURATION_SECONDS);
  });

  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP])('leases for the function timeout by default in mode %s', (processingMode) => {
    // WHEN
    const { template } = synth({ processingMode, timeout: Duration.seconds(45) });
    // THEN
    expect(variables(template)[ENV.LEASE_DURATION_SECONDS]).toBe('45');
  });

  test('leases for the default timeout of 30 seconds', () => {
    // WHEN
    const { template } = synth({ processingMode: ProcessingMode.LEASE });
    // THEN
    expect(variables(template)[ENV.LEASE_DURATION_SECONDS]).toBe('30');
  });

  test('leases for the given duration in whole seconds', () => {
    // WHEN
    const { template } = synth({ processingMode: ProcessingMode.MULTI_STEP, leaseDuration: Duration.minutes(2) });
    // THEN
    expect(variables(template)[ENV.LEASE_DURATION_SECONDS]).toBe('120');
  });

  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP])('keeps the inbox and its window in mode %s', (processingMode) => {
    // WHEN
    const { f, template } = synth({ processingMode });
    // THEN
    expect(variables(template)).toMatchObject({
      [ENV.INBOX_TABLE_NAME]: ref(f.stack, f.inbox.tableName),
      [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(30 * 86400),
    });
  });

  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP])(
    'may batch-get, get, put and update processing records in the inbox in mode %s, nothing more on it',
    (processingMode) => {
      // WHEN
      const { f, template } = synth({ processingMode });
      // THEN
      expect(defaultPolicyStatements(template)).toEqual([
        { Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Effect: 'Allow', Resource: '*' },
        { Sid: 'IdempotentEventFlowGrantProcessingRecords', Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], Effect: 'Allow', Resource: ref(f.stack, f.inbox.tableArn) },
        { Sid: 'IdempotentEventFlowConsumerFunction', Action: 'sqs:SendMessage', Effect: 'Allow', Resource: ref(f.stack, f.deadLetterQueue.queueArn) },
      ]);
    },
  );

  test('has neither inbox variables nor a lease in aggregate mode', () => {
    // WHEN
    const { f, template } = synth({ processingMode: ProcessingMode.AGGREGATE, inboxTable: undefined });
    // THEN
    expect(variables(template)).toEqual({
      [ENV.SUBSCRIBER_NAME]: 'Billing',
      [ENV.PROCESSING_MODE]: PROCESSING_MODE.AGGREGATE,
      [ENV.DEAD_LETTER_QUEUE_URL]: ref(f.stack, f.deadLetterQueue.queueUrl),
    });
  });

  test('has no DynamoDB permission in aggregate mode', () => {
    // WHEN
    const { f, template } = synth({ processingMode: ProcessingMode.AGGREGATE, inboxTable: undefined });
    // THEN
    expect(defaultPolicyStatements(template)).toEqual([
      { Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Effect: 'Allow', Resource: '*' },
      { Sid: 'IdempotentEventFlowConsumerFunction', Action: 'sqs:SendMessage', Effect: 'Allow', Resource: ref(f.stack, f.deadLetterQueue.queueArn) },
    ]);
  });

  test('warns if the lease is shorter than the timeout', () => {
    // GIVEN
    const f = fixture();
    // WHEN
    create(f, { processingMode: ProcessingMode.LEASE, timeout: Duration.minutes(1), leaseDuration: Duration.seconds(50) });
    // THEN
    Annotations.fromStack(f.stack).hasWarning(
      '/TestStack/Function',
      Match.stringLikeRegexp("leaseDuration \\(50 seconds\\) is shorter than timeout \\(1 minute\\)"),
    );
  });

  test.each([Duration.minutes(1), Duration.minutes(2), undefined])('does not warn with a lease of %s and a timeout of 1 minute', (leaseDuration) => {
    // GIVEN
    const f = fixture();
    // WHEN
    create(f, { processingMode: ProcessingMode.LEASE, timeout: Duration.minutes(1), leaseDuration });
    // THEN
    Annotations.fromStack(f.stack).hasNoWarning('*', Match.anyValue());
  });
});

describe('ConsumerFunction: publishing events', () => {
  function publishing(props: Partial<ConsumerFunctionProps> = {}): { f: Fixture; fn: ConsumerFunction; outbox: OutboxTable; template: Template } {
    const f = fixture();
    const outbox = new OutboxTable(f.stack, 'Outbox');
    const fn = create(f, { outboxTable: outbox, ...props });
    return { f, fn, outbox, template: Template.fromStack(f.stack) };
  }

  test('does not publish by default: no producer environment', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.OUTBOX_TABLE_NAME]: Match.absent(), [ENV.EVENT_SOURCE]: Match.absent() } },
    });
  });

  test('adds the outbox producer environment', () => {
    // WHEN
    const { f, outbox, template } = publishing();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.SUBSCRIBER_NAME]: 'Billing', ...(f.stack.resolve(outbox.producerEnvironment) as object) } },
    });
  });

  test('may append events to the outbox', () => {
    // WHEN
    const { f, outbox, template } = publishing();
    // THEN
    expect(defaultPolicyStatements(template)).toContainEqual({ Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: ref(f.stack, outbox.table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } });
  });

  test('uses the given event source instead of the outbox table one', () => {
    // WHEN
    const { template } = publishing({ eventSource: 'urn:example:billing' });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: { [ENV.EVENT_SOURCE]: 'urn:example:billing' } } });
  });

  test('fails if the environment sets a producer variable', () => {
    expect(() => publishing({ environment: { [ENV.OUTBOX_TABLE_NAME]: 'other' } })).toThrow(
      /ConsumerFunction 'Function': environment must not set IEF_OUTBOX_TABLE_NAME \(the construct sets it for the runtime\)/,
    );
  });

  test('fails if eventSource is given without outboxTable', () => {
    expect(() => create(fixture(), { eventSource: 'urn:example:billing' })).toThrow(
      /ConsumerFunction 'Function': eventSource can only be used with outboxTable .*but no outboxTable was provided/,
    );
  });

  test('fails if eventSource has whitespace', () => {
    expect(() => publishing({ eventSource: 'urn:example billing' })).toThrow(
      /ConsumerFunction 'Function': eventSource must be a non-empty URI-reference without whitespace, but 'urn:example billing' was provided/,
    );
  });
});

describe('ConsumerFunction: metrics', () => {
  test('metricErrors is the function Errors metric', () => {
    // GIVEN
    const { f, fn } = synth();
    // WHEN
    const metric = fn.metricErrors();
    // THEN
    expect(metric.namespace).toBe('AWS/Lambda');
    expect(metric.metricName).toBe('Errors');
    expect(f.stack.resolve(metric.dimensions)).toEqual({ FunctionName: ref(f.stack, fn.lambdaFunction.functionName) });
  });

  test('metricThrottles and metricDuration are the function metrics', () => {
    // GIVEN
    const { fn } = synth();
    // THEN
    expect(fn.metricThrottles().metricName).toBe('Throttles');
    expect(fn.metricDuration().metricName).toBe('Duration');
  });
});

describe('ConsumerFunction: validation', () => {
  const build = (props: Partial<ConsumerFunctionProps>) => () => create(fixture(), props);

  test('fails if timeout is below 1 second', () => {
    expect(build({ timeout: Duration.millis(500) })).toThrow(/ConsumerFunction 'Function': timeout must be 1 second or more, but 500 millis was provided/);
  });
  test('fails if timeout is above 15 minutes', () => {
    expect(build({ timeout: Duration.minutes(16) })).toThrow(/timeout must be 15 minutes or less, but 16 minutes was provided/);
  });
  test('fails if memorySize is below 128', () => {
    expect(build({ memorySize: 127 })).toThrow(/memorySize must be 128 or more, but 127 was provided/);
  });
  test('fails if memorySize is above 10240', () => {
    expect(build({ memorySize: 10241 })).toThrow(/memorySize must be 10240 or less, but 10241 was provided/);
  });
  test('fails if memorySize is not a whole number', () => {
    expect(build({ memorySize: 256.5 })).toThrow(/memorySize must be a whole number, but 256.5 was provided/);
  });
  test('fails if subscriberName contains #, the inbox key separator', () => {
    expect(build({ subscriberName: 'Billing#1' })).toThrow(/subscriberName must be 1 to 64 letters, digits.*but 'Billing#1' was provided/);
  });
  test('fails if subscriberName is longer than 64 characters', () => {
    expect(build({ subscriberName: 'a'.repeat(65) })).toThrow(/subscriberName must be 1 to 64 letters/);
  });
  test('fails if subscriberName is empty', () => {
    expect(build({ subscriberName: '' })).toThrow(/subscriberName must be 1 to 64 letters.*but '' was provided/);
  });
  test('fails if handler is not an exported function name', () => {
    expect(build({ handler: 'my-handler' })).toThrow(/handler must be the name of an exported function, but 'my-handler' was provided/);
  });
  test("fails if handler names the file too ('index.handler'), saying to drop the file part", () => {
    expect(build({ handler: 'index.handler' })).toThrow(/handler must be the name of the exported function only, but 'index.handler' was provided; entry names the file, so drop the file part: handler: 'handler'/);
  });
  test('fails if deduplicationWindow is not a whole number of seconds', () => {
    expect(build({ deduplicationWindow: Duration.millis(86_400_500) })).toThrow(/deduplicationWindow must be a whole number of seconds/);
  });
  test('fails if the environment sets a runtime contract variable', () => {
    expect(build({ environment: { [ENV.INBOX_TABLE_NAME]: 'other' } })).toThrow(
      /environment must not set IEF_INBOX_TABLE_NAME \(the construct sets it for the runtime\)/,
    );
  });
  test('fails if the environment sets the processing mode', () => {
    expect(build({ environment: { [ENV.PROCESSING_MODE]: 'lease' } })).toThrow(/environment must not set IEF_PROCESSING_MODE/);
  });
  test('fails if the environment sets the lease duration', () => {
    expect(build({ environment: { [ENV.LEASE_DURATION_SECONDS]: '10' } })).toThrow(/environment must not set IEF_LEASE_DURATION_SECONDS/);
  });
  test('fails if inboxTable is missing in transactional mode', () => {
    expect(build({ inboxTable: undefined })).toThrow(
      /ConsumerFunction 'Function': inboxTable must be provided with processingMode ProcessingMode\.TRANSACTIONAL \(only ProcessingMode\.AGGREGATE has no inbox\), but none was provided/,
    );
  });
  test('fails if inboxTable is missing in lease mode', () => {
    expect(build({ inboxTable: undefined, processingMode: ProcessingMode.LEASE })).toThrow(
      /inboxTable must be provided with processingMode ProcessingMode\.LEASE/,
    );
  });
  test('fails if inboxTable is given in aggregate mode', () => {
    expect(build({ processingMode: ProcessingMode.AGGREGATE })).toThrow(
      /ConsumerFunction 'Function': inboxTable can not be used with processingMode ProcessingMode\.AGGREGATE \(.*has no inbox\), but an inbox table was provided/,
    );
  });
  test('fails if deduplicationWindow is given in aggregate mode', () => {
    expect(build({ processingMode: ProcessingMode.AGGREGATE, inboxTable: undefined, deduplicationWindow: Duration.days(20) })).toThrow(
      /ConsumerFunction 'Function': deduplicationWindow can not be used with processingMode ProcessingMode\.AGGREGATE .*but 20 days was provided/,
    );
  });
  test('fails if leaseDuration is given in transactional mode', () => {
    expect(build({ leaseDuration: Duration.seconds(30) })).toThrow(
      /ConsumerFunction 'Function': leaseDuration can only be used with processingMode ProcessingMode\.LEASE or ProcessingMode\.MULTI_STEP, but it was provided with ProcessingMode\.TRANSACTIONAL/,
    );
  });
  test('fails if leaseDuration is given in aggregate mode', () => {
    expect(build({ processingMode: ProcessingMode.AGGREGATE, inboxTable: undefined, leaseDuration: Duration.seconds(30) })).toThrow(
      /leaseDuration can only be used with .*but it was provided with ProcessingMode\.AGGREGATE/,
    );
  });
  test('fails if leaseDuration is below 1 second', () => {
    expect(build({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.millis(500) })).toThrow(
      /ConsumerFunction 'Function': leaseDuration must be 1 second or more, but 500 millis was provided/,
    );
  });
  test('fails if leaseDuration is not a whole number of seconds', () => {
    expect(build({ processingMode: ProcessingMode.MULTI_STEP, leaseDuration: Duration.millis(1500) })).toThrow(
      /ConsumerFunction 'Function': leaseDuration must be a whole number of seconds, but 1 second 500 millis was provided/,
    );
  });
  test('fails if processingMode is not a ProcessingMode', () => {
    expect(build({ processingMode: 'exactly-once' as ProcessingMode })).toThrow(
      /processingMode must be one of 'transactional', 'lease', 'multi-step', 'aggregate', but 'exactly-once' was provided/,
    );
  });
  test('accepts the bounds', () => {
    expect(build({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.seconds(1) })).not.toThrow();
    expect(build({ processingMode: ProcessingMode.AGGREGATE, inboxTable: undefined })).not.toThrow();
    expect(build({ timeout: Duration.seconds(1), memorySize: 128, subscriberName: 'a'.repeat(64) })).not.toThrow();
    expect(build({ timeout: Duration.minutes(15), memorySize: 10240, subscriberName: 'A-z_0.9' })).not.toThrow();
  });
});

describe('ConsumerFunction: cdk-nag', () => {
  test('has no unacknowledged AwsSolutions or Serverless findings', () => {
    // GIVEN
    const { fn } = synth();
    // THEN
    expect(nagFindings(fn)).toEqual([]);
  });
});

describe('ConsumerFunction: bundling', () => {
  test('bundles the handler and the AWS SDK with the local esbuild', () => {
    // GIVEN an app that bundles (no bundling-stacks context), writing to a fresh directory
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'consumer-function-bundling-'));
    try {
      const app = new App({ outdir, builtinCloudFormationValidation: false });
      const stack = new Stack(app, 'BundlingStack');
      const fn = create(fixture(stack));
      // WHEN
      const assembly = app.synth();
      // THEN the function's code asset is a directory with the bundled index.js
      const code = Template.fromStack(stack).findResources('AWS::Lambda::Function')[
        stack.getLogicalId(fn.lambdaFunction.node.defaultChild as lambda.CfnFunction)
      ].Properties.Code;
      const assetHash = String(code.S3Key).replace(/\.zip$/, '');
      const bundle = fs.readFileSync(path.join(assembly.directory, `asset.${assetHash}`, 'index.js'), 'utf8');
      // The SDK client is inside the bundle, not required from the Lambda runtime.
      expect(bundle).toContain('dynamodb');
      expect(bundle).not.toMatch(/require\(["']@aws-sdk\/client-dynamodb["']\)/);
      // Minified by default: the handler's local names are mangled.
      expect(bundle).toContain('config.region()');
      expect(bundle).not.toContain('client.config.region()');
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  });
});
