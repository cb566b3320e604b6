/**
 * The ordered path's constructs: OrderedRelay (Pipe -> SQS FIFO -> fan-out -> SNS FIFO) and OrderedSubscriber (its own
 * SQS FIFO queue on the topic, the consumer function). Template assertions of what order rests on, secure defaults,
 * least privilege, refusals, and cdk-nag's AwsSolutions and Serverless packs.
 */
import * as path from 'node:path';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, test } from 'vitest';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import * as logs from 'aws-cdk-lib/aws-logs';
import { OutboxRelayLogLevel, OutboxTable } from '../../lib/outbox';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');

function orderedStack(stack: Stack, relayProps: Partial<ConstructorParameters<typeof OrderedRelay>[2]> = {}) {
  const outboxTable = new OutboxTable(stack, 'Outbox');
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable, ...relayProps });
  const subscriber = new OrderedSubscriber(stack, 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER });
  return { outboxTable, relay, subscriber };
}

describe('OrderedRelay and OrderedSubscriber', () => {
  const stack = new Stack(new App(), 'Stack');
  orderedStack(stack, { archiveRetentionDays: 30 });
  const template = Template.fromStack(stack);

  test('the pipe sends ordered head items to the FIFO relay queue: group = the aggregate attribute, deduplication id = the event id, parallelization 1, one record at a time', () => {
    template.hasResourceProperties('AWS::Pipes::Pipe', {
      SourceParameters: {
        FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { iefRecordType: { S: ['OrderedOutboxHead.v1'] } } } }) }] },
        DynamoDBStreamParameters: Match.objectLike({ ParallelizationFactor: 1, BatchSize: 1, StartingPosition: 'TRIM_HORIZON' }),
      },
      TargetParameters: {
        InputTemplate: '<$.dynamodb.NewImage.iefEnvelope.S>',
        SqsQueueParameters: { MessageGroupId: '$.dynamodb.NewImage.iefAggregateId.S', MessageDeduplicationId: '$.dynamodb.NewImage.iefEventId.S' },
      },
    });
  });

  test('the topic is SNS FIFO, KMS-encrypted, TLS-only, with the archive asked for; the queues are FIFO, KMS-encrypted, TLS-only, with FIFO dead-letter queues', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { FifoTopic: true, ContentBasedDeduplication: false, KmsMasterKeyId: Match.anyValue(), ArchivePolicy: { MessageRetentionPeriod: 30 } });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 'sns:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const queues = Object.values(template.findResources('AWS::SQS::Queue'));
    const fifo = queues.filter((queue) => queue.Properties.FifoQueue === true);
    expect(fifo).toHaveLength(4); // relay queue + its DLQ, subscriber queue + its DLQ
    for (const queue of queues) expect(queue.Properties.KmsMasterKeyId).toBeDefined();
    const withRedrive = fifo.filter((queue) => queue.Properties.RedrivePolicy !== undefined);
    expect(withRedrive.map((queue) => queue.Properties.RedrivePolicy.maxReceiveCount)).toEqual([5, 5]);
    expect(Object.values(template.findResources('AWS::SQS::QueuePolicy')).length).toBeGreaterThanOrEqual(4);
  });

  test('the subscriber subscribes its FIFO queue with raw delivery and a FIFO dead-letter queue', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'sqs', RawMessageDelivery: true, RedrivePolicy: { deadLetterTargetArn: Match.anyValue() } });
  });

  test('the fan-out function may publish to the topic only, and the pipe may send to its two queues only (no wildcard but ListStreams)', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>);
    const publish = policies.filter((statement) => statement.Action === 'sns:Publish');
    expect(publish).toHaveLength(1);
    expect(JSON.stringify(publish[0]?.Resource)).toContain('Topic');
    // X-Ray's PutTraceSegments has no resource type (tracing is on for every function)
    const wildcards = policies.filter((statement) => statement.Resource === '*' && !JSON.stringify(statement.Action).includes('xray:'));
    expect(wildcards.map((statement) => statement.Action)).toEqual(['dynamodb:ListStreams']);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionResponseTypes: ['ReportBatchItemFailures'], BatchSize: 10 });
  });

  test('the ordered consumer runs in transactional mode with its inbox table and dead-letter queue', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ IEF_SUBSCRIBER_NAME: 'Shipping', IEF_PROCESSING_MODE: 'transactional', IEF_INBOX_TABLE_NAME: Match.anyValue(), IEF_DEAD_LETTER_QUEUE_URL: Match.anyValue() }) },
    });
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ IEF_ORDERED_TOPIC_ARN: Match.anyValue() }) } });
  });

  test("alarms: the subscriber dead-letter queue and function errors, the relay and pipe dead-letter queues and the pipe's failed executions, each at the first one; the oldest message at 5 minutes; a held aggregate on the runtime's SequenceGaps and the function's Errors (metric math); both FIFO dead-letter queues' letters about to expire", () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(9);
    for (const alarm of alarms) expect(alarm.Properties).toMatchObject({ ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    // a metric-math alarm names its metrics in Metrics (review ro13, RO13-6: HeldAggregate)
    const metricsOf = (properties: { MetricName?: string; Metrics?: Array<{ MetricStat?: { Metric: { MetricName: string } } }> }): string =>
      properties.MetricName ?? (properties.Metrics ?? []).flatMap((query) => (query.MetricStat === undefined ? [] : [query.MetricStat.Metric.MetricName])).sort().join('+');
    const thresholds = alarms.map((alarm) => `${metricsOf(alarm.Properties)}>=${alarm.Properties.Threshold} x${alarm.Properties.EvaluationPeriods}`).sort();
    expect(thresholds).toEqual([
      'ApproximateAgeOfOldestMessage>=1036800 x1',
      'ApproximateAgeOfOldestMessage>=1036800 x1',
      'ApproximateAgeOfOldestMessage>=300 x1',
      // HeldAggregate: gaps and errors while the held message is received, the FIFO dead-letter queue's letters once it is dead-lettered (review ro14, RO14-4)
      'ApproximateNumberOfMessagesNotVisible+ApproximateNumberOfMessagesVisible+Errors+SequenceGaps>=1 x2',
      'ApproximateNumberOfMessagesVisible>=1 x1',
      'ApproximateNumberOfMessagesVisible>=1 x1',
      'ApproximateNumberOfMessagesVisible>=1 x1',
      'Errors>=1 x1',
      'ExecutionFailed>=1 x1',
    ]);
  });

  test("grantAppendOrderedEvents gives a producer what OrderedOutbox does on the outbox table, and nothing wider: PutItem (head and history items), and GetItem (the consistent read of the aggregate's head) of head items only (dynamodb:LeadingKeys)", () => {
    const producerStack = new Stack(new App(), 'Producer');
    const { outboxTable, relay } = orderedStack(producerStack);
    const role = new iam.Role(producerStack, 'ProducerRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });

    relay.grantAppendOrderedEvents(role);

    const policies = Template.fromStack(producerStack).findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: producerStack.getLogicalId(role.node.defaultChild as iam.CfnRole) }] } });
    const statements = Object.values(policies).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown; Condition?: unknown }[],
    );
    const tableArn = producerStack.resolve(outboxTable.table.tableArn);
    const dynamoDbActions = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    expect(dynamoDbActions.map((statement) => ({ Action: statement.Action, Resource: statement.Resource, Condition: statement.Condition }))).toEqual([
      // every item the runtime puts is keyed OUTBOX#...: a shared table's business items stay unwritable (review r38, R38-7)
      { Action: 'dynamodb:PutItem', Resource: tableArn, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
      // the head items' partition key values are OUTBOX#AGGREGATE#<aggregateId> (lambda/contract/ordered-wire-format.ts):
      // an event's history item (OUTBOX#<eventId>) and every business item of a shared table stay unreadable
      { Action: 'dynamodb:GetItem', Resource: tableArn, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#AGGREGATE#*'] } } },
    ]);
  });

  test("logEncryptionKey encrypts the relay's log groups (the pipe's and the fan-out function's) with the key, whose policy lets CloudWatch Logs use it", () => {
    const keyStack = new Stack(new App(), 'Keyed');
    const logEncryptionKey = new kms.Key(keyStack, 'LogsKey', { enableKeyRotation: true });
    orderedStack(keyStack, { logEncryptionKey });
    const keyed = Template.fromStack(keyStack);

    const keyArn = keyStack.resolve(logEncryptionKey.keyArn);
    const relayLogGroups = Object.entries(keyed.findResources('AWS::Logs::LogGroup')).filter(([logicalId]) => logicalId.startsWith('Ordered'));
    expect(relayLogGroups.map(([logicalId]) => logicalId)).toEqual([expect.stringMatching(/^OrderedPipeLogGroup/), expect.stringMatching(/^OrderedFanOutLogGroup/)]);
    for (const [, logGroup] of relayLogGroups) expect(logGroup.Properties.KmsKeyId).toEqual(keyArn);
    keyed.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'AllowCloudWatchLogsToEncryptLogGroupsOfThisAccount', Action: Match.arrayWith(['kms:Encrypt*', 'kms:Decrypt*']) })]) },
    });
  });

  test('refusals name the construct, the prop, the bound and the value', () => {
    const fresh = () => new Stack(new App(), 'Stack');
    expect(() => orderedStack(fresh(), { archiveRetentionDays: 400 })).toThrow(/OrderedRelay 'Ordered'.*archiveRetentionDays.*365.*400/);
    expect(() => orderedStack(fresh(), { maxReceiveCount: 0 })).toThrow(/OrderedRelay 'Ordered'.*maxReceiveCount.*0/);
    const other = fresh();
    const relay = new OrderedRelay(other, 'Ordered', { outboxTable: new OutboxTable(other, 'Outbox') });
    expect(() => new OrderedSubscriber(other, 'Billing', { relay, subscriberName: 'Billing', entry: ORDERED_HANDLER, batchSize: 11 })).toThrow(/OrderedSubscriber 'Billing'.*batchSize.*10.*11/);
  });

  test('cdk-nag AwsSolutions and Serverless packs find nothing', () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'ordered-nag-'));
    try {
      const app = new App({ outdir });
      orderedStack(new Stack(app, 'Stack'));
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
      let findings: string[] = [];
      try {
        app.synth();
      } catch {
        const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
          pluginReports: Array<{ violations: Array<{ ruleName: string; violatingConstructs: Array<{ constructPath: string }> }> }>;
        };
        findings = report.pluginReports.flatMap((plugin) => plugin.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} at ${c.constructPath}`)));
      }
      expect(findings).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('the ordered path is built by the standard builders', () => {
  test("the subscription waits for the queue policy that lets the ordered topic send (SNS must be allowed to send before it delivers), as the standard subscriber's does", () => {
    const stack = new Stack(new App(), 'Stack');
    const { relay, subscriber } = orderedStack(stack);
    const template = Template.fromStack(stack);
    const policies = template.findResources('AWS::SQS::QueuePolicy', { Properties: { Queues: [stack.resolve(subscriber.queue.queueUrl)] } });
    const [policyId] = Object.keys(policies);
    expect(policyId).toBeDefined();
    expect(policies[policyId!]!.Properties.PolicyDocument.Statement).toContainEqual({
      Action: 'sqs:SendMessage',
      Effect: 'Allow',
      Principal: { Service: 'sns.amazonaws.com' },
      Resource: stack.resolve(subscriber.queue.queueArn),
      Condition: { ArnEquals: { 'aws:SourceArn': stack.resolve(relay.topic.topicArn) } },
    });
    template.hasResource('AWS::SNS::Subscription', { DependsOn: Match.arrayWith([policyId]) });
  });

  test("the pipe's data at rest is encrypted with the relay's key, usable by the pipe's role only with this pipe's encryption context", () => {
    const stack = new Stack(new App(), 'Stack');
    const { relay } = orderedStack(stack);
    const template = Template.fromStack(stack);
    const keyArn = stack.resolve(relay.encryptionKey.keyArn);
    template.hasResourceProperties('AWS::Pipes::Pipe', { KmsKeyIdentifier: keyArn });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['kms:GenerateDataKey', 'kms:Decrypt'], Resource: keyArn, Condition: { ArnEquals: { 'kms:EncryptionContext:aws:pipes:arn': Match.anyValue() } } }),
        ]),
      },
    });
  });

  test("logLevel and logRetention set the pipe's log level and its log group's retention (ERROR and one year by default)", () => {
    const defaults = new Stack(new App(), 'Stack');
    orderedStack(defaults);
    Template.fromStack(defaults).hasResourceProperties('AWS::Pipes::Pipe', { LogConfiguration: Match.objectLike({ Level: 'ERROR' }) });
    const tuned = new Stack(new App(), 'Stack');
    const { relay } = orderedStack(tuned, { logLevel: OutboxRelayLogLevel.INFO, logRetention: logs.RetentionDays.ONE_MONTH });
    const template = Template.fromStack(tuned);
    template.hasResourceProperties('AWS::Pipes::Pipe', { LogConfiguration: Match.objectLike({ Level: 'INFO' }) });
    template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: Match.absent(), RetentionInDays: 30 });
    expect(relay.pipeLogGroup).toBeDefined();
  });
});
