/**
 * The sandbox app the CLI tests of `verify` run against (verify-refusal, verify-subscriber-elsewhere, verify-split-stacks): its
 * account, Billing's Operator output, the producer and consumer functions a served Lambda answers for, the scenario
 * module, the flow's topic with a subscriber in production, and the AWS environment that points the SDK at a served
 * gateway.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { InvokableFunction } from '../../simulator/aws/lambda-endpoint';
import { SimulatedTopic } from '../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../simulator/faults/fault-plan';
import { frozenClock } from '../simulator/aws/queue-test-kit';

/** The sandbox account the app is deployed in. */
export const SANDBOX = '111111111111';

/** The production account of the ledger team, whose subscriber the flow's topic also delivers to. */
export const PRODUCTION = '222222222222';

/**
 * The flow's topic `arn` (in the stack `stackName`, `<stackName>/Topic`), listing two SQS subscriptions: Billing's
 * queue in the sandbox, and the ledger team's queue in production.
 */
export function topicWithProductionSubscriber(arn: string, stackName: string): SimulatedTopic {
  return new SimulatedTopic({
    model: { key: `${stackName}/Topic`, stackName, logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 },
    arn,
    subscriptions: [],
    listed: [
      { subscriptionArn: `${arn}:billing`, owner: SANDBOX, protocol: 'sqs', endpoint: `arn:aws:sqs:us-east-1:${SANDBOX}:App-BillingQueue` },
      // the ledger team's subscriber, in its production account
      { subscriptionArn: `${arn}:ledger`, owner: PRODUCTION, protocol: 'sqs', endpoint: `arn:aws:sqs:us-east-1:${PRODUCTION}:Ledger-Queue` },
    ],
    faults: new FaultPlan('s', NO_FAULTS),
    clock: frozenClock(),
    matches: () => true,
  });
}

/** Billing's Operator output, in the sandbox account. */
export const BILLING = { format: 1, subscriberName: 'Billing', processingMode: 'transactional', deduplicationWindowSeconds: 86400, consumerFunctionName: 'App-Billing', inboxTable: 'App-BillingInbox', queueUrl: `http://127.0.0.1:1/${SANDBOX}/App-BillingQueue`, deadLetterQueueUrl: `http://127.0.0.1:1/${SANDBOX}/App-BillingDlq` };

/** The app's functions as a served Lambda invokes them; `onProduce` is called on each producer invocation. */
export function sandboxFunctions(onProduce: () => void): Map<string, InvokableFunction> {
  return new Map<string, InvokableFunction>([
    ['App-OrdersPlaceOrder12345678', { arn: `arn:aws:lambda:us-east-1:${SANDBOX}:function:App-OrdersPlaceOrder12345678`, environment: {}, invoke: async () => (onProduce(), { kind: 'returned' as const, response: { statusCode: 201 } }) }],
    ['App-Billing', { arn: `arn:aws:lambda:us-east-1:${SANDBOX}:function:App-Billing`, environment: {}, invoke: async () => ({ kind: 'returned' as const, response: {} }) }],
  ]);
}

/** Replaces every AWS_ variable so the SDK reaches `endpoint` in us-east-1, signed with `accessKeyId`. */
export function useServedAws(endpoint: string, accessKeyId: string): void {
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, { AWS_ENDPOINT_URL: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: 'simulator' });
}

/** Writes the scenario module (the producer Orders/PlaceOrder, one order a command) as `scenario.cjs` in `directory`. */
export function writeSandboxScenario(directory: string): void {
  writeFileSync(path.join(directory, 'scenario.cjs'), "module.exports = { scenario: { producer: { function: 'Orders/PlaceOrder', commands: (count) => Array.from({ length: count }, (_, i) => ({ orderId: 'order-' + i })) } } };\n");
}
