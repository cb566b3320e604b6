/**
 * IAM evaluation end to end, through the command line, on the example app broken the way apps most often fail after
 * `cdk deploy`: each run must exit 1 with an `access-denied` violation that names the role, the action, the resource,
 * the reason and the grant that fixes it. The unmodified example passing with IAM on is checked by
 * simulation.int.test.ts and the demo.
 *
 * Each break is made in a copy of the example's cloud assembly, synthesized once per test run (see
 * assembly-variant.ts), by the template change that the break in the app's source produces: IAM is evaluated on the
 * templates' policies, so a removed grant statement, a key policy or a queue policy is the same denial whichever way the
 * template got it, and a synthesis per test (about 10 s each) proved nothing more. No test here goes through an app
 * and `--synth`: that `simulate --app --synth` synthesizes an app and runs what it synthesized is proven by
 * test/cli/simulate-command.int.test.ts (its non-idempotent app fixture).
 */
import * as path from 'node:path';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { IAM_NOT_PROVEN_TEXT } from '../../../simulator/check/iam-not-evaluated';
import {
  arnOf,
  type AssemblyVariant,
  exampleAssemblyVariant,
  logicalIdAt,
  mentions,
  policyStatements,
  removeStatements,
  type TemplateJson,
  writeCodeAsset,
} from '../../support/assembly-variant';

const PROJECT = path.resolve(__dirname, '../../..');

const variants: AssemblyVariant[] = [];
afterEach(() => {
  for (const variant of variants.splice(0)) variant.remove();
});

async function simulateVariant(variant: AssemblyVariant, ...extra: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  variants.push(variant);
  let stdout = '';
  let stderr = '';
  const code = await main(
    [
      'simulate',
      '--assembly', variant.directory,
      '--scenario', 'example/simulation/scenario.ts',
      '--count', '3', '--no-faults', '--quiet', '--seed', 'iam',
      '--endpoint', inject('dynamoDbEndpoint'),
      ...extra,
    ],
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT },
  );
  return { code, stdout, stderr };
}

/** The example without `ledger.grant(billing.consumerFunction, 'dynamodb:UpdateItem')`: its statement removed from Billing's policy. */
function withoutLedgerGrant(template: TemplateJson): void {
  const ledger = logicalIdAt(template, 'LedgerTable/Resource');
  removeStatements(
    policyStatements(template, 'Orders/Billing/Function/Role/DefaultPolicy/Resource'),
    (statement) => statement.Action === 'dynamodb:UpdateItem' && mentions(statement.Resource, ledger),
    "Billing's dynamodb:UpdateItem grant on the ledger",
  );
}

describe('simulate with IAM evaluation', () => {
  test('a removed table grant is denied as in AWS, named with the grant that fixes it, and the run exits 1', async () => {
    // GIVEN the example without Billing's UpdateItem grant on the ledger
    const variant = await exampleAssemblyVariant(withoutLedgerGrant);

    // WHEN
    const { code, stdout } = await simulateVariant(variant);

    // THEN the denial names the role, the action, the table, why and the fix
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] IdempotentEventFlowExample\/Orders\/Billing\/Function\/Role \(IdempotentEventFlowExample\/Orders\/Billing\/Function\) may not dynamodb:UpdateItem on IdempotentEventFlowExample\/LedgerTable \(arn:aws:dynamodb:eu-west-1:111111111111:table\/[^)]+\): no identity-based policy allows the dynamodb:UpdateItem action; denied [1-9]\d* time\(s\)\. Fix: ledgerTable\.grant\(billing\.consumerFunction, 'dynamodb:UpdateItem'\) .*\(billing: the Subscriber IdempotentEventFlowExample\/Orders\/Billing\)/,
    );
    expect(stdout).toMatch(/IAM: \d+ requests evaluated, \d+ authorized, [1-9]\d* denied/);
    // and deployed, no order would be billed: the messages fail with AccessDeniedException
    expect(stdout).toContain('AccessDeniedException');
    // nothing else was denied
    expect(stdout.match(/\[access-denied\]/g)).toHaveLength(1);
  });

  test("a business table under a customer-managed key the function's role may not use is denied at kms:Decrypt", async () => {
    // GIVEN the ledger encrypted with its own key: Table.grant gives the table action, not the key. What CDK synthesizes
    // for `new dynamodb.Table(this, 'LedgerTable', { ..., encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
    // encryptionKey: new kms.Key(this, 'LedgerKey', { enableKeyRotation: true }) })`: the key, with CDK's default key
    // policy (the account's root: the key leaves access to IAM policies), and the table's SSE under it
    const variant = await exampleAssemblyVariant((template) => {
      template.Resources.LedgerKey4AEFADD0 = {
        Type: 'AWS::KMS::Key',
        Properties: {
          EnableKeyRotation: true,
          KeyPolicy: {
            Statement: [
              {
                Action: 'kms:*',
                Effect: 'Allow',
                Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] } },
                Resource: '*',
              },
            ],
            Version: '2012-10-17',
          },
        },
        UpdateReplacePolicy: 'Retain',
        DeletionPolicy: 'Retain',
        Metadata: { 'aws:cdk:path': 'IdempotentEventFlowExample/LedgerKey/Resource' },
      };
      const ledger = template.Resources[logicalIdAt(template, 'LedgerTable/Resource')]!;
      ledger.Properties!.SSESpecification = { KMSMasterKeyId: arnOf('LedgerKey4AEFADD0'), SSEEnabled: true, SSEType: 'KMS' };
    });

    // WHEN
    const { code, stdout } = await simulateVariant(variant);

    // THEN
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] IdempotentEventFlowExample\/Orders\/Billing\/Function\/Role \(IdempotentEventFlowExample\/Orders\/Billing\/Function\) may not kms:Decrypt on IdempotentEventFlowExample\/LedgerKey \(arn:aws:kms:eu-west-1:111111111111:key\/[0-9a-f-]+\): no identity-based policy allows the kms:Decrypt action \(the key policy of IdempotentEventFlowExample\/LedgerKey leaves it to IAM policies\); denied [1-9]\d* time\(s\)\. Fix: ledgerKey\.grantDecrypt\(billing\.consumerFunction\)/,
    );
  });

  test('a queue subscribed by hand whose policy does not let the topic send gets nothing: SNS is denied, the events are lost and named', async () => {
    // GIVEN a user's own queue and consumer, subscribed to the flow's topic without the queue policy SqsSubscription adds:
    // what CDK synthesizes for
    //   const auditQueue = new sqs.Queue(this, 'AuditQueue', { enforceSSL: true });
    //   new sns.Subscription(this, 'AuditSubscription', { topic: this.flow.eventTopic.topic, protocol: sns.SubscriptionProtocol.SQS,
    //     endpoint: auditQueue.queueArn, rawMessageDelivery: true });
    //   const audit = new lambda.Function(this, 'Audit', { code: lambda.Code.fromAsset(...), handler: 'index.handler', runtime: lambda.Runtime.NODEJS_22_X });
    //   audit.addEventSource(new lambdaEventSources.SqsEventSource(auditQueue, { reportBatchItemFailures: true }));
    // (the queue's only policy statement is enforceSSL's Deny)
    const variant = await exampleAssemblyVariant((template, directory) => {
      const topic = logicalIdAt(template, 'Orders/EventTopic/Resource/Resource');
      const at = (constructPath: string): { Metadata: Record<string, unknown> } => ({ Metadata: { 'aws:cdk:path': `IdempotentEventFlowExample/${constructPath}` } });
      const queue = { 'Fn::GetAtt': ['AuditQueue1D3C234B', 'Arn'] };
      Object.assign(template.Resources, {
        AuditQueue1D3C234B: { Type: 'AWS::SQS::Queue', UpdateReplacePolicy: 'Delete', DeletionPolicy: 'Delete', ...at('AuditQueue/Resource') },
        AuditQueuePolicyAD440BFB: {
          Type: 'AWS::SQS::QueuePolicy',
          Properties: {
            PolicyDocument: {
              Statement: [{ Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Effect: 'Deny', Principal: { AWS: '*' }, Resource: queue }],
              Version: '2012-10-17',
            },
            Queues: [{ Ref: 'AuditQueue1D3C234B' }],
          },
          ...at('AuditQueue/Policy/Resource'),
        },
        AuditSubscriptionFFB356F7: {
          Type: 'AWS::SNS::Subscription',
          Properties: { Endpoint: queue, Protocol: 'sqs', RawMessageDelivery: true, TopicArn: { Ref: topic } },
          ...at('AuditSubscription/Resource'),
        },
        AuditServiceRoleC767BE4A: {
          Type: 'AWS::IAM::Role',
          Properties: {
            AssumeRolePolicyDocument: { Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }], Version: '2012-10-17' },
            ManagedPolicyArns: [{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']] }],
          },
          ...at('Audit/ServiceRole/Resource'),
        },
        AuditServiceRoleDefaultPolicyD0026731: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyDocument: {
              Statement: [
                {
                  Action: ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
                  Effect: 'Allow',
                  Resource: queue,
                },
              ],
              Version: '2012-10-17',
            },
            PolicyName: 'AuditServiceRoleDefaultPolicyD0026731',
            Roles: [{ Ref: 'AuditServiceRoleC767BE4A' }],
          },
          ...at('Audit/ServiceRole/DefaultPolicy/Resource'),
        },
        Audit3D8ADE0A: {
          Type: 'AWS::Lambda::Function',
          Properties: {
            Code: { S3Bucket: { 'Fn::Sub': 'cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}' }, S3Key: 'audit.zip' },
            Handler: 'index.handler',
            Role: { 'Fn::GetAtt': ['AuditServiceRoleC767BE4A', 'Arn'] },
            Runtime: 'nodejs22.x',
          },
          DependsOn: ['AuditServiceRoleDefaultPolicyD0026731', 'AuditServiceRoleC767BE4A'],
          Metadata: {
            'aws:cdk:path': 'IdempotentEventFlowExample/Audit/Resource',
            'aws:asset:path': writeCodeAsset(directory, 'audit', 'exports.handler = async () => ({ batchItemFailures: [] });\n'),
            'aws:asset:property': 'Code',
          },
        },
        AuditSqsEventSourceIdempotentEventFlowExampleAuditQueue1AAD7E77EDF3B394: {
          Type: 'AWS::Lambda::EventSourceMapping',
          Properties: { EventSourceArn: queue, FunctionName: { Ref: 'Audit3D8ADE0A' }, FunctionResponseTypes: ['ReportBatchItemFailures'] },
          ...at('Audit/SqsEventSource:IdempotentEventFlowExampleAuditQueue1AAD7E77/Resource'),
        },
      });
    });

    // WHEN
    const { code, stdout } = await simulateVariant(variant);

    // THEN SNS's deliveries are denied by the queue's policy, and with no dead-letter queue on the subscription, lost
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] sns\.amazonaws\.com \(IdempotentEventFlowExample\/Orders\/EventTopic\) may not sqs:SendMessage on IdempotentEventFlowExample\/AuditQueue \(arn:aws:sqs:eu-west-1:111111111111:[^)]+\): the resource policy of IdempotentEventFlowExample\/AuditQueue does not allow sns\.amazonaws\.com to sqs:SendMessage for IdempotentEventFlowExample\/Orders\/EventTopic \(aws:SourceArn\); denied [1-9]\d* time\(s\)\. Fix: ordersEventTopic\.addSubscription\(new subscriptions\.SqsSubscription\(auditQueue\)\)/,
    );
    expect(stdout).toMatch(/\[lost\] IdempotentEventFlowExample\/AuditSubscription\/Resource: event order-placed-\S+ matched the filter policy but was neither acknowledged nor dead-lettered: SNS could not deliver it \(User: sns\.amazonaws\.com is not authorized to perform: sqs:SendMessage/);
    expect(stdout.match(/\[access-denied\]/g)).toHaveLength(1);
  });

  test("the operator's BlockedMessages calls are authorized under the scenario's operator role", async () => {
    // GIVEN the operator role without `notifications.inboxTable?.grantOperator(operator)`: its statements on the
    // Notifications inbox (its BlockedMessages index, its items) removed; each is a statement of its own, the library's
    // Sid keeping CDK from merging it with the Invoicing inbox's
    const variant = await exampleAssemblyVariant((template) => {
      const inbox = logicalIdAt(template, 'Orders/Notifications/InboxTable/Resource/Resource');
      removeStatements(policyStatements(template, 'OperatorRole/DefaultPolicy/Resource'), (statement) => mentions(statement.Resource, inbox), "the operator's grant on the Notifications inbox");
    });

    // WHEN the operator pass lists the blocked messages of each subscriber it has a decision for
    const { code, stdout } = await simulateVariant(variant);

    // THEN listing Notifications' blocked messages is denied, and only that
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] IdempotentEventFlowExample\/OperatorRole \(IdempotentEventFlowExample\/OperatorRole\) may not dynamodb:Query on IdempotentEventFlowExample\/Orders\/Notifications\/InboxTable \(arn:aws:dynamodb:eu-west-1:111111111111:table\/[^/]+\/index\/[^)]+\): no identity-based policy allows the dynamodb:Query action/,
    );
    expect(stdout.match(/\[access-denied\]/g)).toHaveLength(1);
  });

  test('--iam off runs without evaluation and says so', async () => {
    const variant = await exampleAssemblyVariant(withoutLedgerGrant);

    const { code, stdout } = await simulateVariant(variant, '--iam', 'off');

    // the missing grant goes unseen without IAM: the verdict must say evaluation was off; the example spans two
    // accounts (the loyalty team's subscriber's), which only policies connect: unchecked, the run is NOT PROVEN, never OK
    expect(stdout).toContain('IAM: not evaluated: IAM evaluation is off (--iam off)');
    expect(stdout).not.toContain('[access-denied]');
    expect(stdout).toMatch(/^NOT PROVEN: .*IAM was not evaluated, and the app spans 2 accounts \(111111111111, 222222222222\)/m);
    expect(stdout).toContain(`${IAM_NOT_PROVEN_TEXT} 2 accounts`);
    expect(code).toBe(EXIT_CODE.NOT_PROVEN);
  });
});
