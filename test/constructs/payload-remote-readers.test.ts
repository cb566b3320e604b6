/**
 * The claim-check (issue 42) for subscribers in another account or Region (issue 41) and on the ordered path: what the
 * flow's side and the subscriber's side get, pinned statement by statement (lib/private/remote-payload-readers.ts).
 * - Across accounts: the bucket policy allows the subscriber's account s3:GetObject under the prefix (and
 *   s3:ListBucket on it) only for the consumer's role (aws:PrincipalArn; no `*` principal), the TLS-only Deny kept; the
 *   flow key's policy allows that role kms:Decrypt only through S3 in the flow's Region and for the bucket
 *   (kms:EncryptionContext:aws:s3:arn); the consumer's identity policy allows the same.
 * - Across Regions: the consumer gets IEF_PAYLOAD_BUCKET_REGION, the flow's Region.
 * - Ordered: a registered ordered subscriber gets the bucket's variables and read grants.
 */
import * as path from 'node:path';
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, Subscriber } from '../../lib';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');
const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };

/** A flow in 111111111111/eu-west-1 offloading, and one subscriber of it in `env`; both templates. */
function remote(env: { account: string; region: string }, flowEnv = FLOW_ENV): { flow: Template; subscriber: Template; bucketName: string; roleName: string } {
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const payments = new Stack(app, 'Payments', { env: flowEnv });
  const flow = new IdempotentEventFlow(payments, 'Payments', { offloadLargeEvents: true });
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  const other = new Stack(app, 'Ledger', { env });
  new Subscriber(other, 'Ledger', { flow, entry: HANDLER_ENTRY });
  const flowTemplate = Template.fromStack(payments);
  const subscriberTemplate = Template.fromStack(other);
  const bucket = Object.values(flowTemplate.findResources('AWS::S3::Bucket'))[0] as { Properties: { BucketName: string } };
  const role = Object.values(subscriberTemplate.findResources('AWS::IAM::Role', { Properties: { RoleName: Match.stringLikeRegexp('Ledger') } }))[0] as { Properties: { RoleName: string } };
  return { flow: flowTemplate, subscriber: subscriberTemplate, bucketName: bucket.Properties.BucketName, roleName: role.Properties.RoleName };
}

const partition = { Ref: 'AWS::Partition' };
const join = (...parts: unknown[]) => ({ 'Fn::Join': ['', parts] });

describe('a subscriber in another account', () => {
  const { flow, subscriber, bucketName, roleName } = remote({ account: '222222222222', region: 'eu-west-1' });
  const roleArn = join('arn:', partition, `:iam::222222222222:role/${roleName}`);
  const bucketArn = join('arn:', partition, `:s3:::${bucketName}`);

  test('the bucket has a literal, globally unique name (the account and Region in it)', () => {
    expect(bucketName).toMatch(/^ief-payload-[0-9a-f]{8}-111111111111-eu-west-1$/);
  });

  test("the consumer role's name has the Region in it: the same app deployed to two Regions of one account does not collide", () => {
    // IAM role names are global to an account: one pipeline per Region deploying the same Payments and Ledger stacks
    // would create the role twice in 222222222222
    const inUsEast1 = remote({ account: '222222222222', region: 'us-east-1' }, { account: '111111111111', region: 'us-east-1' }).roleName;
    expect(roleName).not.toBe(inUsEast1);
    expect(roleName).toMatch(/-eu-west-1$/);
    expect(inUsEast1).toMatch(/-us-east-1$/);
    for (const name of [roleName, inUsEast1]) expect(name.length).toBeLessThanOrEqual(64);
  });

  test("the bucket policy lets the subscriber's account read under the prefix for its consumer role only, and keeps TLS-only", () => {
    flow.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          {
            Sid: 'PayloadGetByLedgerFrom222222222222',
            Effect: 'Allow',
            Principal: { AWS: join('arn:', partition, ':iam::222222222222:root') },
            Action: 's3:GetObject',
            Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [Match.stringLikeRegexp('PayloadBucket'), 'Arn'] }, '/event-data/*']] },
            Condition: { ArnEquals: { 'aws:PrincipalArn': roleArn } },
          },
          {
            Sid: 'PayloadListByLedgerFrom222222222222',
            Effect: 'Allow',
            Principal: { AWS: join('arn:', partition, ':iam::222222222222:root') },
            Action: 's3:ListBucket',
            Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('PayloadBucket'), 'Arn'] },
            Condition: { ArnEquals: { 'aws:PrincipalArn': roleArn }, StringLike: { 's3:prefix': 'event-data/*' } },
          },
        ]),
      },
    });
    const policies = JSON.stringify(flow.findResources('AWS::S3::BucketPolicy'));
    expect(policies).not.toMatch(/"Effect":"Allow","Principal":\{"AWS":"\*"\}/);
  });

  test("the flow key's policy lets that role decrypt through S3 in the flow's Region, for the bucket only", () => {
    flow.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          {
            Sid: 'PayloadDecryptByLedgerFrom222222222222',
            Effect: 'Allow',
            Principal: { AWS: join('arn:', partition, ':iam::222222222222:root') },
            Action: 'kms:Decrypt',
            Resource: '*',
            Condition: {
              ArnEquals: { 'aws:PrincipalArn': roleArn },
              StringEquals: { 'kms:ViaService': 's3.eu-west-1.amazonaws.com', 'kms:EncryptionContext:aws:s3:arn': bucketArn },
            },
          },
        ]),
      },
    });
  });

  test("the consumer's own policy allows the same, and it gets the bucket's name and prefix but no Region (same Region)", () => {
    subscriber.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 's3:GetObject', Effect: 'Allow', Resource: join('arn:', partition, `:s3:::${bucketName}/event-data/*`) }),
          Match.objectLike({ Action: 's3:ListBucket', Effect: 'Allow', Resource: bucketArn, Condition: { StringLike: { 's3:prefix': 'event-data/*' } } }),
          Match.objectLike({
            Action: 'kms:Decrypt',
            Effect: 'Allow',
            Resource: join('arn:', partition, ':kms:eu-west-1:111111111111:key/*'),
            Condition: { StringEquals: { 'kms:ViaService': 's3.eu-west-1.amazonaws.com', 'kms:EncryptionContext:aws:s3:arn': bucketArn } },
          }),
        ]),
      },
    });
    subscriber.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.stringLikeRegexp('Ledger'),
      Environment: { Variables: Match.objectLike({ IEF_PAYLOAD_BUCKET_NAME: bucketName, IEF_PAYLOAD_KEY_PREFIX: 'event-data/', IEF_PAYLOAD_BUCKET_REGION: Match.absent() }) },
    });
  });
});

describe('a subscriber in another Region of the same account', () => {
  const { flow, subscriber, bucketName } = remote({ account: '111111111111', region: 'eu-central-1' });

  test("its consumer reads the bucket in the flow's Region (IEF_PAYLOAD_BUCKET_REGION) through S3 of that Region", () => {
    subscriber.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.stringLikeRegexp('Ledger'),
      Environment: { Variables: Match.objectLike({ IEF_PAYLOAD_BUCKET_NAME: bucketName, IEF_PAYLOAD_BUCKET_REGION: 'eu-west-1' }) },
    });
    subscriber.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'kms:Decrypt', Condition: { StringEquals: Match.objectLike({ 'kms:ViaService': 's3.eu-west-1.amazonaws.com' }) } })]) },
    });
  });

  test('one account: no bucket or key policy statement for it (the key policy leaves it to IAM)', () => {
    expect(JSON.stringify(flow.toJSON())).not.toMatch(/PayloadGetBy|PayloadDecryptBy/);
  });
});

describe('an ordered subscriber of a registered relay', () => {
  test("gets the bucket's variables, s3:GetObject under the prefix and kms:Decrypt through S3", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { offloadLargeEvents: true });
    const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: flow.outboxTable });
    flow.registerOrderedRelay(relay);
    const tracking = new OrderedSubscriber(stack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
    flow.registerOrderedSubscriber(tracking);
    const template = Template.fromStack(stack);
    const bucketRef = { Ref: Match.stringLikeRegexp('OrdersPayloadBucket') };
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ IEF_PAYLOAD_BUCKET_NAME: bucketRef, IEF_PAYLOAD_KEY_PREFIX: 'event-data/', IEF_SUBSCRIBER_NAME: 'Tracking' }) },
    });
    const roleId = stack.getLogicalId(tracking.consumerFunction.lambdaFunction.role!.node.defaultChild as never);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown; Condition?: unknown }[]);
    const actions = (statement: { Action: string | string[] }) => [statement.Action].flat();
    const get = statements.find((statement) => actions(statement).includes('s3:GetObject'));
    expect(JSON.stringify(get?.Resource)).toMatch(/OrdersPayloadBucket[0-9A-F]+","Arn"\]\},"\/event-data\/\*"/);
    const decrypt = statements.find((statement) => actions(statement).includes('kms:Decrypt') && JSON.stringify(statement.Condition).includes('s3.'));
    expect(decrypt?.Condition).toEqual({ StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } });
  });
});
