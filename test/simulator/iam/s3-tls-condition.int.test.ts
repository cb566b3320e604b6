/**
 * nu7 finding 2: with IAM on, every offloaded event crashed the simulator's S3 endpoint ("asList(...).filter is not a
 * function"): the claim-check's payload bucket (lib/private/payload-bucket.ts: enforceSSL, minimumTLSVersion 1.2)
 * has a bucket policy whose condition value is a JSON number (`NumericLessThan { s3:TlsVersion: 1.2 }`). Here a bucket
 * built the same way, its producer granted `grantPut`, puts one offloaded payload through the run's S3 endpoint
 * (s3rver behind it) with IAM evaluated: it is stored, and the request is evaluated and allowed (not skipped).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { App, Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startS3Endpoint, type S3Endpoint } from '../../../simulator/aws/s3-endpoint';
import { localBucketName, startLocalS3, type LocalS3 } from '../../../simulator/aws/s3-local';
import { FlowAccess } from '../../../simulator/iam/flow-access';
import { LocalResourceNames, registerStaticNames } from '../../../simulator/model/local-names';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { engine, REGION } from './iam-test-kit';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-s3-tls-'));
let local: LocalS3;
let endpoint: S3Endpoint;
let access: FlowAccess;
let bucketName: string;
let producerKeyId: string;

beforeAll(async () => {
  const app = new App({ outdir: directory });
  const stack = new Stack(app, 'Payloads');
  const key = new kms.Key(stack, 'Key');
  const payloads = new s3.Bucket(stack, 'Bucket', { encryption: s3.BucketEncryption.KMS, encryptionKey: key, enforceSSL: true, minimumTLSVersion: 1.2, blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL });
  const producer = new lambda.Function(stack, 'Producer', { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => {}') });
  payloads.grantPut(producer, 'event-data/*');
  payloads.grantRead(producer, 'event-data/*');
  app.synth();

  const model = readAssembly(directory);
  const names = new LocalResourceNames(REGION);
  registerStaticNames(model, names);
  const bucket = model.buckets![0]!;
  bucketName = localBucketName(bucket);
  names.register(bucket.key, { ref: bucketName, attributes: { Arn: `arn:aws:s3:::${bucketName}` } });
  access = new FlowAccess(model.access!, names, new Map(), engine);
  const check = access.s3Check();
  producerKeyId = access.accessKeyIdOf(Object.keys(model.access!.executionRoles).find((functionKey) => functionKey.includes('Producer'))!);
  local = await startLocalS3([bucketName]);
  endpoint = await startS3Endpoint({
    backend: local.endpoint,
    authorize: ({ accessKeyId, operation, key: objectKey, headers }) => check({ ...(accessKeyId === undefined ? {} : { accessKeyId }), operation, bucket: { key: bucket.key }, objectKey, headers }),
  });
});
afterAll(async () => {
  await endpoint?.stop();
  await local?.stop();
  rmSync(directory, { recursive: true, force: true });
});

test('an offloaded payload is put and read back through the S3 endpoint under a bucket policy with NumericLessThan s3:TlsVersion 1.2', async () => {
  // GIVEN the bucket policy carries the number the crash was on
  expect(JSON.stringify(readAssembly(directory).access!.resourcePolicies)).toContain('"s3:TlsVersion":1.2');
  const client = new S3Client({ region: REGION, endpoint: endpoint.endpoint, forcePathStyle: true, credentials: { accessKeyId: producerKeyId, secretAccessKey: 'secret' }, maxAttempts: 1 });
  const body = 'x'.repeat(300 * 1024);
  // WHEN the producer puts the payload and reads it back
  await client.send(new PutObjectCommand({ Bucket: bucketName, Key: 'event-data/0a1b/2c3d', Body: body, ServerSideEncryption: 'aws:kms' }));
  const read = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: 'event-data/0a1b/2c3d' }));
  // THEN both were evaluated by IAM and allowed, and the object came back whole
  expect(await read.Body!.transformToString()).toBe(body);
  const figures = access.control.figures();
  expect(figures.notEvaluatedReasons.filter((reason) => reason.includes('s3:'))).toEqual([]);
  expect(figures.requests).toBeGreaterThanOrEqual(2);
  expect(figures.denied).toBe(0);
  expect(figures.notEvaluated).toBe(0);
});
