/**
 * IAM evaluation end to end, through the command line, on copies of the example app broken the way apps most often
 * fail after `cdk deploy`: each run must exit 1 with an `access-denied` violation that names the role, the action, the
 * resource, the reason and the grant that fixes it. The unmodified example passing with IAM on is checked by
 * simulation.int.test.ts and the demo.
 */
import * as path from 'node:path';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../cli/main';
import { exampleCopy, replaceOnce, type ExampleCopy } from '../../support/example-copy';

const PROJECT = path.resolve(__dirname, '../../..');

const copies: ExampleCopy[] = [];
afterEach(() => {
  for (const copy of copies.splice(0)) copy.remove();
});

async function simulateCopy(copy: ExampleCopy, ...extra: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  copies.push(copy);
  let stdout = '';
  let stderr = '';
  const code = await main(
    [
      'simulate',
      '--app', copy.app,
      // into the run's temporary directory: each copy is its own app, and nothing is left to reuse
      '--synth',
      '--scenario', path.join(path.relative(PROJECT, copy.directory), 'example/simulation/scenario.ts'),
      '--count', '3', '--no-faults', '--quiet', '--seed', 'iam',
      '--endpoint', inject('dynamoDbEndpoint'),
      ...extra,
    ],
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT },
  );
  return { code, stdout, stderr };
}

describe('simulate with IAM evaluation', () => {
  test('a removed table grant is denied as in AWS, named with the grant that fixes it, and the run exits 1', async () => {
    // GIVEN the example without Billing's UpdateItem grant on the ledger
    const copy = exampleCopy((stack) => replaceOnce(stack, "ledger.grant(billing.consumerFunction, 'dynamodb:UpdateItem');", ''));

    // WHEN
    const { code, stdout } = await simulateCopy(copy);

    // THEN the denial names the role, the action, the table, why and the fix
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] IdempotentEventFlowExample\/Orders\/Billing\/Function\/Role \(IdempotentEventFlowExample\/Orders\/Billing\/Function\) may not dynamodb:UpdateItem on IdempotentEventFlowExample\/LedgerTable \(arn:aws:dynamodb:us-east-1:000000000000:table\/[^)]+\): no identity-based policy allows the dynamodb:UpdateItem action; denied [1-9]\d* time\(s\)\. Fix: ledgerTable\.grant\(billing\.consumerFunction, 'dynamodb:UpdateItem'\) .*\(billing: the Subscriber IdempotentEventFlowExample\/Orders\/Billing\)/,
    );
    expect(stdout).toMatch(/IAM: \d+ requests evaluated, \d+ authorized, [1-9]\d* denied/);
    // and deployed, no order would be billed: the messages fail with AccessDeniedException
    expect(stdout).toContain('AccessDeniedException');
    // nothing else was denied
    expect(stdout.match(/\[access-denied\]/g)).toHaveLength(1);
  });

  test("a business table under a customer-managed key the function's role may not use is denied at kms:Decrypt", async () => {
    // GIVEN the ledger encrypted with its own key: Table.grant gives the table action, not the key
    const copy = exampleCopy((stack) =>
      replaceOnce(
        stack,
        "const ledger = businessTable(this, 'LedgerTable', removalPolicy);",
        "const ledger = new dynamodb.Table(this, 'LedgerTable', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING }, " +
          "billingMode: dynamodb.BillingMode.PAY_PER_REQUEST, encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: new kms.Key(this, 'LedgerKey', { enableKeyRotation: true }), removalPolicy });",
      ),
    );

    // WHEN
    const { code, stdout } = await simulateCopy(copy);

    // THEN
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] IdempotentEventFlowExample\/Orders\/Billing\/Function\/Role \(IdempotentEventFlowExample\/Orders\/Billing\/Function\) may not kms:Decrypt on IdempotentEventFlowExample\/LedgerKey \(arn:aws:kms:us-east-1:000000000000:key\/[0-9a-f-]+\): no identity-based policy allows the kms:Decrypt action \(the key policy of IdempotentEventFlowExample\/LedgerKey leaves it to IAM policies\); denied [1-9]\d* time\(s\)\. Fix: ledgerKey\.grantDecrypt\(billing\.consumerFunction\)/,
    );
  });

  test('a queue subscribed by hand whose policy does not let the topic send gets nothing: SNS is denied, the events are lost and named', async () => {
    // GIVEN a user's own queue and consumer, subscribed to the flow's topic without the queue policy SqsSubscription adds
    const copy = exampleCopy(
      (stack) =>
        replaceOnce(
          replaceOnce(stack, "import * as sns from 'aws-cdk-lib/aws-sns';", [
            "import * as sns from 'aws-cdk-lib/aws-sns';",
            "import * as sqs from 'aws-cdk-lib/aws-sqs';",
            "import * as lambda from 'aws-cdk-lib/aws-lambda';",
            "import * as lambdaNodejs from 'aws-cdk-lib/aws-lambda-nodejs';",
            "import * as lambdaEventSources from 'aws-cdk-lib/aws-lambda-event-sources';",
          ].join('\n')),
          'const operator = new iam.Role(',
          [
            "const auditQueue = new sqs.Queue(this, 'AuditQueue', { enforceSSL: true });",
            "new sns.Subscription(this, 'AuditSubscription', { topic: this.flow.eventTopic.topic, protocol: sns.SubscriptionProtocol.SQS, endpoint: auditQueue.queueArn, rawMessageDelivery: true });",
            "const audit = new lambdaNodejs.NodejsFunction(this, 'Audit', { entry: path.join(__dirname, 'functions', 'audit.ts'), runtime: lambda.Runtime.NODEJS_22_X });",
            'audit.addEventSource(new lambdaEventSources.SqsEventSource(auditQueue, { reportBatchItemFailures: true }));',
            'const operator = new iam.Role(',
          ].join('\n    '),
        ),
      {},
      { 'functions/audit.ts': 'export const handler = async (): Promise<{ batchItemFailures: never[] }> => ({ batchItemFailures: [] });\n' },
    );

    // WHEN
    const { code, stdout } = await simulateCopy(copy);

    // THEN SNS's deliveries are denied by the queue's policy, and with no dead-letter queue on the subscription, lost
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] sns\.amazonaws\.com \(IdempotentEventFlowExample\/Orders\/EventTopic\) may not sqs:SendMessage on IdempotentEventFlowExample\/AuditQueue \(arn:aws:sqs:us-east-1:000000000000:[^)]+\): the resource policy of IdempotentEventFlowExample\/AuditQueue does not allow sns\.amazonaws\.com to sqs:SendMessage for IdempotentEventFlowExample\/Orders\/EventTopic \(aws:SourceArn\); denied [1-9]\d* time\(s\)\. Fix: ordersEventTopic\.addSubscription\(new subscriptions\.SqsSubscription\(auditQueue\)\)/,
    );
    expect(stdout).toMatch(/\[lost\] IdempotentEventFlowExample\/AuditSubscription\/Resource: event order-placed-\S+ matched the filter policy but was neither acknowledged nor dead-lettered: SNS could not deliver it \(User: sns\.amazonaws\.com is not authorized to perform: sqs:SendMessage/);
    expect(stdout.match(/\[access-denied\]/g)).toHaveLength(1);
  });

  test("the operator's BlockedMessages calls are authorized under the scenario's operator role", async () => {
    // GIVEN the operator role without its grant on the Notifications inbox
    const copy = exampleCopy((stack) => replaceOnce(stack, 'notifications.inboxTable?.grantOperator(operator);', ''));

    // WHEN the operator pass lists the blocked messages of each subscriber it has a decision for
    const { code, stdout } = await simulateCopy(copy);

    // THEN listing Notifications' blocked messages is denied, and only that
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] IdempotentEventFlowExample\/OperatorRole \(IdempotentEventFlowExample\/OperatorRole\) may not dynamodb:Query on IdempotentEventFlowExample\/Orders\/Notifications\/InboxTable \(arn:aws:dynamodb:us-east-1:000000000000:table\/[^/]+\/index\/[^)]+\): no identity-based policy allows the dynamodb:Query action/,
    );
    expect(stdout.match(/\[access-denied\]/g)).toHaveLength(1);
  });

  test('--iam off runs without evaluation and says so', async () => {
    const copy = exampleCopy((stack) => replaceOnce(stack, "ledger.grant(billing.consumerFunction, 'dynamodb:UpdateItem');", ''));

    const { code, stdout } = await simulateCopy(copy, '--iam', 'off');

    // the missing grant goes unseen without IAM: the verdict must say evaluation was off
    expect(stdout).toContain('IAM: not evaluated. IAM evaluation is off (--iam off)');
    expect(stdout).not.toContain('[access-denied]');
    expect(code).toBe(EXIT_CODE.OK);
  });
});
