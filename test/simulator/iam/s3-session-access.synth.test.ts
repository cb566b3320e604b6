/**
 * Issue 42: the served run's S3 (the claim-check's bucket) authorizes a request signed with the credentials of a
 * session its STS issued (`simulate --serve`: an operator of another account that assumed a role of the app, as for
 * `replay --flow-profile`) under that role's policies, as its DynamoDB does (simulator/run/served-sessions.ts) and as
 * AWS does for an assumed role. Before, only a function's requests were evaluated: a session's were let through, so a
 * role granted nothing on the bucket read it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { localBucketName } from '../../../simulator/aws/s3-local';
import { FlowAccess } from '../../../simulator/iam/flow-access';
import { IamNames } from '../../../simulator/iam/iam-names';
import { LocalResourceNames, registerStaticNames } from '../../../simulator/model/local-names';
import type { FlowModel } from '../../../simulator/model/flow-model';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { servedSessions, type ServedSessions } from '../../../simulator/run/served-sessions';
import { engine, REGION } from './iam-test-kit';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-s3-session-'));
const CALLER = 'arn:aws:iam::222222222222:role/ledger-oncall';
const KEY = 'event-data/0a1b/2c3d';

let model: FlowModel;
let names: LocalResourceNames;
let access: FlowAccess;
let sessions: ServedSessions;
let bucket: { readonly key: string };
const roleKey: Record<string, string> = {};

beforeAll(() => {
  const app = new App({ outdir: directory });
  const stack = new Stack(app, 'Payloads');
  const key = new kms.Key(stack, 'Key');
  const payloads = new s3.Bucket(stack, 'Bucket', { encryption: s3.BucketEncryption.KMS, encryptionKey: key, enforceSSL: true, blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL });
  // two roles the other account's operator may assume: one granted the read of the event data, one granted nothing
  const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.ArnPrincipal(CALLER) });
  payloads.grantRead(reader, 'event-data/*');
  new iam.Role(stack, 'Outsider', { assumedBy: new iam.ArnPrincipal(CALLER) });
  app.synth();
  model = readAssembly(directory);
  names = new LocalResourceNames(REGION);
  registerStaticNames(model, names);
  for (const modelled of model.buckets ?? []) {
    const name = localBucketName(modelled);
    names.register(modelled.key, { ref: name, attributes: { Arn: `arn:aws:s3:::${name}` } });
  }
  access = new FlowAccess(model.access!, names, new Map(), engine);
  sessions = servedSessions(access, 'http://127.0.0.1:1');
  bucket = { key: model.buckets![0]!.key };
  for (const role of model.access!.roles) roleKey[role.key.split('/')[1]!.replace(/[0-9A-F]{8}$/, '')] = role.key;
});

afterAll(async () => {
  await sessions.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** The access key id of a session of `role` the served STS issued to the other account's operator. */
async function assume(role: string): Promise<string> {
  // the role's ARN as the run names it (its generated physical name)
  const roleArn = new IamNames(names, model.access!.resources, new Map()).getAtt(roleKey[role]!, 'Arn')!;
  const answer = await sessions.sts.handler({
    method: 'POST',
    path: '/',
    headers: { authorization: 'AWS4-HMAC-SHA256 Credential=222222222222.ledger-oncall/20261130/eu-west-1/sts/aws4_request' },
    body: Buffer.from(new URLSearchParams({ Action: 'AssumeRole', RoleArn: roleArn, RoleSessionName: 'oncall' }).toString()),
  });
  const issued = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(String(answer.body))?.[1];
  expect(issued, String(answer.body)).toBeDefined();
  return issued!;
}

describe("the served S3 check of a session's requests", () => {
  test('both roles and the bucket are in the model', () => {
    expect(Object.keys(roleKey)).toEqual(expect.arrayContaining(['Reader', 'Outsider']));
    expect(model.buckets).toHaveLength(1);
  });

  test("a session of the role granted the read gets the object; one of a role granted nothing is refused, naming the action and the object", async () => {
    const check = access.s3Check();
    const reader = await assume('Reader');
    const outsider = await assume('Outsider');
    expect(await check({ accessKeyId: reader, operation: 'GetObject', bucket, objectKey: KEY, headers: {} })).toBeUndefined();
    expect(await check({ accessKeyId: outsider, operation: 'GetObject', bucket, objectKey: KEY, headers: {} })).toMatch(/not authorized to perform: s3:GetObject on resource: arn:aws:s3:::payloads-bucket[a-z0-9-]*\/event-data\/0a1b\/2c3d/);
    // and the reader's session may read only what its role was granted: no put, nothing outside the prefix
    expect(await check({ accessKeyId: reader, operation: 'PutObject', bucket, objectKey: KEY, headers: {} })).toMatch(/not authorized to perform: s3:PutObject/);
    expect(await check({ accessKeyId: reader, operation: 'GetObject', bucket, objectKey: 'elsewhere/x', headers: {} })).toMatch(/not authorized to perform: s3:GetObject/);
  });

  test("a request signed by an operator's own key of the bucket's account (a principal outside the app) is still not evaluated: its identity policy is not known", async () => {
    const account = new IamNames(names, model.access!.resources, new Map()).accountOf(bucket.key);
    expect(await access.s3Check()({ accessKeyId: `${account}.payloads-oncall`, operation: 'GetObject', bucket, objectKey: KEY, headers: {} })).toBeUndefined();
  });

  test("a request signed by another account's own key (not a session) is refused: the bucket policy grants that account nothing", async () => {
    expect(await access.s3Check()({ accessKeyId: '222222222222.ledger-oncall', operation: 'GetObject', bucket, objectKey: KEY, headers: {} })).toMatch(
      /^User: arn:aws:iam::222222222222:role\/ledger-oncall is not authorized to perform: s3:GetObject on resource: arn:aws:s3:::payloads-bucket[a-z0-9-]*\/event-data\/0a1b\/2c3d because the resource policy of \S+ does not allow arn:aws:iam::222222222222:role\/ledger-oncall of account 222222222222/,
    );
  });
});
