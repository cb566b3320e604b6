import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveEnvironment } from '../../../simulator/model/intrinsics';
import { readAssembly, StackSelectionError } from '../../../simulator/model/read-assembly';
import { nodeFunction, writeAsset, writeAssembly } from './assembly-fixture';

const created: string[] = [];
afterEach(() => {
  for (const directory of created.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

/** Writes a one-stack assembly named `Shop` with these resources (and parameters), plus asset `asset.fn`. */
function shop(resources: Record<string, unknown>, parameters: Record<string, unknown> = {}): string {
  const directory = writeAssembly({ Shop: { template: { Parameters: parameters, Resources: resources } } });
  created.push(directory);
  writeAsset(directory, 'asset.fn');
  return directory;
}

const queueArn = (logicalId: string): unknown => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** The smallest flow: outbox table -> pipe -> topic -> subscription -> queue -> mapping -> function, all defaults. */
const MINIMAL_FLOW = {
  Outbox: {
    Type: 'AWS::DynamoDB::Table',
    Properties: {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
    },
  },
  Relay: {
    Type: 'AWS::Pipes::Pipe',
    Properties: {
      Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] },
      Target: { Ref: 'Topic' },
      RoleArn: 'arn:aws:iam::123456789012:role/relay',
      SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'LATEST' } },
    },
  },
  Topic: { Type: 'AWS::SNS::Topic' },
  Subscription: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: queueArn('Queue') } },
  Queue: { Type: 'AWS::SQS::Queue' },
  Mapping: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: queueArn('Queue'), FunctionName: { Ref: 'Consumer' } } },
  Consumer: nodeFunction('asset.fn'),
};

describe('readAssembly of hand-written templates', () => {
  it('applies the CloudFormation defaults', () => {
    const directory = shop(MINIMAL_FLOW);
    expect(readAssembly(directory)).toEqual({
      assemblyDirectory: directory,
      stackNames: ['Shop'],
      tables: [
        {
          key: 'Shop/Outbox',
          stackName: 'Shop',
          logicalId: 'Outbox',
          keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          attributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          globalSecondaryIndexes: [],
          localSecondaryIndexes: [],
          streamViewType: 'NEW_IMAGE',
        },
      ],
      relays: [
        {
          key: 'Shop/Relay',
          stackName: 'Shop',
          logicalId: 'Relay',
          sourceTable: 'Shop/Outbox',
          targetTopic: 'Shop/Topic',
          batchSize: 100,
          startingPosition: 'LATEST',
          maximumRetryAttempts: -1,
          maximumRecordAgeSeconds: -1,
          bisectOnFailure: false,
          filterPatterns: [],
        },
      ],
      // MaximumMessageSize unset: the SNS default, 256 KiB
      topics: [{ key: 'Shop/Topic', stackName: 'Shop', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 }],
      subscriptions: [
        {
          key: 'Shop/Subscription',
          stackName: 'Shop',
          logicalId: 'Subscription',
          topic: 'Shop/Topic',
          queue: 'Shop/Queue',
          rawMessageDelivery: false,
          filterPolicyScope: 'MessageAttributes',
        },
      ],
      queues: [{ key: 'Shop/Queue', stackName: 'Shop', logicalId: 'Queue', fifo: false, visibilityTimeoutSeconds: 30, messageRetentionSeconds: 345_600 }],
      eventSourceMappings: [
        {
          key: 'Shop/Mapping',
          stackName: 'Shop',
          logicalId: 'Mapping',
          queue: 'Shop/Queue',
          function: 'Shop/Consumer',
          batchSize: 10,
          reportBatchItemFailures: false,
          enabled: true,
        },
      ],
      functions: [
        {
          key: 'Shop/Consumer',
          stackName: 'Shop',
          logicalId: 'Consumer',
          assetDirectory: path.join(directory, 'asset.fn'),
          handler: 'index.handler',
          runtime: 'nodejs22.x',
          timeoutSeconds: 3,
          memorySizeMb: 128,
          environment: {},
        },
      ],
      notSimulated: [],
      access: expect.objectContaining({ roles: [], keys: [], resourcePolicies: {}, encryption: {} }),
      queueAlarms: new Map(),
    });
  });

  it('reads FilterPolicy and RedrivePolicy given as JSON strings, and numbers and booleans given as strings', () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Subscription: {
        Type: 'AWS::SNS::Subscription',
        Properties: {
          Protocol: 'sqs',
          TopicArn: { Ref: 'Topic' },
          Endpoint: queueArn('Queue'),
          RawMessageDelivery: 'true',
          FilterPolicyScope: 'MessageBody',
          FilterPolicy: '{"type":["OrderPlaced"],"total":[{"numeric":[">",100]}]}',
          RedrivePolicy: '{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:shop-subscription-dlq"}',
        },
      },
      Queue: {
        Type: 'AWS::SQS::Queue',
        Properties: {
          VisibilityTimeout: '180',
          MessageRetentionPeriod: 1_209_600,
          RedrivePolicy: '{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:shop-dlq","maxReceiveCount":"3"}',
        },
      },
      DeadLetterQueue: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'shop-dlq' } },
      SubscriptionDeadLetterQueue: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'shop-subscription-dlq' } },
    });
    const model = readAssembly(directory);
    expect(model.subscriptions[0]).toMatchObject({
      rawMessageDelivery: true,
      filterPolicyScope: 'MessageBody',
      filterPolicy: { type: ['OrderPlaced'], total: [{ numeric: ['>', 100] }] },
      deadLetterQueue: 'Shop/SubscriptionDeadLetterQueue',
    });
    expect(model.queues.find((queue) => queue.key === 'Shop/Queue')).toEqual({
      key: 'Shop/Queue',
      stackName: 'Shop',
      logicalId: 'Queue',
      fifo: false,
      visibilityTimeoutSeconds: 180,
      messageRetentionSeconds: 1_209_600,
      redrive: { deadLetterQueue: 'Shop/DeadLetterQueue', maxReceiveCount: 3 },
    });
    expect(model.queues.find((queue) => queue.key === 'Shop/DeadLetterQueue')?.queueName).toBe('shop-dlq');
    expect(model.notSimulated).toEqual([]);
  });

  it('reads the full relay, subscription, mapping and function settings', () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Relay: {
        Type: 'AWS::Pipes::Pipe',
        Properties: {
          Source: { 'Fn::GetAtt': 'Outbox.StreamArn' },
          Target: { 'Fn::GetAtt': ['Topic', 'TopicArn'] },
          SourceParameters: {
            DynamoDBStreamParameters: {
              StartingPosition: 'TRIM_HORIZON',
              BatchSize: 10,
              MaximumRetryAttempts: 10,
              MaximumRecordAgeInSeconds: 3600,
              OnPartialBatchItemFailure: 'AUTOMATIC_BISECT',
              DeadLetterConfig: { Arn: queueArn('RelayDlq') },
            },
            FilterCriteria: { Filters: [{ Pattern: '{"eventName":["INSERT"]}' }] },
          },
          TargetParameters: { InputTemplate: '<$.dynamodb.NewImage.body.S>' },
        },
      },
      RelayDlq: { Type: 'AWS::SQS::Queue' },
      Topic: { Type: 'AWS::SNS::Topic', Properties: { TopicName: 'events.fifo', FifoTopic: true } },
      Mapping: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: {
          EventSourceArn: queueArn('Queue'),
          FunctionName: { Ref: 'ConsumerAlias' },
          BatchSize: 5,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig: { MaximumConcurrency: 4 },
          Enabled: false,
        },
      },
      ConsumerAlias: { Type: 'AWS::Lambda::Alias', Properties: { FunctionName: { Ref: 'Consumer' }, FunctionVersion: '1', Name: 'live' } },
      Consumer: nodeFunction('asset.fn', {
        Timeout: 30,
        MemorySize: 1024,
        Environment: { Variables: { TABLE: { Ref: 'Outbox' } } },
        LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: 'DEBUG' },
      }),
    });
    const model = readAssembly(directory);
    expect(model.relays).toEqual([
      {
        key: 'Shop/Relay',
        stackName: 'Shop',
        logicalId: 'Relay',
        sourceTable: 'Shop/Outbox',
        targetTopic: 'Shop/Topic',
        batchSize: 10,
        startingPosition: 'TRIM_HORIZON',
        maximumRetryAttempts: 10,
        maximumRecordAgeSeconds: 3600,
        bisectOnFailure: true,
        deadLetterQueue: 'Shop/RelayDlq',
        filterPatterns: ['{"eventName":["INSERT"]}'],
        inputTemplate: '<$.dynamodb.NewImage.body.S>',
      },
    ]);
    expect(model.topics).toEqual([{ key: 'Shop/Topic', stackName: 'Shop', logicalId: 'Topic', topicName: 'events.fifo', fifo: true, maximumMessageSize: 262_144 }]);
    expect(model.eventSourceMappings[0]).toMatchObject({ function: 'Shop/Consumer', batchSize: 5, reportBatchItemFailures: true, maximumConcurrency: 4, enabled: false });
    expect(model.functions[0]).toMatchObject({ timeoutSeconds: 30, memorySizeMb: 1024, environment: { TABLE: { Ref: 'Outbox' } }, applicationLogLevel: 'DEBUG' });
  });

  it('lists what it cannot simulate, one line each, and leaves out what depends on it', () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Email: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'email', TopicArn: { Ref: 'Topic' }, Endpoint: 'ops@example.com' } },
      Imported: {
        Type: 'AWS::SNS::Subscription',
        Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: { 'Fn::ImportValue': 'SharedQueueArn' } },
        Metadata: { 'aws:cdk:path': 'Shop/Imported/Resource' },
      },
      Inline: { Type: 'AWS::Lambda::Function', Properties: { Code: { ZipFile: 'exports.handler = () => {}' }, Handler: 'index.handler', Runtime: 'nodejs22.x' } },
      InlineMapping: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: queueArn('Queue'), FunctionName: { Ref: 'Inline' } } },
      Python: nodeFunction('asset.fn', { Runtime: 'python3.13' }),
      StreamMapping: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: { EventSourceArn: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] }, FunctionName: { Ref: 'Consumer' }, StartingPosition: 'LATEST' },
      },
      ToFunction: {
        Type: 'AWS::Pipes::Pipe',
        Properties: { Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] }, Target: { 'Fn::GetAtt': ['Inline', 'Arn'] }, SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'LATEST' } } },
      },
      ToQueue: {
        Type: 'AWS::Pipes::Pipe',
        Properties: {
          Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] },
          Target: queueArn('Queue'),
          SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'LATEST' } },
          TargetParameters: { SqsQueueParameters: { MessageGroupId: '$.dynamodb.NewImage.iefAggregateId.S', MessageDeduplicationId: '$.dynamodb.NewImage.iefEventId.S' } },
        },
      },
      ExternalDlq: {
        Type: 'AWS::SQS::Queue',
        Properties: { RedrivePolicy: { deadLetterTargetArn: 'arn:aws:sqs:eu-west-1:123456789012:elsewhere', maxReceiveCount: 5 } },
      },
      Conditional: { Type: 'AWS::SQS::Queue', Condition: 'IsProd' },
      ConditionalSubscription: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: queueArn('Conditional') } },
      Rule: { Type: 'AWS::Events::Rule', Properties: {} },
      Role: { Type: 'AWS::IAM::Role', Properties: {} },
    });
    const model = readAssembly(directory);
    expect(model.notSimulated).toEqual([
      'AWS::SNS::Subscription Shop/Email: protocol email is not simulated (only sqs)',
      'AWS::SNS::Subscription Shop/Imported (Shop/Imported/Resource): Endpoint {"Fn::ImportValue":"SharedQueueArn"} is not a queue of stack Shop',
      'AWS::Lambda::Function Shop/Inline: its code is inline (Code.ZipFile); only Node.js code assets are run',
      'AWS::Lambda::Function Shop/Python: runtime python3.13 is not simulated (only Node.js runtimes)',
      'AWS::Lambda::EventSourceMapping Shop/StreamMapping: EventSourceArn {"Fn::GetAtt":["Outbox","StreamArn"]} is a DynamoDB stream, not a queue of stack Shop',
      'AWS::Pipes::Pipe Shop/ToFunction: Target {"Fn::GetAtt":["Inline","Arn"]} is not an SNS topic or an SQS queue of stack Shop',
      'AWS::SQS::Queue Shop/ExternalDlq: RedrivePolicy.deadLetterTargetArn "arn:aws:sqs:eu-west-1:123456789012:elsewhere" is not a queue of stack Shop; ' +
        'messages are never moved to a dead-letter queue (they are received until the retention period ends)',
      'AWS::SQS::Queue Shop/Conditional: it exists only when condition IsProd holds, and conditions are not evaluated',
      'AWS::Events::Rule Shop/Rule: EventBridge rules are not simulated',
      'AWS::Lambda::EventSourceMapping Shop/InlineMapping: its function Shop/Inline is not simulated',
      'AWS::SNS::Subscription Shop/ConditionalSubscription: its queue Shop/Conditional is not simulated',
    ]);
    expect(model.subscriptions.map((subscription) => subscription.key)).toEqual(['Shop/Subscription']);
    // a pipe to a queue (the ordered relay's FIFO queue) is simulated, with its SqsQueueParameters
    expect(model.relays.find((relay) => relay.key === 'Shop/ToQueue')?.targetQueue).toEqual({
      queue: 'Shop/Queue',
      messageGroupId: '$.dynamodb.NewImage.iefAggregateId.S',
      messageDeduplicationId: '$.dynamodb.NewImage.iefEventId.S',
    });
    expect(model.eventSourceMappings.map((mapping) => mapping.key)).toEqual(['Shop/Mapping']);
    expect(model.functions.map((fn) => fn.key)).toEqual(['Shop/Consumer']);
    expect(model.relays.map((relay) => relay.key)).toEqual(['Shop/Relay', 'Shop/ToQueue']);
    expect(model.queues.find((queue) => queue.key === 'Shop/ExternalDlq')?.redrive).toBeUndefined();
  });

  it('does not simulate a relay whose source table has no stream', () => {
    const directory = shop({ ...MINIMAL_FLOW, Outbox: { ...MINIMAL_FLOW.Outbox, Properties: { ...MINIMAL_FLOW.Outbox.Properties, StreamSpecification: undefined } } });
    const model = readAssembly(directory);
    expect(model.relays).toEqual([]);
    expect(model.notSimulated).toEqual(['AWS::Pipes::Pipe Shop/Relay: its source table Shop/Outbox has no stream (StreamSpecification)']);
  });

  it.each([
    ['AWS::SQS::Queue Shop/Queue: RedrivePolicy.maxReceiveCount is 0; it must be an integer from 1 to 1000', 'Queue', { Type: 'AWS::SQS::Queue', Properties: { RedrivePolicy: { deadLetterTargetArn: queueArn('Queue'), maxReceiveCount: 0 } } }],
    ['AWS::SQS::Queue Shop/Queue: VisibilityTimeout is "soon"; it must be an integer from 0 to 43200', 'Queue', { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 'soon' } }],
    ['AWS::SQS::Queue Shop/Queue: MessageRetentionPeriod is 30; it must be an integer from 60 to 1209600', 'Queue', { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: 30 } }],
    ['AWS::Lambda::Function Shop/Consumer: Timeout is 901; it must be an integer from 1 to 900', 'Consumer', nodeFunction('asset.fn', { Timeout: 901 })],
    ['AWS::Lambda::Function Shop/Consumer: MemorySize is 64; it must be an integer from 128 to 10240', 'Consumer', nodeFunction('asset.fn', { MemorySize: 64 })],
    ['AWS::Lambda::EventSourceMapping Shop/Mapping: BatchSize is 0; it must be an integer from 1 to 10000', 'Mapping', { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: queueArn('Queue'), FunctionName: { Ref: 'Consumer' }, BatchSize: 0 } }],
    ['AWS::SNS::Subscription Shop/Subscription: FilterPolicy is "{\\"type\\":"; it must be a JSON object', 'Subscription', { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: queueArn('Queue'), FilterPolicy: '{"type":' } }],
    ['AWS::SNS::Subscription Shop/Subscription: RawMessageDelivery is "yes"; it must be true or false', 'Subscription', { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: queueArn('Queue'), RawMessageDelivery: 'yes' } }],
    ['AWS::Pipes::Pipe Shop/Relay: SourceParameters.DynamoDBStreamParameters.MaximumRetryAttempts is -2; it must be an integer from -1 to 10000', 'Relay', { Type: 'AWS::Pipes::Pipe', Properties: { Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] }, Target: { Ref: 'Topic' }, SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'LATEST', MaximumRetryAttempts: -2 } } } }],
    ['AWS::DynamoDB::Table Shop/Outbox: KeySchema is [{"AttributeName":"pk","KeyType":"RANGE"}]; it must be a HASH key, optionally followed by a RANGE key', 'Outbox', { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'RANGE' }], AttributeDefinitions: [] } }],
  ])('refuses a value that would not deploy: %s', (message, logicalId, resource) => {
    const directory = shop({ ...MINIMAL_FLOW, [logicalId]: resource });
    expect(() => readAssembly(directory)).toThrow(message);
  });

  it('replaces template parameters by their defaults, but not SSM-backed ones', () => {
    const directory = shop(
      {
        ...MINIMAL_FLOW,
        Queue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: { Ref: 'Visibility' } } },
        Consumer: nodeFunction('asset.fn', {
          Environment: { Variables: { STAGE: { Ref: 'Stage' }, URL: { 'Fn::Sub': 'https://${Stage}.example.com/${Outbox}' }, SECRET: { Ref: 'FromSsm' } } },
        }),
      },
      {
        Visibility: { Type: 'Number', Default: 90 },
        Stage: { Type: 'String', Default: 'test' },
        FromSsm: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/shop/secret' },
      },
    );
    const model = readAssembly(directory);
    expect(model.queues[0].visibilityTimeoutSeconds).toBe(90);
    expect(model.functions[0].environment).toEqual({
      STAGE: 'test',
      URL: { 'Fn::Sub': 'https://test.example.com/${Outbox}' },
      SECRET: { Ref: 'FromSsm' },
    });
  });

  it('reads the nested assemblies of stages, with asset paths relative to them, and selects stacks', () => {
    const root = writeAssembly(
      { Shared: { template: { Resources: { Topic: { Type: 'AWS::SNS::Topic' } } } } },
      { 'assembly-Prod': { ProdShop: { stackName: 'Prod-Shop', displayName: 'Prod/Shop', template: { Resources: MINIMAL_FLOW } } } },
    );
    created.push(root);
    const { Consumer: _consumer, ...withoutConsumer } = MINIMAL_FLOW;
    fs.writeFileSync(
      path.join(root, 'assembly-Prod', 'ProdShop.template.json'),
      JSON.stringify({ Resources: { ...withoutConsumer, Consumer: nodeFunction('../asset.fn') } }),
    );
    writeAsset(root, 'asset.fn');
    const model = readAssembly(root);
    expect(model.stackNames).toEqual(['Shared', 'Prod-Shop']);
    expect(model.functions).toEqual([expect.objectContaining({ key: 'Prod-Shop/Consumer', assetDirectory: path.join(root, 'asset.fn') })]);
    expect(model.topics.map((topic) => topic.key)).toEqual(['Shared/Topic', 'Prod-Shop/Topic']);
    expect(readAssembly(root, { stacks: ['Prod/Shop'] }).stackNames).toEqual(['Prod-Shop']);
    expect(readAssembly(root, { stacks: ['ProdShop', 'Shared'] }).stackNames).toEqual(['Shared', 'Prod-Shop']);
    expect(() => readAssembly(root, { stacks: ['Staging/Shop'] })).toThrow('no stack of the app is Staging/Shop; its stacks: Shared, Prod/Shop (stack name Prod-Shop)');
  });

  it('refuses two stacks of the same name, and a directory without an assembly', () => {
    const root = writeAssembly({ A: { stackName: 'Shop', template: { Resources: {} } }, B: { stackName: 'Shop', template: { Resources: {} } } });
    created.push(root);
    expect(() => readAssembly(root)).toThrow('the app has two stacks named Shop (A and B) in aws://unknown-account/unknown-region; select one of them with the stacks option (--stack)');
    expect(readAssembly(root, { stacks: ['B'] }).stackNames).toEqual(['Shop']);
    const empty = path.join(root, 'nothing-here');
    expect(() => readAssembly(empty)).toThrow(`No cloud assembly in ${empty}: manifest.json is missing`);
  });
});

describe('readAssembly of an app split over stacks', () => {
  /** Stack Core: the outbox, the relay and the topic, each shared with stack Service through an output. */
  const CORE = {
    Parameters: { Stage: { Type: 'String', Default: 'dev' } },
    Resources: {
      Outbox: MINIMAL_FLOW.Outbox,
      Relay: MINIMAL_FLOW.Relay,
      Topic: MINIMAL_FLOW.Topic,
      Ledger: { Type: 'AWS::DynamoDB::Table', Properties: MINIMAL_FLOW.Outbox.Properties },
    },
    Outputs: {
      // what CDK writes for a reference from another stack (Fn::GetStackOutput on the importing side) ...
      PublishOutputRefTopic: { Value: { Ref: 'Topic' } },
      // ... and what it wrote before, and what a hand-written export looks like (Fn::ImportValue)
      ExportsOutputRefLedger: { Value: { Ref: 'Ledger' }, Export: { Name: 'Core:ExportsOutputRefLedger' } },
      LedgerArn: { Value: { 'Fn::GetAtt': ['Ledger', 'Arn'] }, Export: { Name: { 'Fn::Sub': '${AWS::StackName}-${Stage}-LedgerArn' } } },
    },
  };
  /** Stack Service: a subscriber of Core's topic, whose consumer writes to Core's ledger. */
  const SERVICE = {
    Resources: {
      Subscription: {
        Type: 'AWS::SNS::Subscription',
        Properties: {
          Protocol: 'sqs',
          TopicArn: { 'Fn::GetStackOutput': { StackName: 'Core', Region: { Ref: 'AWS::Region' }, OutputName: 'PublishOutputRefTopic' } },
          Endpoint: queueArn('Queue'),
        },
      },
      Queue: MINIMAL_FLOW.Queue,
      Mapping: MINIMAL_FLOW.Mapping,
      Consumer: nodeFunction('asset.fn', {
        Environment: {
          Variables: {
            LEDGER: { 'Fn::ImportValue': 'Core:ExportsOutputRefLedger' },
            LEDGER_ARN: { 'Fn::ImportValue': 'Core-dev-LedgerArn' },
            TOPIC: { 'Fn::GetStackOutput': { StackName: 'Core', OutputName: 'PublishOutputRefTopic' } },
          },
        },
      }),
    },
  };

  function split(): string {
    const directory = writeAssembly({ Core: { template: CORE }, Service: { template: SERVICE } });
    created.push(directory);
    writeAsset(directory, 'asset.fn');
    return directory;
  }

  it('follows references to another stack (Fn::GetStackOutput, Fn::ImportValue) to its resources', () => {
    const model = readAssembly(split());
    expect(model.notSimulated).toEqual([]);
    expect(model.relays.map((relay) => [relay.sourceTable, relay.targetTopic])).toEqual([['Core/Outbox', 'Core/Topic']]);
    expect(model.subscriptions.map((subscription) => [subscription.topic, subscription.queue])).toEqual([['Core/Topic', 'Service/Queue']]);
    expect(model.eventSourceMappings.map((mapping) => mapping.function)).toEqual(['Service/Consumer']);

    // the consumer's environment resolves to the local names of Core's resources
    const local: Record<string, string> = { 'Core/Ledger': 'ledger-local', 'Core/Topic': 'arn:aws:sns:us-east-1:000000000000:topic' };
    const environment = resolveEnvironment(model.functions[0], {
      ref: (key) => local[key],
      getAtt: (key, attribute) => (key === 'Core/Ledger' && attribute === 'Arn' ? 'ledger-arn' : undefined),
      region: 'us-east-1',
      accountId: '000000000000',
    });
    expect(environment).toEqual({ LEDGER: 'ledger-local', LEDGER_ARN: 'ledger-arn', TOPIC: 'arn:aws:sns:us-east-1:000000000000:topic' });
  });

  it('says which stack to select when a selected stack refers to one that is not', () => {
    const model = readAssembly(split(), { stacks: ['Service'] });
    expect(model.subscriptions).toEqual([]);
    expect(model.notSimulated).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          'AWS::SNS::Subscription Service/Subscription: TopicArn {"Fn::GetStackOutput":{"StackName":"Core","Region":{"Ref":"AWS::Region"},"OutputName":"PublishOutputRefTopic"}} is in stack Core, which is not selected (add --stack Core)',
        ),
      ]),
    );
  });

  it('leaves out a subscription whose queue nothing the simulator runs consumes, saying so', () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Audit: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: queueArn('AuditQueue') } },
      AuditQueue: { Type: 'AWS::SQS::Queue' },
      Inline: { Type: 'AWS::Lambda::Function', Properties: { Code: { ZipFile: 'exports.handler = () => {}' }, Handler: 'index.handler', Runtime: 'nodejs22.x' } },
      Python: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'Topic' }, Endpoint: queueArn('PythonQueue') } },
      PythonQueue: { Type: 'AWS::SQS::Queue' },
      PythonMapping: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: queueArn('PythonQueue'), FunctionName: { Ref: 'Inline' } } },
    });
    const model = readAssembly(directory);
    expect(model.subscriptions.map((subscription) => subscription.key)).toEqual(['Shop/Subscription']);
    expect(model.notSimulated).toEqual([
      'AWS::Lambda::Function Shop/Inline: its code is inline (Code.ZipFile); only Node.js code assets are run',
      'AWS::Lambda::EventSourceMapping Shop/PythonMapping: its function Shop/Inline is not simulated',
      'AWS::SNS::Subscription Shop/Audit: its queue Shop/AuditQueue has no consumer the simulator runs (no SQS event source mapping of a simulated function); what the topic delivers to it is neither simulated nor checked',
      'AWS::SNS::Subscription Shop/Python: its queue Shop/PythonQueue has no consumer the simulator runs (no SQS event source mapping of a simulated function); what the topic delivers to it is neither simulated nor checked',
    ]);
  });

  it('refuses a stack selection that names no stack, with a StackSelectionError listing stack names and paths', () => {
    const root = writeAssembly({}, { 'assembly-Dev': { DevShop: { stackName: 'Dev-Shop', displayName: 'Dev/Shop', template: { Resources: MINIMAL_FLOW } } } });
    created.push(root);
    expect(() => readAssembly(root, { stacks: ['Shop'] })).toThrow(StackSelectionError);
    expect(() => readAssembly(root, { stacks: ['Shop'] })).toThrow('no stack of the app is Shop; its stacks: Dev/Shop (stack name Dev-Shop)');
  });
});

describe('readAssembly of an assembly synthesized without asset metadata (app.synth() without the CDK CLI, --no-asset-metadata)', () => {
  it("finds a function's code asset through the stack's asset manifest, by its S3Key", () => {
    const { Consumer: _consumer, ...withoutConsumer } = MINIMAL_FLOW;
    const consumer = { Type: 'AWS::Lambda::Function', Properties: { Code: { S3Bucket: { 'Fn::Sub': 'cdk-assets-${AWS::AccountId}' }, S3Key: 'abc123.zip' }, Handler: 'index.handler', Runtime: 'nodejs22.x' } };
    const orphan = { ...consumer, Properties: { ...consumer.Properties, Code: { S3Bucket: 'b', S3Key: 'elsewhere.zip' } } };
    const root = writeAssembly({}, { 'assembly-Dev': { DevShop: { stackName: 'Dev-Shop', template: { Resources: { ...withoutConsumer, Consumer: consumer, Orphan: orphan } } } } });
    created.push(root);
    writeAsset(root, 'asset.abc123');
    const nested = path.join(root, 'assembly-Dev');
    // as CDK writes it: the stack depends on its asset manifest, whose paths are relative to the manifest's directory
    fs.writeFileSync(
      path.join(nested, 'DevShop.assets.json'),
      JSON.stringify({ version: '55.0.0', files: { abc123: { source: { path: '../asset.abc123', packaging: 'zip' }, destinations: { current: { bucketName: 'b', objectKey: 'abc123.zip' } } } } }),
    );
    const manifest = JSON.parse(fs.readFileSync(path.join(nested, 'manifest.json'), 'utf8')) as { artifacts: Record<string, Record<string, unknown>> };
    manifest.artifacts['DevShop.assets'] = { type: 'cdk:asset-manifest', properties: { file: 'DevShop.assets.json' } };
    manifest.artifacts.DevShop.dependencies = ['DevShop.assets'];
    fs.writeFileSync(path.join(nested, 'manifest.json'), JSON.stringify(manifest));

    const model = readAssembly(root);
    expect(model.functions).toEqual([expect.objectContaining({ key: 'Dev-Shop/Consumer', assetDirectory: path.join(root, 'asset.abc123') })]);
    expect(model.eventSourceMappings.map((mapping) => mapping.function)).toEqual(['Dev-Shop/Consumer']);
    expect(model.notSimulated).toEqual([
      'AWS::Lambda::Function Dev-Shop/Orphan: its code is not an asset of the cloud assembly (no aws:asset:path metadata, and its S3Key "elsewhere.zip" is no file asset of the stack\'s asset manifests)',
    ]);
  });
});

describe('readAssembly: roles, policies and keys, for IAM evaluation', () => {
  it('reads roles with the policies attached to them, resource and key policies, and which key encrypts what', () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Relay: { ...MINIMAL_FLOW.Relay, Properties: { ...MINIMAL_FLOW.Relay.Properties, RoleArn: { 'Fn::GetAtt': ['RelayRole', 'Arn'] } } },
      Consumer: { ...(nodeFunction('asset.fn') as Record<string, unknown>), Properties: { ...((nodeFunction('asset.fn') as { Properties: object }).Properties), Role: 'arn:aws:iam::123456789012:role/imported' } },
      RelayRole: { Type: 'AWS::IAM::Role', Properties: { Policies: [{ PolicyName: 'Inline', PolicyDocument: { Statement: [] } }], ManagedPolicyArns: ['arn:aws:iam::aws:policy/AdministratorAccess'] } },
      RelayPolicy: { Type: 'AWS::IAM::Policy', Properties: { PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'sns:Publish', Resource: { Ref: 'Topic' } }] }, Roles: [{ Ref: 'RelayRole' }] } },
      Key: { Type: 'AWS::KMS::Key', Properties: { KeyPolicy: { Statement: [] } } },
      Queue: { Type: 'AWS::SQS::Queue', Properties: { KmsMasterKeyId: { 'Fn::GetAtt': ['Key', 'Arn'] } } },
      QueuePolicy: { Type: 'AWS::SQS::QueuePolicy', Properties: { Queues: [{ Ref: 'Queue' }], PolicyDocument: { Statement: [] } } },
    });

    const access = readAssembly(directory).access!;

    expect(access.roles).toEqual([
      expect.objectContaining({
        key: 'Shop/RelayRole',
        policies: [expect.objectContaining({ name: 'Shop/RelayRole#Inline' }), expect.objectContaining({ name: 'Shop/RelayPolicy', stackName: 'Shop' })],
        unevaluatedManagedPolicies: ['"arn:aws:iam::aws:policy/AdministratorAccess"'],
      }),
    ]);
    expect(access.executionRoles).toEqual({ 'Shop/Relay': { role: 'Shop/RelayRole' }, 'Shop/Consumer': { external: '"arn:aws:iam::123456789012:role/imported"' } });
    expect(access.encryption).toEqual({ 'Shop/Queue': { key: 'Shop/Key' } });
    expect(Object.keys(access.resourcePolicies)).toEqual(['Shop/Queue']);
    expect(access.keys.map((key) => key.key)).toEqual(['Shop/Key']);
    // an imported role and an AWS managed policy are named as not evaluated, never taken as allowing anything
    expect(access.notEvaluated).toEqual([
      expect.stringContaining('Shop/Consumer: its Role "arn:aws:iam::123456789012:role/imported" is not a role of the app'),
      expect.stringContaining('managed policy "arn:aws:iam::aws:policy/AdministratorAccess" is not a policy of the app'),
    ]);
  });
});

describe('readAssembly: what IAM needs beyond policies (issue 20)', () => {
  it("reads a role's permissions boundary (a managed policy of the app, or an ARN from outside it) and its tags", () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Relay: { ...MINIMAL_FLOW.Relay, Properties: { ...MINIMAL_FLOW.Relay.Properties, RoleArn: { 'Fn::GetAtt': ['RelayRole', 'Arn'] } } },
      Boundary: { Type: 'AWS::IAM::ManagedPolicy', Properties: { PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'sns:Publish', Resource: '*' }] } } },
      RelayRole: { Type: 'AWS::IAM::Role', Properties: { PermissionsBoundary: { Ref: 'Boundary' }, Tags: [{ Key: 'team', Value: 'ledger' }] } },
      OtherRole: { Type: 'AWS::IAM::Role', Properties: { PermissionsBoundary: 'arn:aws:iam::123456789012:policy/org-boundary', Tags: [{ Key: 'region', Value: { Ref: 'AWS::Region' } }] } },
    });

    const access = readAssembly(directory).access!;

    const relayRole = access.roles.find((role) => role.key === 'Shop/RelayRole')!;
    expect(relayRole.permissionsBoundary).toEqual({ policy: expect.objectContaining({ name: 'Shop/Boundary', stackName: 'Shop' }) });
    expect(relayRole.tags).toEqual({ team: 'ledger' });
    const otherRole = access.roles.find((role) => role.key === 'Shop/OtherRole')!;
    expect(otherRole.permissionsBoundary).toEqual({ external: '"arn:aws:iam::123456789012:policy/org-boundary"' });
    // a tag's value is resolved with the run's names, like a policy's: kept as the template has it
    expect(otherRole.tags).toEqual({ region: { Ref: 'AWS::Region' } });
    // the boundary is not an identity policy of the role: it only limits what they allow
    expect(relayRole.policies.map((policy) => policy.name)).not.toContain('Shop/Boundary');
  });

  it("reads each table's partition key, and each index's, for dynamodb:LeadingKeys", () => {
    const directory = shop({
      ...MINIMAL_FLOW,
      Orders: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }, { AttributeName: 'customer', AttributeType: 'S' }],
          GlobalSecondaryIndexes: [{ IndexName: 'ByCustomer', KeySchema: [{ AttributeName: 'customer', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
        },
      },
    });

    const access = readAssembly(directory).access!;

    expect(access.tableKeys?.['Shop/Orders']).toEqual({ partitionKey: 'pk', indexPartitionKeys: { ByCustomer: 'customer' } });
    expect(access.tableKeys?.['Shop/Outbox']).toEqual({ partitionKey: 'pk', indexPartitionKeys: {} });
  });
});
