/**
 * verify without --stack on a split-stack app served by simulate (review r12, R12-2; new-user trial nu12, item 1): the
 * flow and its producer in stack Core (the flow's own `Operator` output only), its Ledger subscriber in stack Service;
 * a second flow composed by hand in stack Legacy (its outbox table, no `Operator` output), whose Audit subscriber is in
 * stack AuditSubscribers. Default discovery read only the stacks with a subscriber's `Operator` output, so the
 * producer `Core/PlaceOrder` named "no function of the stacks" (REFUSED) and the flow's topic was never listed (the
 * `--account` guard on its subscriptions saw nothing). It must also read the stacks that own what the subscribers'
 * outputs name (the flow's `Operator` output, or the stack owning the outbox table: DescribeStackResources by
 * PhysicalResourceId) and the stack the producer names.
 *
 * A hand-written cloud assembly served by the simulator's own CloudFormation endpoint (servedStacks →
 * cloudFormationHandler), read by verify's own clients.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CloudFormationClient, DescribeStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { LocalResourceNames } from '../../../simulator/model/local-names';
import { servedStacks } from '../../../simulator/run/served-stacks';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow, findDeployedFunction, findProducerFunction } from '../../../simulator/verify/deployed-flow';
import { refuseSubscriptionsElsewhere, subscriptionsNotSeen, type TopicSubscription } from '../../../simulator/verify/topic-subscriptions';

const ACCOUNT = '111111111111';
const PRODUCTION = '999999999999';
const REGION = 'eu-west-1';
const TOPIC = `arn:aws:sns:${REGION}:${ACCOUNT}:Core-Events`;

const CORE = {
  Resources: {
    FlowOutboxTable: { Type: 'AWS::DynamoDB::Table', Metadata: { 'aws:cdk:path': 'Core/Flow/OutboxTable/Resource' } },
    FlowTopic: { Type: 'AWS::SNS::Topic', Metadata: { 'aws:cdk:path': 'Core/Flow/Topic/Resource' } },
    PlaceOrder: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'Core/PlaceOrder/Resource' } },
  },
  Outputs: { FlowOperator1234ABCD: { Description: 'What operators of flow Core/Flow need: its outbox table, topic, relay pipe and dead-letter queue', Value: JSON.stringify({ outboxTable: 'Core-Outbox', topicArn: TOPIC }) } },
};

function subscriberTemplate(stack: string, name: string, outboxTable: string) {
  return {
    Resources: { [`${name}Function`]: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': `${stack}/${name}/Function/Resource` } } },
    Outputs: {
      [`${name}Operator5DAFF90A`]: {
        Value: JSON.stringify({ format: 1, subscriberName: name, processingMode: 'transactional', deduplicationWindowSeconds: 2592000, keepBlockedMessageBody: false, outboxTable, inboxTable: `${stack}-${name}Inbox`, queueUrl: `http://127.0.0.1:1/${ACCOUNT}/${stack}-${name}Queue`, deadLetterQueueUrl: `http://127.0.0.1:1/${ACCOUNT}/${stack}-${name}Dlq`, consumerFunctionName: `${stack}-${name}` }),
      },
    },
  };
}

const LEGACY = {
  Resources: {
    OutboxTable: { Type: 'AWS::DynamoDB::Table', Metadata: { 'aws:cdk:path': 'Legacy/OutboxTable/Resource' } },
    Emit: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'Legacy/Emit/Resource' } },
  },
};

/** A stack of another app in the same account: no subscriber of these flows names it, so it is not read. */
const OTHER = { Resources: { Unrelated: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'Other/Unrelated/Resource' } } } };

const TEMPLATES: Record<string, object> = { Core: CORE, Service: subscriberTemplate('Service', 'Ledger', 'Core-Outbox'), Legacy: LEGACY, AuditSubscribers: subscriberTemplate('AuditSubscribers', 'Audit', 'Legacy-Outbox'), Other: OTHER };
const directory = mkdtempSync(path.join(tmpdir(), 'split-stack-discovery-'));
let gateway: LoopbackServer;
let clients: VerifyClients;
const environment = { ...process.env };

beforeAll(async () => {
  const stack = (file: string) => ({ type: 'aws:cloudformation:stack', environment: `aws://${ACCOUNT}/${REGION}`, properties: { templateFile: file } });
  for (const [name, template] of Object.entries(TEMPLATES)) writeFileSync(path.join(directory, `${name}.template.json`), JSON.stringify(template));
  writeFileSync(path.join(directory, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: Object.fromEntries(Object.keys(TEMPLATES).map((name) => [name, stack(`${name}.template.json`)])) }));
  const names = new LocalResourceNames(REGION, new Map(Object.keys(TEMPLATES).map((name) => [name, { account: ACCOUNT, region: REGION }])));
  names.register('Core/FlowOutboxTable', { ref: 'Core-Outbox', attributes: {} });
  names.register('Core/FlowTopic', { ref: TOPIC, attributes: {} });
  names.register('Core/PlaceOrder', { ref: 'Core-PlaceOrder', attributes: {} });
  names.register('Service/LedgerFunction', { ref: 'Service-Ledger', attributes: {} });
  names.register('Legacy/OutboxTable', { ref: 'Legacy-Outbox', attributes: {} });
  names.register('Legacy/Emit', { ref: 'Legacy-Emit', attributes: {} });
  names.register('AuditSubscribers/AuditFunction', { ref: 'AuditSubscribers-Audit', attributes: {} });
  names.register('Other/Unrelated', { ref: 'Other-Unrelated', attributes: {} });
  const stacks = servedStacks({ assemblyDirectory: directory, stackNames: Object.keys(TEMPLATES) }, names, new Date(0));
  const functions = new Map<string, InvokableFunction>(
    ['Core-PlaceOrder', 'Service-Ledger', 'Legacy-Emit', 'AuditSubscribers-Audit', 'Other-Unrelated'].map((name) => [name, { arn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`, environment: { NAME: name }, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]),
  );
  gateway = await startAwsGateway({ forward: {}, handle: { cloudformation: cloudFormationHandler(stacks), lambda: lambdaHandler(functions, [], () => 'the test run') } });
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, { AWS_ENDPOINT_URL: gateway.endpoint, AWS_REGION: REGION, AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' });
  clients = verifyClients();
});

afterAll(async () => {
  clients?.destroy();
  process.env = environment;
  await gateway?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('verify without --stack, a split-stack app (review r12, R12-2; nu12 item 1)', () => {
  test("the flow's stack (its Operator output names the outbox a found subscriber names) is read: its topic is listed and the producer in it is found", async () => {
    const flow = await findDeployedFlow(clients, undefined, ['Core/PlaceOrder']);
    expect(flow.stackNames).toContain('Core');
    expect(flow.flows).toEqual([{ outboxTable: 'Core-Outbox', topicArn: TOPIC }]);
    expect(findDeployedFunction(flow, 'Core/PlaceOrder').physicalId).toBe('Core-PlaceOrder');
    expect(flow.stackNames).not.toContain('Other');
  });

  test('a flow composed by hand (no Operator output): the stack owning the outbox table a subscriber names is read (DescribeStackResources by PhysicalResourceId), and its producer found', async () => {
    const flow = await findDeployedFlow(clients, undefined, ['Legacy/Emit']);
    expect(flow.stackNames).toContain('Legacy');
    expect(findDeployedFunction(flow, 'Legacy/Emit').physicalId).toBe('Legacy-Emit');
  });

  test('a producer in a stack no subscriber names: the stack its reference starts with is read', async () => {
    const flow = await findDeployedFlow(clients, undefined, ['Other/Unrelated']);
    expect(findDeployedFunction(flow, 'Other/Unrelated').physicalId).toBe('Other-Unrelated');
  });

  test('a producer still not found: the refusal names the stacks read and says to pass --stack for each stack', async () => {
    const flow = await findDeployedFlow(clients, undefined, ['Nowhere/PlaceOrder']);
    const refusal = (stacks: readonly string[] | undefined): string => {
      try {
        findProducerFunction(flow, 'Nowhere/PlaceOrder', stacks);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal(undefined)).toMatch(/names no function of the stacks/);
    expect(refusal(undefined)).toContain(`verify read the stacks ${flow.stackNames.join(', ')} (`);
    expect(refusal(undefined)).toContain('pass --stack for each stack of the app');
    // with --stack the user chose the stacks: the resolver's message alone
    expect(refusal(['Core'])).not.toContain('verify read the stacks');
  });

  test('a refused DescribeStackResources (no permission) is NOT PROVEN, naming the outbox table, its subscriber and the permission', async () => {
    const cloudFormation = new CloudFormationClient({});
    const send = cloudFormation.send.bind(cloudFormation) as (command: unknown) => Promise<unknown>;
    cloudFormation.send = (async (command: unknown) => {
      if (command instanceof DescribeStackResourcesCommand) throw Object.assign(new Error('not authorized to perform: cloudformation:DescribeStackResources'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
      return send(command);
    }) as unknown as CloudFormationClient['send'];
    try {
      const flow = await findDeployedFlow({ ...clients, cloudFormation } as VerifyClients, undefined, ['Legacy/Emit']);
      expect(flow.notProven?.filter((line) => line.includes('Legacy-Outbox'))).toEqual([expect.stringMatching(/subscriber\(s\) Audit name \(AccessDenied: .*cloudformation:DescribeStackResources/)]);
      // the producer is still found: its stack is the one its path starts with
      expect(findDeployedFunction(flow, 'Legacy/Emit').physicalId).toBe('Legacy-Emit');
    } finally {
      cloudFormation.destroy();
    }
  });

  test("the --account guard runs over the flow's topic: a subscription to a queue in another account is refused", async () => {
    const flow = await findDeployedFlow(clients, undefined, ['Core/PlaceOrder']);
    const subscriptions = [
      { SubscriptionArn: `${TOPIC}:1`, Protocol: 'sqs', Endpoint: `arn:aws:sqs:${REGION}:${ACCOUNT}:Service-LedgerQueue`, TopicArn: TOPIC },
      { SubscriptionArn: `${TOPIC}:2`, Protocol: 'sqs', Endpoint: `arn:aws:sqs:${REGION}:${PRODUCTION}:Billing-Queue`, TopicArn: TOPIC },
    ];
    const asked: string[] = [];
    // SNS's answer to ListSubscriptionsByTopic, given by the client (the served run's SNS is not started here)
    const sns = new SNSClient({ region: REGION });
    sns.send = (async (command: { input: { TopicArn: string } }) => {
      asked.push(command.input.TopicArn);
      return { Subscriptions: subscriptions };
    }) as unknown as SNSClient['send'];
    const listed: TopicSubscription[] = [];
    await subscriptionsNotSeen({ sns }, flow, listed);
    expect(asked).toContain(TOPIC);
    expect(() => refuseSubscriptionsElsewhere(listed, [ACCOUNT])).toThrow(new RegExp(`Billing-Queue \\(account ${PRODUCTION}\\)`));
  });

  test('the served CloudFormation answers DescribeStackResources by PhysicalResourceId with the owning stack, and a physical id of no stack as CloudFormation does', async () => {
    const answer = await clients.cloudFormation.send(new DescribeStackResourcesCommand({ PhysicalResourceId: 'Legacy-Outbox' }));
    expect(new Set(answer.StackResources?.map((resource) => resource.StackName))).toEqual(new Set(['Legacy']));
    expect(answer.StackResources?.map((resource) => resource.PhysicalResourceId).sort()).toEqual(['Legacy-Emit', 'Legacy-Outbox']);
    await expect(clients.cloudFormation.send(new DescribeStackResourcesCommand({ PhysicalResourceId: 'No-Such-Table' }))).rejects.toThrow('Stack for No-Such-Table does not exist');
  });
});
