/**
 * The sandbox app the CLI tests of `verify`'s refusals run against (verify-refusal, verify-subscriber-elsewhere): its
 * account, Billing's Operator output, the producer and consumer functions a served Lambda answers for, the scenario
 * module, and the AWS environment that points the SDK at a served gateway.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { InvokableFunction } from '../../simulator/aws/lambda-endpoint';

/** The sandbox account the app is deployed in. */
export const SANDBOX = '111111111111';

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
