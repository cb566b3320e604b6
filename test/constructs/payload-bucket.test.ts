/**
 * The claim-check's payload bucket of a flow (issue 42, `offloadLargeEvents`): the bucket's settings, its lifecycle rule
 * checked at synth against the longest time an offloaded event can still be read, the grants of producers and
 * subscribers scoped to the prefix, and the variables the runtime reads (`loadClaimCheckConfig`).
 */
import { Duration, Size, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, test } from 'vitest';
import { loadClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { CLAIM_CHECK_ENV, DEFAULT_PAYLOAD_KEY_PREFIX } from '../../lambda/contract/claim-check';
import * as path from 'node:path';
import { IdempotentEventFlow, type IdempotentEventFlowProps } from '../../lib';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { HANDLER_ENTRY, nagFindings, newStack } from '../fixtures/construct-test-kit';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');

/** Registers an ordered relay on the flow's outbox table (with `archiveRetentionDays`) and one ordered subscriber. */
const withOrdered =
  (archiveRetentionDays?: number) =>
  (flow: IdempotentEventFlow): void => {
    const relay = new OrderedRelay(Stack.of(flow), 'Ordered', { outboxTable: flow.outboxTable, archiveRetentionDays });
    flow.registerOrderedRelay(relay);
    flow.registerOrderedSubscriber(new OrderedSubscriber(Stack.of(flow), 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER }));
  };

interface Built {
  readonly stack: Stack;
  readonly flow: IdempotentEventFlow;
  readonly template: Template;
}

function build(props: IdempotentEventFlowProps = { offloadLargeEvents: true }, more: (flow: IdempotentEventFlow) => void = () => {}): Built {
  const stack = newStack();
  const flow = new IdempotentEventFlow(stack, 'Orders', props);
  more(flow);
  return { stack, flow, template: Template.fromStack(stack) };
}

function withParts(flow: IdempotentEventFlow): void {
  flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
  flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
  flow.addSubscriber('Shipping', { entry: HANDLER_ENTRY, publishesEvents: true });
}

/** The `Variables` of the function under `path` (a construct path fragment), resolved. */
function variablesOf(built: Built, pathPart: string): Record<string, unknown> {
  const fn = built.stack.node.findAll().find((c): c is lambda.Function => c instanceof lambda.Function && c.node.path.includes(pathPart))!;
  const cfn = fn.node.defaultChild as lambda.CfnFunction;
  return (built.stack.resolve(cfn.environment) as { variables: Record<string, unknown> }).variables;
}

/** The statements of the role policy of the function under `pathPart`. */
function statementsOf(built: Built, pathPart: string): Record<string, any>[] {
  const fn = built.stack.node.findAll().find((c): c is lambda.Function => c instanceof lambda.Function && c.node.path.includes(pathPart))!;
  const roleId = built.stack.resolve((fn.role!.node.defaultChild as unknown as { ref: string }).ref).Ref as string;
  const policies = Object.values(built.template.findResources('AWS::IAM::Policy')).filter((p: any) => p.Properties.Roles.some((r: any) => r.Ref === roleId));
  return policies.flatMap((p: any) => p.Properties.PolicyDocument.Statement);
}

function s3Statements(statements: Record<string, any>[]): Record<string, any>[] {
  return statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
}

const bucketId = (built: Built): string => Object.keys(built.template.findResources('AWS::S3::Bucket'))[0]!;

describe('a flow without offloadLargeEvents', () => {
  test('has no bucket, and refuses the payload props naming them', () => {
    const built = build({});
    built.template.resourceCountIs('AWS::S3::Bucket', 0);
    expect(built.flow.payloadBucket).toBeUndefined();
    expect(() => build({ payloadExpiration: Duration.days(40) })).toThrow(/payloadExpiration can only be used with offloadLargeEvents: true, but offloadLargeEvents is false/);
    expect(() => build({ payloadInlineThreshold: Size.bytes(0) })).toThrow(/payloadInlineThreshold can only be used with offloadLargeEvents: true/);
  });
});

describe('the payload bucket', () => {
  test('is SSE-KMS with the flow key and a bucket key, blocks public access, unversioned, owner-enforced', () => {
    const built = build();
    built.template.resourceCountIs('AWS::S3::Bucket', 1);
    const keyId = built.stack.resolve(built.flow.encryptionKey.keyArn);
    built.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyId } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      VersioningConfiguration: Match.absent(),
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    expect(built.flow.node.tryFindChild('PayloadBucket')).toBeDefined();
  });

  test('its policy refuses requests without TLS and denies everyone deleting event data', () => {
    const built = build();
    const statements = (Object.values(built.template.findResources('AWS::S3::BucketPolicy'))[0] as any).Properties.PolicyDocument.Statement as Record<string, any>[];
    expect(statements.find((s) => s.Condition?.Bool?.['aws:SecureTransport'] === 'false')).toMatchObject({ Effect: 'Deny', Action: 's3:*' });
    const deny = statements.find((s) => s.Sid === 'DenyDeletingEventData')!;
    expect(deny).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Action: ['s3:DeleteObject', 's3:DeleteObjectVersion'] });
    expect(JSON.stringify(deny.Resource)).toContain(`/${DEFAULT_PAYLOAD_KEY_PREFIX}*`);
  });

  test('expires objects under the prefix after the window: 7 days of outbox retention + the 30-day deduplication window + 1 day of slack', () => {
    const built = build(undefined, withParts);
    built.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [{ Id: 'ExpireOffloadedEventData', Prefix: DEFAULT_PAYLOAD_KEY_PREFIX, ExpirationInDays: 38, Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }] },
    });
  });

  test("R8b-7: the day of slack covers a producer clock ahead of S3's across midnight UTC; payloadExpiration must include it", () => {
    // S3 expires an object at the midnight UTC after its creation (S3's clock) + the rule's days. The key names the
    // producer's UTC day, and a retry on that day reuses the object (412). A producer clock ahead of S3's across
    // midnight: S3 creates the object on day D at 23:59:59, the producer calls it day D+1 and a retry late on D+1 commits
    // an event that must stay readable the window (37 days) from then. The object expires at D + 1 + days (midnight).
    const day = 86_400_000;
    const createdByS3 = Date.UTC(2026, 10, 30, 23, 59, 59);
    const expiresAfter = (days: number) => Math.ceil((createdByS3 + days * day) / day) * day;
    const lastCommitReusingIt = Date.UTC(2026, 11, 1, 23, 59, 59, 999);
    const needed = lastCommitReusingIt + 37 * day;
    expect({ without: expiresAfter(37) >= needed, withSlack: expiresAfter(38) >= needed }).toEqual({ without: false, withSlack: true });
    const withBilling = (flow: IdempotentEventFlow) => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    expect(() => build({ offloadLargeEvents: true, payloadExpiration: Duration.days(37) }, withBilling)).toThrow(
      /payloadExpiration must be at least 38 days.*30 days \(subscriber Billing's deduplicationWindow\) \+ 1 day \(slack: a producer clock ahead of S3's across midnight UTC.*but 37 days was provided/,
    );
    build({ offloadLargeEvents: true, payloadExpiration: Duration.days(38) }, withBilling).template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 38 })] },
    });
  });

  test('the window follows the longest subscriber path (a longer deduplicationWindow) and the outbox retention', () => {
    const built = build({ offloadLargeEvents: true }, (flow) => {
      flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, deduplicationWindow: Duration.days(45) });
      flow.addSubscriber('Audit', { entry: HANDLER_ENTRY });
    });
    built.template.hasResourceProperties('AWS::S3::Bucket', { LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 53 })] } });
    // no subscriber: the outbox's retention alone, and the day of slack
    build().template.hasResourceProperties('AWS::S3::Bucket', { LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 8 })] } });
  });

  test('payloadExpiration shorter than the window fails at synth naming the prop, the bound, its terms and the value', () => {
    expect(() =>
      build({ offloadLargeEvents: true, payloadExpiration: Duration.days(20) }, (flow) => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY })),
    ).toThrow(/payloadExpiration must be at least 38 days.*7 days \(the outbox's eventRetention.*30 days \(subscriber Billing's deduplicationWindow\).*but 20 days was provided/);
    const built = build({ offloadLargeEvents: true, payloadExpiration: Duration.days(40) }, (flow) => flow.addSubscriber('Billing', { entry: HANDLER_ENTRY }));
    built.template.hasResourceProperties('AWS::S3::Bucket', { LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 40 })] } });
    expect(() => build({ offloadLargeEvents: true, payloadExpiration: Duration.hours(36) })).toThrow(/payloadExpiration must be a whole number of days, at least 1.*but 1 day 12 hours was provided/);
  });

  test('the window counts the ordered path: the relay queue, its dead-letter queue, the topic archive and the ordered subscriber', () => {
    // the relay's FIFO queue (4 days) and its dead-letter queue (14 days: moving a FIFO message there restarts its
    // retention), then the ordered subscriber's queue (4 days) and dead-letter queue (14 days): 7 + 36 + 1 days
    build({ offloadLargeEvents: true }, withOrdered()).template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 44 })] },
    });
    // the topic archive keeps a published message for replay up to 365 days: 7 + 4 + 14 + 365 + 4 + 14 + 1 days
    build({ offloadLargeEvents: true }, withOrdered(365)).template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 409 })] },
    });
    expect(() => build({ offloadLargeEvents: true, payloadExpiration: Duration.days(408) }, withOrdered(365))).toThrow(
      new RegExp(
        'payloadExpiration must be at least 409 days.*' +
          "4 days \\(ordered relay TestStack/Ordered's relay queue retention\\) \\+ 14 days \\(ordered relay TestStack/Ordered's relay dead-letter queue retention, restarted when a message moves there\\) \\+ " +
          "365 days \\(ordered relay TestStack/Ordered's topic archive \\(archiveRetentionDays\\), which replay re-delivers from\\) \\+ " +
          "4 days \\(ordered subscriber Tracking's retentionPeriod\\) \\+ 14 days \\(ordered subscriber Tracking's deadLetterRetentionPeriod\\).*but 408 days was provided",
      ),
    );
    build({ offloadLargeEvents: true, payloadExpiration: Duration.days(409) }, withOrdered(365)).template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 409 })] },
    });
    // a standard subscriber's longer path wins over a shorter ordered one
    build({ offloadLargeEvents: true }, (flow) => {
      withOrdered()(flow);
      flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, deduplicationWindow: Duration.days(45) });
    }).template.hasResourceProperties('AWS::S3::Bucket', { LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 53 })] } });
  });

  test('payloadInlineThreshold is at most maxEventSize, in whole bytes', () => {
    expect(() => build({ offloadLargeEvents: true, payloadInlineThreshold: Size.kibibytes(30) })).toThrow(/payloadInlineThreshold must be a whole number of bytes from 0 to maxEventSize \(26214 bytes\), but 30720 bytes was provided/);
    const built = build({ offloadLargeEvents: true, payloadInlineThreshold: Size.bytes(0) }, withParts);
    expect(variablesOf(built, 'PlaceOrder')[CLAIM_CHECK_ENV.INLINE_THRESHOLD_BYTES]).toBe('0');
  });

  test('has no unacknowledged AwsSolutions or Serverless findings', () => {
    const built = build(undefined, withParts);
    expect(nagFindings(built.flow)).toEqual([]);
  });
});

describe('grants and variables', () => {
  test('a producer may only PutObject under the prefix, with GenerateDataKey through S3; its variables are what the runtime reads', () => {
    const built = build(undefined, withParts);
    const bucket = bucketId(built);
    const statements = statementsOf(built, 'PlaceOrder');
    expect(s3Statements(statements)).toEqual([
      expect.objectContaining({ Effect: 'Allow', Action: 's3:PutObject', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${DEFAULT_PAYLOAD_KEY_PREFIX}*`]] } }),
    ]);
    const keyStatement = statements.find((s) => s.Action === 'kms:GenerateDataKey' && JSON.stringify(s.Condition ?? {}).includes('s3.'))!;
    expect(keyStatement.Condition.StringEquals['kms:ViaService']).toEqual(built.stack.resolve(`s3.${built.stack.region}.amazonaws.com`));
    const variables = variablesOf(built, 'PlaceOrder');
    expect(variables[CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]).toEqual({ Ref: bucket });
    const config = loadClaimCheckConfig({ ...(variables as Record<string, string>), [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]: 'orders-payloads' });
    expect(config).toEqual({ bucketName: 'orders-payloads', keyPrefix: DEFAULT_PAYLOAD_KEY_PREFIX });
    expect(built.flow.producerEnvironment[CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]).toBe(DEFAULT_PAYLOAD_KEY_PREFIX);
  });

  test('a subscriber may GetObject under the prefix and ListBucket only on it (404 for a missing object), Decrypt through S3; nothing else', () => {
    const built = build(undefined, withParts);
    const bucket = bucketId(built);
    const statements = statementsOf(built, 'Billing/Function');
    expect(s3Statements(statements)).toEqual([
      expect.objectContaining({ Action: 's3:GetObject', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${DEFAULT_PAYLOAD_KEY_PREFIX}*`]] } }),
      expect.objectContaining({ Action: 's3:ListBucket', Resource: { 'Fn::GetAtt': [bucket, 'Arn'] }, Condition: { StringLike: { 's3:prefix': `${DEFAULT_PAYLOAD_KEY_PREFIX}*` } } }),
    ]);
    expect(statements.some((s) => s.Action === 'kms:Decrypt' && JSON.stringify(s.Condition).includes('s3.'))).toBe(true);
    const variables = variablesOf(built, 'Billing/Function');
    expect(variables[CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]).toEqual({ Ref: bucket });
    expect(variables[CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]).toBe(DEFAULT_PAYLOAD_KEY_PREFIX);
  });

  test('a subscriber that publishes events (tx.emit) also writes, as a producer', () => {
    const built = build(undefined, withParts);
    const actions = s3Statements(statementsOf(built, 'Shipping/Function')).map((s) => s.Action);
    expect(actions.sort()).toEqual(['s3:GetObject', 's3:ListBucket', 's3:PutObject']);
    expect(s3Statements(statementsOf(built, 'Billing/Function')).map((s) => s.Action)).not.toContain('s3:PutObject');
  });

  test('grantAppendEvents grants the PutObject too; a user setting a payload variable is refused', () => {
    const built = build(undefined, (flow) => {
      const fn = new lambda.Function(flow, 'Own', { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler=async()=>{}') });
      flow.grantAppendEvents(fn);
    });
    expect(s3Statements(statementsOf(built, 'Orders/Own')).map((s) => s.Action)).toEqual(['s3:PutObject']);
    expect(() => build(undefined, (flow) => flow.addProducer('P', { entry: HANDLER_ENTRY, environment: { [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]: 'mine' } }))).toThrow(
      /environment variable IEF_PAYLOAD_BUCKET_NAME is set by the flow/,
    );
  });

  test('the Operator output names the bucket', () => {
    const built = build();
    const output = Object.values(built.template.findOutputs('*')).find((o: any) => JSON.stringify(o.Value).includes('payloadBucketName'));
    expect(output).toBeDefined();
  });
});
