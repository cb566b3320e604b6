/**
 * Review v11 (session 11) of `verify` (issue 43): each test names a way verify said OK, or misled, while something was
 * wrong or unchecked (findings in /work/runs/s11/v11.md). Against real parts: the served gateway (CloudFormation, SNS
 * endpoints of the simulator, the real SDK clients) and DynamoDB Local.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OUTBOX_ITEM } from '../../../lambda/contract/wire-format';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow, type DeployedFlow, type DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { readRunEvents, takenEvents } from '../../../simulator/verify/observe';
import { newRunId } from '../../../simulator/verify/run-ids';
import { subscriptionsNotSeen } from '../../../simulator/verify/topic-subscriptions';
import { probesNotExercised } from '../../../simulator/verify/unseen-effects';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { frozenClock } from '../aws/queue-test-kit';
import { VerifyTestbed } from './verify-test-kit';

const FLOW = '111111111111';
const TRACKING = '333333333333';
const TOPIC = `arn:aws:sns:us-east-1:${FLOW}:Events`;
const ORDERED_TOPIC = `arn:aws:sns:us-east-1:${FLOW}:Orders-OrderedRelay-Topic.fifo`;

describe('V11-1: the ordered relay\'s FIFO topic', () => {
  // the flow's stack: the flow (its Operator output), an ordered relay's FIFO topic among its resources; the only
  // ordered subscriber, OrderTracking, deployed by another team in account 333333333333 (lib/private/remote-ordered-subscription.ts)
  const STACKS: ServedStack[] = [
    {
      stackName: 'Orders',
      stackId: `arn:aws:cloudformation:us-east-1:${FLOW}:stack/Orders/00000000-0000-4000-8000-000000000001`,
      createdAt: '2026-01-01T00:00:00.000Z',
      outputs: [
        { key: 'FlowOperator', value: JSON.stringify({ outboxTable: 'Outbox', topicArn: TOPIC }) },
        {
          key: 'BillingOperator',
          value: JSON.stringify({
            format: 1,
            subscriberName: 'Billing',
            processingMode: 'transactional',
            deduplicationWindowSeconds: 86400,
            inboxTable: 'BillingInbox',
            consumerFunctionName: 'BillingConsumer',
            queueUrl: `https://sqs.us-east-1.amazonaws.com/${FLOW}/BillingQueue`,
            deadLetterQueueUrl: `https://sqs.us-east-1.amazonaws.com/${FLOW}/BillingDlq`,
          }),
        },
      ],
      resources: [
        { logicalId: 'OrderedRelayTopicB5E5F3A1', type: 'AWS::SNS::Topic', physicalId: ORDERED_TOPIC },
        { logicalId: 'OpsTopic0A1B2C3D', type: 'AWS::SNS::Topic', physicalId: `arn:aws:sns:us-east-1:${FLOW}:Ops` },
      ],
    },
  ];
  const topicOf = (arn: string, fifo: boolean, listed: ConstructorParameters<typeof SimulatedTopic>[0]['listed']) =>
    new SimulatedTopic({
      model: { key: arn, stackName: 'Orders', logicalId: 'Topic', fifo, maximumMessageSize: 262_144 },
      arn,
      subscriptions: [],
      listed,
      faults: new FaultPlan('s', NO_FAULTS),
      clock: frozenClock(),
      matches: () => true,
    });
  const topics = new Map([
    [TOPIC, topicOf(TOPIC, false, [{ subscriptionArn: `${TOPIC}:billing`, owner: FLOW, protocol: 'sqs', endpoint: `arn:aws:sqs:us-east-1:${FLOW}:BillingQueue` }])],
    [
      ORDERED_TOPIC,
      topicOf(ORDERED_TOPIC, true, [{ subscriptionArn: `${ORDERED_TOPIC}:tracking`, owner: TRACKING, protocol: 'sqs', endpoint: `arn:aws:sqs:us-east-1:${TRACKING}:OrderTracking.fifo` }]),
    ],
    // the alarms' ops topic mails a person: not a subscriber of the flow, never a gap
    [`arn:aws:sns:us-east-1:${FLOW}:Ops`, topicOf(`arn:aws:sns:us-east-1:${FLOW}:Ops`, false, [{ subscriptionArn: 'ops:mail', owner: FLOW, protocol: 'email', endpoint: 'ops@example.com' }])],
  ]);
  let sns: LoopbackServer;
  let gateway: LoopbackServer;
  let clients: VerifyClients;
  const environment = { ...process.env };

  beforeAll(async () => {
    sns = await startSnsEndpoint({ resolveTopic: (arn) => topics.get(arn) });
    const functions = new Map<string, InvokableFunction>([['BillingConsumer', { arn: `arn:aws:lambda:us-east-1:${FLOW}:function:BillingConsumer`, environment: {}, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]]);
    gateway = await startAwsGateway({ forward: { sns: sns.endpoint }, handle: { cloudformation: cloudFormationHandler(STACKS), lambda: lambdaHandler(functions, [], () => 'the test run') } });
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    Object.assign(process.env, { AWS_ENDPOINT_URL: gateway.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: FLOW, AWS_SECRET_ACCESS_KEY: 'simulator' });
    clients = verifyClients();
  });

  afterAll(async () => {
    clients.destroy();
    process.env = environment;
    await gateway.stop();
    await sns.stop();
  });

  test('an ordered subscriber in another account, subscribed to the ordered relay\'s FIFO topic, is named: the verdict cannot be OK', async () => {
    const flow = await findDeployedFlow(clients);
    // GIVEN verify found Billing only (the ordered subscriber's stack is in account 333333333333)
    expect(flow.subscribers.map((item) => item.name)).toEqual(['Billing']);
    // WHEN it lists the subscriptions it could not see
    const lines = await subscriptionsNotSeen(clients, flow);
    // THEN OrderTracking's queue is named (before the fix: only the flow's standard topic was listed, lines were [],
    // and the run said OK without OrderTracking's events ever being checked); the ops topic's mail is not a gap
    expect(lines).toEqual([expect.stringContaining(`arn:aws:sqs:us-east-1:${TRACKING}:OrderTracking.fifo`)]);
    expect(lines[0]).toContain(ORDERED_TOPIC);
  });
});

describe('V11-2: a subscriber the scenario has an effect probe for, whose filter took none of the run\'s events', () => {
  test('is a reason the verdict is NOT PROVEN: its probe never ran over an event', () => {
    // GIVEN the run committed 12 events; Shipping's deployed filter (a typo: 'com.example.OrderPlcaed') took none
    const lines = probesNotExercised(
      [
        { name: 'Shipping', taken: 0 },
        { name: 'Billing', taken: 12 },
        { name: 'Audit', taken: 0 },
      ],
      new Set(['Shipping', 'Billing']),
      12,
    );
    // THEN Shipping is named (its probe exists: the scenario expects it to apply some of the run's events); Audit, with
    // no probe, is not (a subscriber of event types the scenario does not produce is no gap)
    expect(lines).toEqual([expect.stringMatching(/^Shipping took none of the run's 12 event\(s\)/)]);
    // and no run event at all: said once elsewhere (verdict.ts), not per subscriber
    expect(probesNotExercised([{ name: 'Shipping', taken: 0 }], new Set(['Shipping']), 0)).toEqual([]);
  });
});

describe('V11-3: two flows (two outboxes) in the stacks verify reads', () => {
  const bed = VerifyTestbed.start();
  test("a subscriber takes only the run's events of its own flow's outbox, not another flow's", async () => {
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([9, 9, 9, 9]));
    const [orders, payments] = [uniqueTableName('v11-orders-outbox'), uniqueTableName('v11-payments-outbox')];
    for (const table of [orders, payments]) await createTable(bed.dynamoDb, table, { partitionKey: 'pk' });
    const placedId = `order-placed-${runId}-order-00001`;
    const envelope = { specversion: '1.0', id: placedId, type: 'com.example.OrderPlaced', source: 'orders', data: { orderId: `${runId}-order-00001` } };
    await bed.documents.send(
      new PutCommand({ TableName: orders, Item: { pk: `${OUTBOX_ITEM.KEY_PREFIX}${placedId}`, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE, [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: JSON.stringify(envelope) } }),
    );
    const subscriberOf = (name: string, outboxTable: string): DeployedSubscriber => ({
      name,
      stackName: 'App',
      environment: {},
      deployment: { format: 1, subscriberName: name, processingMode: 'transactional', deduplicationWindowSeconds: 86400, inboxTable: `${name}Inbox`, outboxTable, queueUrl: `https://sqs.us-east-1.amazonaws.com/${FLOW}/${name}`, deadLetterQueueUrl: `https://sqs.us-east-1.amazonaws.com/${FLOW}/${name}Dlq` },
    });
    // GIVEN Shipping subscribes to the Orders flow, Refunds (no filter: every event of its topic) to the Payments flow
    const shipping = subscriberOf('Shipping', orders);
    const refunds = subscriberOf('Refunds', payments);
    const flow: DeployedFlow = { stackNames: ['App'], resources: [], subscribers: [shipping, refunds], flows: [{ outboxTable: orders, topicArn: TOPIC }, { outboxTable: payments, topicArn: `${TOPIC}-payments` }] };
    // WHEN the run's one event was committed to the Orders outbox
    const events = await readRunEvents(bed.clients(), flow, runId);
    // THEN Shipping takes it and Refunds does not: SNS delivers an event only to its own topic's subscribers (before the
    // fix Refunds "took" it too, never got it, and a correct app ended VIOLATED 'lost' or not quiet)
    expect([...takenEvents(shipping, events)]).toEqual([placedId]);
    expect([...takenEvents(refunds, events)]).toEqual([]);
  });
});
