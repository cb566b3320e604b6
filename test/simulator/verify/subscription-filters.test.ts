/**
 * Review v11, V11-6: verify decided which of the run's events a subscriber must apply from the filter its Operator output
 * states, not from the filter the deployed SNS subscription has. A subscription changed out of band (console, another
 * stack, drift) then made verify demand events SNS never delivers (a false VIOLATED), or not demand events it does
 * deliver (an unchecked apply: a possible false OK). verify now reads each subscriber's subscription
 * (GetSubscriptionAttributes, through the served SNS endpoint and the real SDK client), matches the run's events with
 * its FilterPolicy and FilterPolicyScope, names a difference, and says NOT PROVEN for a subscription it cannot read.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic, type ListedSubscription } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow, DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { takenEvents, type RunEvent } from '../../../simulator/verify/observe';
import { filterDifferenceLine, narrowedFilterLines, readSubscriptionFilters } from '../../../simulator/verify/subscription-filters';
import { frozenClock } from '../aws/queue-test-kit';

const ACCOUNT = '111111111111';
const TOPIC = `arn:aws:sns:us-east-1:${ACCOUNT}:Events`;
const PLACED = { type: ['com.example.OrderPlaced'] };
const BILLED = { type: ['com.example.OrderBilled'] };

function subscriber(name: string, filterPolicy?: Record<string, unknown>): DeployedSubscriber {
  return {
    name,
    stackName: 'App',
    environment: {},
    deployment: {
      format: 1,
      subscriberName: name,
      processingMode: 'transactional',
      queueUrl: `http://127.0.0.1:1/${ACCOUNT}/${name}Queue`,
      deadLetterQueueUrl: `http://127.0.0.1:1/${ACCOUNT}/${name}Dlq`,
      ...(filterPolicy === undefined ? {} : { filterPolicy, filterPolicyScope: 'MessageBody' as const }),
    },
  };
}

/** The topic's subscription to `name`'s queue, with the filter it has now. */
function subscription(name: string, filterPolicy?: Record<string, unknown>): ListedSubscription {
  return {
    subscriptionArn: `${TOPIC}:${name.toLowerCase()}-0000-4000-8000-000000000000`,
    owner: ACCOUNT,
    protocol: 'sqs',
    endpoint: `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}Queue`,
    ...(filterPolicy === undefined ? {} : { filterPolicy, filterPolicyScope: 'MessageBody' as const }),
  };
}

function runEvent(id: string, type: string): RunEvent {
  const event = { id, type, data: { orderId: id } };
  return { event, body: JSON.stringify({ specversion: '1.0', source: 'test', ...event }), ordered: false };
}

const events = new Map([runEvent('placed-1', 'com.example.OrderPlaced'), runEvent('billed-1', 'com.example.OrderBilled')].map((item) => [item.event.id, item]));

// Billing's subscription was changed to take OrderBilled; Shipping's lost its filter; Audit's is as deployed; Returns'
// (a subscriber only the R12B-1 test has) was given the console's default scope, MessageAttributes
const LISTED = [subscription('Billing', BILLED), subscription('Shipping'), subscription('Audit', PLACED), { ...subscription('Returns'), filterPolicy: PLACED, filterPolicyScope: 'MessageAttributes' as const }];
const topic = new SimulatedTopic({
  model: { key: 'App/Topic', stackName: 'App', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 },
  arn: TOPIC,
  subscriptions: [],
  listed: LISTED,
  faults: new FaultPlan('s', NO_FAULTS),
  clock: frozenClock(),
  matches: () => true,
});
const flow: DeployedFlow = { stackNames: ['App'], flows: [{ outboxTable: 'App-Outbox', topicArn: TOPIC }], resources: [], subscribers: [subscriber('Billing', PLACED), subscriber('Shipping', PLACED), subscriber('Audit', PLACED)] };

let sns: LoopbackServer;
const clients: SNSClient[] = [];
function signedAs(accessKeyId: string): Pick<VerifyClients, 'sns'> {
  const client = new SNSClient({ endpoint: sns.endpoint, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 's' }, maxAttempts: 1 });
  clients.push(client);
  return { sns: client };
}

beforeAll(async () => {
  sns = await startSnsEndpoint({
    resolveTopic: (arn) => (arn === TOPIC ? topic : undefined),
    authorize: async ({ accessKeyId, action }) => (accessKeyId === 'refused' ? `User: refused is not authorized to perform: sns:${action} on resource: ${TOPIC}` : undefined),
  });
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await sns.stop();
});

describe("verify matches the run's events with the deployed subscription's filter (V11-6)", () => {
  test('a subscription changed out of band decides what the subscriber must apply, and the difference is named with both policies', async () => {
    const read = await readSubscriptionFilters(signedAs('verify'), flow, LISTED, []);
    const [billing, shipping, audit] = read.flow.subscribers.map((item) => [...takenEvents(item, events)].sort());

    // Billing must apply the OrderBilled event SNS delivers it, not the OrderPlaced one its Operator output names
    expect(billing).toEqual(['billed-1']);
    // Shipping takes every event: an OrderBilled it gets is checked too (before: unchecked, a possible false OK)
    expect(shipping).toEqual(['billed-1', 'placed-1']);
    expect(audit).toEqual(['placed-1']);
    expect(read.notProven).toEqual([]);
    expect(read.differences).toEqual([
      { subscriber: 'Billing', subscriptionArn: LISTED[0]!.subscriptionArn, operatorOutput: { filterPolicy: PLACED, filterPolicyScope: 'MessageBody' }, deployed: { filterPolicy: BILLED, filterPolicyScope: 'MessageBody' } },
      { subscriber: 'Shipping', subscriptionArn: LISTED[1]!.subscriptionArn, operatorOutput: { filterPolicy: PLACED, filterPolicyScope: 'MessageBody' }, deployed: { filterPolicyScope: 'MessageAttributes' } },
    ]);
    const line = filterDifferenceLine(read.differences[0]!);
    expect(line).toContain(`Billing: its subscription ${LISTED[0]!.subscriptionArn} filters with ${JSON.stringify(BILLED)} (scope MessageBody)`);
    expect(line).toContain(`its Operator output says ${JSON.stringify(PLACED)} (scope MessageBody)`);
    expect(filterDifferenceLine(read.differences[1]!)).toContain('filters with no filter policy (every event)');
  });

  test('a subscription whose attributes SNS refuses leaves the subscriber NOT PROVEN, naming why and the permission; its Operator output still decides', async () => {
    const read = await readSubscriptionFilters(signedAs('refused'), flow, LISTED, []);
    expect(read.notProven).toHaveLength(3);
    expect(read.notProven[0]).toMatch(new RegExp(`^Billing: verify could not read the attributes of its subscription ${LISTED[0]!.subscriptionArn} \\(AuthorizationError[^)]*sns:GetSubscriptionAttributes.*give verify sns:GetSubscriptionAttributes`));
    expect(read.differences).toEqual([]);
    expect([...takenEvents(read.flow.subscribers[0]!, events)]).toEqual(['placed-1']);
  });

  test('a subscriber no listed subscription delivers to is NOT PROVEN, and so is one whose topic could not be listed', async () => {
    const missing = await readSubscriptionFilters(signedAs('verify'), flow, [LISTED[0]!, LISTED[2]!], []);
    expect(missing.notProven).toEqual([expect.stringMatching(/^Shipping: no subscription of the flow's topics delivers to its queue http:\/\/127\.0\.0\.1:1\/111111111111\/ShippingQueue/)]);
    const unlisted = await readSubscriptionFilters(signedAs('verify'), flow, [], [TOPIC]);
    expect(unlisted.notProven).toHaveLength(3);
    expect(unlisted.notProven[0]).toContain(`the subscriptions of ${TOPIC} could not be listed`);
  });
});

describe("review r12b, R12B-1: a deployed filter that takes fewer of the run's events than the app's", () => {
  test("the events the Operator output's filter takes and the deployed subscription does not are a line of the verdict's unproven, naming the subscriber, the count, the ids and both filters; a filter that only widens is none", async () => {
    // GIVEN Billing's subscription narrowed to OrderBilled (its Operator output: OrderPlaced), Shipping's widened to
    // every event, Audit's as deployed, and Returns' given the console's default scope (MessageAttributes: the relay
    // publishes none, so SNS delivers it nothing)
    const withReturns: DeployedFlow = { ...flow, subscribers: [...flow.subscribers, subscriber('Returns', PLACED)] };
    const read = await readSubscriptionFilters(signedAs('verify'), withReturns, LISTED, []);
    const placed = new Map([...events.values(), ...[2, 3, 4, 5].map((n) => runEvent(`placed-${n}`, 'com.example.OrderPlaced'))].map((item) => [item.event.id, item]));

    // WHEN the lines of the verdict's unproven are built from what was read and the run's events
    const lines = narrowedFilterLines(read.flow.subscribers, placed);

    // THEN Billing and Returns are named, each with the five placed events it was never asked for (three ids named)
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `Billing: 5 of the run's events its Operator output's filter takes, its deployed subscription does not (placed-1, placed-2, placed-3, ...): ` +
        `SNS did not deliver them to it, so verify did not check them; its subscription ${LISTED[0]!.subscriptionArn} filters with ${JSON.stringify(BILLED)} (scope MessageBody), ` +
        `but its Operator output says ${JSON.stringify(PLACED)} (scope MessageBody): changed since the stack deployed it (console, another stack, drift)? if the app means it to take them, deploy its filter again (cdk deploy)`,
    );
    expect(lines[1]).toMatch(/^Returns: 5 of the run's events .* filters with \{"type":\["com\.example\.OrderPlaced"\]\} \(scope MessageAttributes\), but its Operator output says .* \(scope MessageBody\)/);
    // a subscriber whose subscription could not be read keeps its Operator output's filter: nothing is missed
    const refused = await readSubscriptionFilters(signedAs('refused'), withReturns, LISTED, []);
    expect(narrowedFilterLines(refused.flow.subscribers, placed)).toEqual([]);
  });
});
