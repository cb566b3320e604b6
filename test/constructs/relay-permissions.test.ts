/**
 * What the relay role's policy allows, evaluated by the IAM policy engine (`@cloud-copilot/iam-simulate`) rather
 * than read statement by statement: `dynamodb:ListStreams` (an action without a resource type) and the use of the
 * pipe's own encryption key (conditioned on the pipe's encryption context).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, test } from 'vitest';
import { OutboxRelay, OutboxTable } from '../../lib/outbox';
import { loadPolicyEngine, type PolicyDecision } from '../../simulator/iam/policy-engine';
import { resolveValue } from '../../simulator/model/intrinsics';

const REGION = 'eu-west-1';
const ACCOUNT = '111111111111';
const STREAM_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/Orders/stream/2024-01-01T00:00:00.000`;
const KEY_ARN = `arn:aws:kms:${REGION}:${ACCOUNT}:key/11111111-2222-3333-4444-555555555555`;
const ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/relay`;

/** The default key policy of a KMS key: the account's IAM policies decide. */
const ACCOUNT_KEY_POLICY = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` }, Action: 'kms:*', Resource: '*' }],
};

const engine = loadPolicyEngine(process.cwd())!;

/** Replaces every intrinsic function of a template value by the string CloudFormation would give it. */
function literal(value: unknown, stack: Stack): unknown {
  // Resources of the stack (the dead-letter queue, the log group) get ARNs of their own; only the imported ones matter.
  const own = (key: string): string => `arn:aws:resource:${REGION}:${ACCOUNT}:${key.split('/')[1]}`;
  const names = { region: REGION, accountId: ACCOUNT, ref: own, getAtt: own };
  if (Array.isArray(value)) return value.map((v) => literal(v, stack));
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) return resolveValue(value, stack.stackName, names, 'test');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v, stack)]));
}

interface Relay {
  readonly pipeArn: string;
  /** Every statement of the role's policies, with literal ARNs. */
  readonly statements: readonly unknown[];
  ask(action: string, resourceArn: string, context?: Record<string, string>): Promise<PolicyDecision>;
}

/** A relay reading an imported stream, encrypted with an imported key, its role's policy with literal ARNs. */
function relayWithLiteralArns(): Relay {
  const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Stack', { env: { region: REGION, account: ACCOUNT } });
  const table = dynamodb.Table.fromTableName(stack, 'Orders', 'Orders');
  const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, tableStreamArn: STREAM_ARN, partitionKeyName: 'PK' });
  const key = kms.Key.fromKeyArn(stack, 'Key', KEY_ARN);
  const topic = sns.Topic.fromTopicAttributes(stack, 'Topic', { topicArn: `arn:aws:sns:${REGION}:${ACCOUNT}:events`, keyArn: KEY_ARN });
  new OutboxRelay(stack, 'Relay', { outboxTable, topic, encryptionKey: key, deadLetterQueueEncryptionKey: key });
  const template = Template.fromStack(stack);
  const [pipe] = Object.values(template.findResources('AWS::Pipes::Pipe'));
  const pipeName = literal(pipe!.Properties.Name, stack) as string;
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).map((policy, i) => ({
    name: `policy${i}`,
    policy: literal(policy.Properties.PolicyDocument, stack),
  }));
  return {
    pipeArn: `arn:aws:pipes:${REGION}:${ACCOUNT}:pipe/${pipeName}`,
    statements: policies.flatMap((p) => (p.policy as { Statement: unknown[] }).Statement),
    async ask(action, resourceArn, context = {}) {
      const answer = await engine.evaluate({
        principal: ROLE_ARN,
        action,
        resourceArn,
        resourceAccount: ACCOUNT,
        identityPolicies: policies,
        // KMS: the default key policy, which delegates to the account's IAM policies
        ...(resourceArn.startsWith('arn:aws:kms:') ? { resourcePolicy: ACCOUNT_KEY_POLICY } : {}),
        context,
      });
      expect(answer.error).toBeUndefined();
      return answer.decision;
    },
  };
}

describe("the relay role's policy, evaluated", () => {
  let relay: Relay;
  beforeAll(() => {
    relay = relayWithLiteralArns();
  });

  test('allows dynamodb:ListStreams, which IAM authorizes on "*" only', async () => {
    expect(await relay.ask('dynamodb:ListStreams', '*')).toBe('Allowed');
  });

  test('allows reading the outbox stream, and no other stream', async () => {
    expect(await relay.ask('dynamodb:GetRecords', STREAM_ARN)).toBe('Allowed');
    expect(await relay.ask('dynamodb:GetRecords', STREAM_ARN.replace('Orders', 'Payments'))).toBe('ImplicitlyDenied');
  });

  // The engine ignores `kms:EncryptionContext:<key>` context values (it matches variable condition keys only after a
  // `/`), so the statements that allow the pipe's own context are asserted on the policy itself.
  test.each(['aws:pipes:arn', 'aws:pipe:arn'])(
    "allows kms:Decrypt and kms:GenerateDataKey on the pipe's key with the pipe's encryption context (%s)",
    (contextKey) => {
      expect(relay.statements).toContainEqual({
        Sid: expect.stringMatching(/^IdempotentEventFlowOutboxRelay[0-9]*$/),
        Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
        Effect: 'Allow',
        Resource: KEY_ARN,
        Condition: { ArnEquals: { [`kms:EncryptionContext:${contextKey}`]: relay.pipeArn } },
      });
    },
  );

  test("denies kms:Decrypt on the flow key outside the pipe's context and outside SQS and SNS", async () => {
    // The flow key also encrypts the topic, the queues and the inbox tables: a direct Decrypt must not be allowed.
    expect(await relay.ask('kms:Decrypt', KEY_ARN)).toBe('ImplicitlyDenied');
    const otherPipe = relay.pipeArn.replace(':pipe/', ':pipe/other-');
    expect(await relay.ask('kms:Decrypt', KEY_ARN, { 'kms:EncryptionContext:aws:pipes:arn': otherPipe })).toBe('ImplicitlyDenied');
    expect(await relay.ask('kms:Decrypt', KEY_ARN, { 'kms:ViaService': `dynamodb.${REGION}.amazonaws.com` })).toBe('ImplicitlyDenied');
  });

  test('still allows the key through SNS and SQS, for the topic and the dead-letter queue', async () => {
    expect(await relay.ask('kms:GenerateDataKey', KEY_ARN, { 'kms:ViaService': `sns.${REGION}.amazonaws.com` })).toBe('Allowed');
    expect(await relay.ask('kms:GenerateDataKey', KEY_ARN, { 'kms:ViaService': `sqs.${REGION}.amazonaws.com` })).toBe('Allowed');
  });

  test('allows kms:DescribeKey on the key (metadata, no encryption context)', async () => {
    expect(await relay.ask('kms:DescribeKey', KEY_ARN)).toBe('Allowed');
  });
});
