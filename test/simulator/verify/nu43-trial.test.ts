/**
 * The fixes of issue 43's new-user trial of verify (nu43, /work/runs/nu43/findings.md; eighth session, f43): each test
 * failed before its fix. Against the simulator's SQS endpoint and DynamoDB Local (the verify kit), on a virtual clock.
 */
import { describe, expect, test } from 'vitest';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { refuseOtherAccounts } from '../../../simulator/verify/verify-run';

/** A flow in the sandbox account 111111111111 whose subscriber Billing's queue URLs are `queueUrl` and `deadLetterQueueUrl`. */
function flowWithQueues(queueUrl: string, deadLetterQueueUrl: string, relayDeadLetterQueueUrl?: string): DeployedFlow {
  return {
    stackNames: ['App'],
    accounts: ['111111111111'],
    stackAccounts: { App: '111111111111' },
    flows: relayDeadLetterQueueUrl === undefined ? [] : [{ outboxTable: 'App-Outbox', relayDeadLetterQueueUrl }],
    resources: [],
    subscribers: [{ name: 'Billing', stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: 'Billing', processingMode: 'multi-step', queueUrl, deadLetterQueueUrl } }],
  };
}

describe('nu43 finding 4: the cross-account guard reads the account of every SQS queue URL form', () => {
  const sandbox = 'https://sqs.us-east-1.amazonaws.com/111111111111/Billing-dlq';
  test.each([
    ['the legacy form', 'https://us-east-1.queue.amazonaws.com/999999999999/Billing-queue'],
    ['a VPC endpoint', 'https://vpce-0a1b2c3d4e5f-abcdefgh.sqs.us-east-1.vpce.amazonaws.com/999999999999/Billing-queue'],
    ['a served run', 'http://127.0.0.1:4566/999999999999/Billing-queue'],
    ['the China partition', 'https://sqs.cn-north-1.amazonaws.com.cn/999999999999/Billing-queue'],
  ])('%s: a queue in another account is refused', (_form, queueUrl) => {
    expect(() => refuseOtherAccounts(flowWithQueues(queueUrl, sandbox), ['111111111111'])).toThrow(/999999999999/);
  });

  test("a relay dead-letter queue in the legacy form in another account is refused", () => {
    const own = 'https://sqs.us-east-1.amazonaws.com/111111111111/Billing-queue';
    expect(() => refuseOtherAccounts(flowWithQueues(own, sandbox, 'https://us-east-1.queue.amazonaws.com/999999999999/Relay-dlq'), ['111111111111'])).toThrow(/999999999999/);
  });

  test('a queue URL whose account cannot be read is refused, naming it', () => {
    expect(() => refuseOtherAccounts(flowWithQueues('https://queues.example.com/Billing-queue', sandbox), ['111111111111'])).toThrow(/https:\/\/queues\.example\.com\/Billing-queue/);
  });

  test('queues in the allowed account, in any form, pass', () => {
    expect(() => refuseOtherAccounts(flowWithQueues('https://us-east-1.queue.amazonaws.com/111111111111/Billing-queue', 'http://127.0.0.1:4566/111111111111/Billing-dlq'), ['111111111111'])).not.toThrow();
  });
});
