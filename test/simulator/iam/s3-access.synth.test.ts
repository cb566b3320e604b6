/**
 * IAM of the claim-check's bucket (issue 42), from a synthesized CDK app: a bucket under a customer-managed key with
 * TLS enforced (and TLS 1.2 at least, as the flow's payload bucket: a numeric condition in the bucket policy), a producer granted `grantPut` under the prefix, a consumer `grantRead` under it, a function granted
 * `s3:PutObject` without the key, one granted nothing. The run's S3 check evaluates each object request as AWS would:
 * the action on the object's ARN under the bucket policy, and the KMS request S3 makes for an SSE-KMS bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FlowAccess } from '../../../simulator/iam/flow-access';
import { LocalResourceNames, registerStaticNames } from '../../../simulator/model/local-names';
import type { FlowModel } from '../../../simulator/model/flow-model';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { localBucketName } from '../../../simulator/aws/s3-local';
import { engine, REGION } from './iam-test-kit';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-s3-access-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let model: FlowModel;
let check: ReturnType<FlowAccess['s3Check']>;
let access: FlowAccess;
let bucket: { readonly key: string };
const keyOf: Record<string, string> = {};

function synthesize(): void {
  const app = new App({ outdir: directory });
  const stack = new Stack(app, 'Payloads');
  const key = new kms.Key(stack, 'Key');
  const payloads = new s3.Bucket(stack, 'Bucket', { encryption: s3.BucketEncryption.KMS, encryptionKey: key, enforceSSL: true, minimumTLSVersion: 1.2, blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL });
  const fn = (id: string) => new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => {}') });
  const producer = fn('Producer');
  payloads.grantPut(producer, 'event-data/*');
  payloads.grantRead(fn('Consumer'), 'event-data/*');
  // the payload bucket's rule (lib/private/payload-bucket.ts): a put without If-None-Match is denied, on its own prefix here
  payloads.grantPut(producer, 'conditional/*');
  payloads.addToResourcePolicy(
    new iam.PolicyStatement({
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:PutObject'],
      resources: [payloads.arnForObjects('conditional/*')],
      conditions: { Null: { 's3:if-none-match': 'true' } },
    }),
  );
  fn('NoKey').addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [payloads.arnForObjects('event-data/*')] }));
  fn('Stranger');
  // the flow's subscriber grant (lib/private/payload-bucket.ts): s3:ListBucket only for prefixes under event-data/
  const lister = fn('PrefixLister');
  lister.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [payloads.arnForObjects('event-data/*')] }));
  lister.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [payloads.bucketArn], conditions: { StringLike: { 's3:prefix': ['event-data/*'] } } }));
  const getOnly = fn('GetOnly');
  getOnly.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [payloads.arnForObjects('event-data/*')] }));
  key.grantDecrypt(getOnly);
  app.synth();
}

beforeAll(() => {
  synthesize();
  model = readAssembly(directory);
  const names = new LocalResourceNames(REGION);
  registerStaticNames(model, names);
  for (const modelled of model.buckets ?? []) {
    const name = localBucketName(modelled);
    names.register(modelled.key, { ref: name, attributes: { Arn: `arn:aws:s3:::${name}` } });
  }
  access = new FlowAccess(model.access!, names, new Map(), engine);
  check = access.s3Check();
  bucket = { key: model.buckets![0]!.key };
  // the functions' code is inline, which the simulator does not run; their roles are read all the same
  for (const functionKey of Object.keys(model.access!.executionRoles)) keyOf[functionKey.split('/')[1]!.replace(/[0-9A-F]{8}$/, '')] = access.accessKeyIdOf(functionKey);
});

const KEY = 'event-data/0a1b/2c3d';

function ask(who: string, operation: string, objectKey = KEY, headers: Record<string, string> = {}): Promise<string | undefined> {
  return check({ accessKeyId: keyOf[who]!, operation, bucket, objectKey, headers });
}

describe('the S3 check of a synthesized bucket', () => {
  test('the model has the bucket, its key and its bucket policy', () => {
    expect(model.buckets).toHaveLength(1);
    expect(model.buckets![0]).toMatchObject({ stackName: 'Payloads', versioned: false });
    expect(model.access!.encryption[bucket.key]).toEqual({ key: expect.stringMatching(/^Payloads\/Key/) });
    expect(model.access!.resourcePolicies[bucket.key]?.map((policy) => policy.name)).toEqual([expect.stringMatching(/^Payloads\/BucketPolicy/)]);
    expect(Object.keys(keyOf).sort()).toEqual(['Consumer', 'GetOnly', 'NoKey', 'PrefixLister', 'Producer', 'Stranger']);
  });

  test('the producer may put under the prefix (s3:PutObject and kms:GenerateDataKey through S3); the consumer may get', async () => {
    expect(await ask('Producer', 'PutObject', KEY, { 'x-amz-server-side-encryption': 'aws:kms' })).toBeUndefined();
    expect(await ask('Producer', 'PutObject')).toBeUndefined();
    expect(await ask('Consumer', 'GetObject')).toBeUndefined();
    expect(await ask('Consumer', 'HeadObject')).toBeUndefined();
  });

  test('what the grants do not give is denied, naming the action and the object', async () => {
    expect(await ask('Consumer', 'PutObject')).toMatch(/not authorized to perform: s3:PutObject on resource: arn:aws:s3:::payloads-bucket[a-z0-9-]*\/event-data\/0a1b\/2c3d/);
    expect(await ask('Producer', 'GetObject')).toMatch(/not authorized to perform: s3:GetObject/);
    expect(await ask('Producer', 'DeleteObject')).toMatch(/not authorized to perform: s3:DeleteObject/);
    expect(await ask('Producer', 'PutObject', 'elsewhere/x')).toMatch(/not authorized to perform: s3:PutObject on resource: arn:aws:s3:::[^ ]+\/elsewhere\/x/);
    expect(await ask('Stranger', 'GetObject')).toMatch(/not authorized to perform: s3:GetObject/);
  });

  test('s3:PutObject without the key: S3 cannot get a data key for the caller, so the put is denied on kms:GenerateDataKey', async () => {
    expect(await ask('NoKey', 'PutObject')).toMatch(/not authorized to perform: kms:GenerateDataKey on resource: arn:aws:kms:/);
  });

  test('s3:ListBucket (what decides 404 or 403 for a missing key, and ListObjectsV2) is asked on the bucket with s3:prefix', async () => {
    // grantRead gives s3:List* on the bucket without a condition
    expect(await ask('Consumer', 'ListBucket', 'event-data/0a1b/2c3d')).toBeUndefined();
    expect(await ask('PrefixLister', 'ListBucket', 'event-data/0a1b/2c3d')).toBeUndefined();
    expect(await ask('PrefixLister', 'ListBucket', 'elsewhere/x')).toMatch(/not authorized to perform: s3:ListBucket on resource: arn:aws:s3:::payloads-bucket[a-z0-9-]*\b/);
    expect(await ask('GetOnly', 'GetObject')).toBeUndefined();
    expect(await ask('GetOnly', 'ListBucket', 'event-data/0a1b/2c3d')).toMatch(/not authorized to perform: s3:ListBucket/);
    expect(await ask('Stranger', 'ListBucket', 'event-data/0a1b/2c3d')).toMatch(/not authorized to perform: s3:ListBucket/);
  });

  test('a bucket policy denying s3:PutObject when s3:if-none-match is null: a put without If-None-Match is denied, one with it allowed', async () => {
    expect(await ask('Producer', 'PutObject', 'conditional/a/b')).toMatch(/explicit deny|not authorized to perform: s3:PutObject/);
    expect(await ask('Producer', 'PutObject', 'conditional/a/b', { 'if-none-match': '*' })).toBeUndefined();
  });

  test('a request no function signed (an operator) and a bucket outside the templates are not evaluated', async () => {
    expect(await check({ operation: 'PutObject', bucket, objectKey: KEY, headers: {} })).toBeUndefined();
    expect(await check({ accessKeyId: keyOf.Stranger!, operation: 'PutObject', objectKey: KEY, headers: {} })).toBeUndefined();
  });

  test('the figures count the requests and the denials', () => {
    const figures = access.control.figures();
    expect(figures.requests).toBeGreaterThan(0);
    expect(figures.denials.map((denial) => denial.action)).toEqual(expect.arrayContaining(['s3:PutObject', 's3:GetObject', 's3:DeleteObject', 'kms:GenerateDataKey']));
  });
});
