/**
 * verify against a served run of a split-stack app (nu11 finding 6, issue 43): the flow in stack Orders, its Ledger
 * subscriber in stack PaymentSubscribers, whose Operator output imports the flow's outbox table from Orders
 * (`Fn::ImportValue`, as CDK writes a cross-stack reference in one account and Region).
 *
 * (a) simulate accepts the producer `Orders/Payments/PlaceOrder` (its construct path, stack included) and
 *     `Payments/PlaceOrder`: verify must resolve the same names, by the same resolver
 *     (simulator/model/find-resource.ts), from the deployed template's `aws:cdk:path` metadata (GetTemplate).
 * (b) without --stack verify found only the stack whose Operator output needed no import: the served run dropped
 *     PaymentSubscribers' outputs (Fn::ImportValue unresolved), so (c) its subscribers were "not found" with --stack too.
 *
 * A hand-written cloud assembly served by the simulator's own CloudFormation endpoint (servedStacks →
 * cloudFormationHandler), read by verify's own clients.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { LocalResourceNames } from '../../../simulator/model/local-names';
import { servedStacks } from '../../../simulator/run/served-stacks';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow, findDeployedFunction } from '../../../simulator/verify/deployed-flow';

const ACCOUNT = '111111111111';
const REGION = 'eu-west-1';
const EXPORT = 'Orders:ExportsOutputRefPaymentsOutboxTable7CA7A4101FE0042A';

const ORDERS = {
  Resources: {
    PaymentsOutboxTable7CA7A410: { Type: 'AWS::DynamoDB::Table', Metadata: { 'aws:cdk:path': 'Orders/Payments/OutboxTable/Resource' } },
    PaymentsPlaceOrderB3CA1217: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'Orders/Payments/PlaceOrder/Resource' } },
    PaymentsCapturePayment5EECF448: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'Orders/Payments/CapturePayment/Resource' } },
  },
  Outputs: {
    ExportsOutputRefPaymentsOutboxTable7CA7A4101FE0042A: { Value: { Ref: 'PaymentsOutboxTable7CA7A410' }, Export: { Name: EXPORT } },
  },
};

const SUBSCRIBERS = {
  Resources: {
    LedgerInboxTableEC58B91E: { Type: 'AWS::DynamoDB::Table', Metadata: { 'aws:cdk:path': 'PaymentSubscribers/Ledger/InboxTable/Resource' } },
    LedgerQueueBDE79E93: { Type: 'AWS::SQS::Queue', Metadata: { 'aws:cdk:path': 'PaymentSubscribers/Ledger/Queue/Resource' } },
    LedgerQueueDeadLetterQueue55AE17E8: { Type: 'AWS::SQS::Queue', Metadata: { 'aws:cdk:path': 'PaymentSubscribers/Ledger/Queue/DeadLetterQueue/Resource' } },
    LedgerFunction75F6A5C6: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'PaymentSubscribers/Ledger/Function/Resource' } },
  },
  Outputs: {
    LedgerOperator5DAFF90A: {
      Value: {
        'Fn::Join': [
          '',
          [
            '{"format":1,"subscriberName":"Ledger","processingMode":"transactional","deduplicationWindowSeconds":2592000,"keepBlockedMessageBody":false,"outboxTable":"',
            { 'Fn::ImportValue': EXPORT },
            '","inboxTable":"',
            { Ref: 'LedgerInboxTableEC58B91E' },
            '","queueUrl":"',
            { Ref: 'LedgerQueueBDE79E93' },
            '","deadLetterQueueUrl":"',
            { Ref: 'LedgerQueueDeadLetterQueue55AE17E8' },
            '","consumerFunctionName":"',
            { Ref: 'LedgerFunction75F6A5C6' },
            '"}',
          ],
        ],
      },
    },
  },
};

const directory = mkdtempSync(path.join(tmpdir(), 'split-stack-served-'));
let gateway: LoopbackServer;
let clients: VerifyClients;
const environment = { ...process.env };

beforeAll(async () => {
  writeFileSync(path.join(directory, 'Orders.template.json'), JSON.stringify(ORDERS));
  writeFileSync(path.join(directory, 'PaymentSubscribers.template.json'), JSON.stringify(SUBSCRIBERS));
  const stack = (file: string) => ({ type: 'aws:cloudformation:stack', environment: `aws://${ACCOUNT}/${REGION}`, properties: { templateFile: file } });
  writeFileSync(path.join(directory, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: { Orders: stack('Orders.template.json'), PaymentSubscribers: stack('PaymentSubscribers.template.json') } }));
  const environments = new Map(['Orders', 'PaymentSubscribers'].map((name) => [name, { account: ACCOUNT, region: REGION }]));
  const names = new LocalResourceNames(REGION, environments);
  names.register('Orders/PaymentsOutboxTable7CA7A410', { ref: 'Orders-PaymentsOutboxTable7CA7A410', attributes: {} });
  names.register('Orders/PaymentsPlaceOrderB3CA1217', { ref: 'Orders-PlaceOrder', attributes: {} });
  names.register('Orders/PaymentsCapturePayment5EECF448', { ref: 'Orders-CapturePayment', attributes: {} });
  names.register('PaymentSubscribers/LedgerInboxTableEC58B91E', { ref: 'PaymentSubscribers-LedgerInbox', attributes: {} });
  names.register('PaymentSubscribers/LedgerQueueBDE79E93', { ref: `http://127.0.0.1:1/${ACCOUNT}/PaymentSubscribers-LedgerQueue`, attributes: {} });
  names.register('PaymentSubscribers/LedgerQueueDeadLetterQueue55AE17E8', { ref: `http://127.0.0.1:1/${ACCOUNT}/PaymentSubscribers-LedgerDlq`, attributes: {} });
  names.register('PaymentSubscribers/LedgerFunction75F6A5C6', { ref: 'PaymentSubscribers-Ledger', attributes: {} });
  const stacks = servedStacks({ assemblyDirectory: directory, stackNames: ['Orders', 'PaymentSubscribers'] }, names, new Date(0));
  const functions = new Map<string, InvokableFunction>(
    ['Orders-PlaceOrder', 'Orders-CapturePayment', 'PaymentSubscribers-Ledger'].map((name) => [name, { arn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`, environment: { NAME: name }, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]),
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

describe('verify, a split-stack app served by simulate (nu11 finding 6)', () => {
  test("(b) without --stack: the subscriber whose Operator output imports the flow's outbox from another stack is found", async () => {
    const flow = await findDeployedFlow(clients);
    expect(flow.subscribers.map((item) => [item.name, item.stackName, item.deployment.outboxTable])).toEqual([['Ledger', 'PaymentSubscribers', 'Orders-PaymentsOutboxTable7CA7A410']]);
  });

  test('(c) with --stack for both: the Ledger is a subscriber found (not a subscription of no subscriber)', async () => {
    const flow = await findDeployedFlow(clients, ['Orders', 'PaymentSubscribers']);
    expect(flow.subscribers.map((item) => item.name)).toEqual(['Ledger']);
    expect(flow.subscribers[0]!.environment).toEqual({ NAME: 'PaymentSubscribers-Ledger' });
  });

  test('(a) the producer is named as simulate names it: its construct path with the stack, or a trailing part of it', async () => {
    const flow = await findDeployedFlow(clients, ['Orders', 'PaymentSubscribers']);
    for (const reference of ['Orders/Payments/PlaceOrder', 'Payments/PlaceOrder', 'PlaceOrder', 'Orders/PaymentsPlaceOrderB3CA1217', 'PaymentsPlaceOrderB3CA1217']) {
      expect(findDeployedFunction(flow, reference).physicalId, reference).toBe('Orders-PlaceOrder');
    }
    expect(findDeployedFunction(flow, 'Orders/Payments/CapturePayment').physicalId).toBe('Orders-CapturePayment');
    // a path that is no suffix of any function's construct path is refused, naming the functions as simulate shows them
    expect(() => findDeployedFunction(flow, 'Shop/Payments/PlaceOrder')).toThrow(/names no function of the stacks \(.*Orders\/Payments\/PlaceOrder/);
  });
});
