/**
 * Issue 42 across accounts (issue 41): a session the served STS issued for a role of ANOTHER account than the flow's
 * payload bucket (the subscriber team's reader role, in 222222222222) reads an offloaded object from the bucket (in
 * 111111111111) only as AWS lets it across accounts: the role's identity policy AND the bucket policy must allow
 * `s3:GetObject`, and the role's identity policy AND the key policy `kms:Decrypt` on the flow key (S3 decrypts with the
 * caller's permissions; /work/shared/AWS-FACTS.md section 7). The flow's side names the role as the constructs do for a
 * remote reader: the account as principal, `aws:PrincipalArn` the role (docs/LARGE-EVENTS.md). Each refusal names the
 * action and the policy that lacks the statement.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, describe, expect, test } from 'vitest';
import { localBucketName } from '../../../simulator/aws/s3-local';
import { FlowAccess } from '../../../simulator/iam/flow-access';
import { IamNames } from '../../../simulator/iam/iam-names';
import { LocalResourceNames, registerStaticNames } from '../../../simulator/model/local-names';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { servedSessions, type ServedSessions } from '../../../simulator/run/served-sessions';
import { engine, REGION } from './iam-test-kit';

const FLOW = { account: '111111111111', region: 'eu-west-1' };
const TEAM = { account: '222222222222', region: 'eu-west-1' };
const ONCALL = `arn:aws:iam::${TEAM.account}:role/ledger-oncall`;
const READER = 'ledger-payload-reader';
const READER_ARN = `arn:aws:iam::${TEAM.account}:role/${READER}`;
const BUCKET_NAME = `ief-payload-test-${FLOW.account}-${FLOW.region}`;
const OBJECT = 'event-data/0a1b/2c3d';
/** A third account's team: its reader role is granted the receive of Ledger's dead letters by the queue's policy, its on-call role nothing. */
const ANALYTICS = '333333333333';
const DEAD_LETTERS = 'ledger-dead-letters';

/** Which of the three statements the app leaves out. */
type Missing = 'none' | 'bucket-grant' | 'key-statement' | 'identity-policy' | 'grant-on-unfilled-key';

const opened: Array<{ directory: string; sessions: ServedSessions }> = [];
afterAll(async () => {
  for (const { directory, sessions } of opened) {
    await sessions.stop();
    rmSync(directory, { recursive: true, force: true });
  }
});

/** Synthesizes the two stacks without `missing`, reads the assembly as a served run does, and returns its S3 check and a session of the reader role. */
async function served(missing: Missing): Promise<{ check: ReturnType<FlowAccess['s3Check']>; sqsCheck: ReturnType<FlowAccess['sqsCheck']>; bucket: { readonly key: string }; queue: { readonly model: { readonly key: string } }; session: string }> {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-s3-cross-account-session-'));
  const app = new App({ outdir: directory });
  const flow = new Stack(app, 'Payments', { env: FLOW });
  const key = new kms.Key(flow, 'Key');
  const bucket = new s3.Bucket(flow, 'Bucket', { bucketName: BUCKET_NAME, encryption: s3.BucketEncryption.KMS, encryptionKey: key, bucketKeyEnabled: true, enforceSSL: true, blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL });
  const reader = { StringEquals: { 'aws:PrincipalArn': READER_ARN } };
  // a grant whose condition reads a key AWS does not fill for a role's own call (aws:SourceAccount is set only when a
  // service calls on a resource's behalf): on AWS it never matches
  const unfilled = { StringEquals: { 'aws:SourceAccount': TEAM.account } };
  if (missing !== 'bucket-grant') {
    bucket.addToResourcePolicy(new iam.PolicyStatement({ sid: 'PayloadGetByLedger', principals: [new iam.AccountPrincipal(TEAM.account)], actions: ['s3:GetObject'], resources: [bucket.arnForObjects('event-data/*')], conditions: missing === 'grant-on-unfilled-key' ? unfilled : reader }));
  }
  if (missing !== 'key-statement') {
    key.addToResourcePolicy(new iam.PolicyStatement({ sid: 'PayloadDecryptByLedger', principals: [new iam.AccountPrincipal(TEAM.account)], actions: ['kms:Decrypt'], resources: ['*'], conditions: reader }));
  }
  const team = new Stack(app, 'Ledger', { env: TEAM });
  const role = new iam.Role(team, 'Reader', { roleName: READER, assumedBy: new iam.ArnPrincipal(ONCALL) });
  if (missing !== 'identity-policy') {
    role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [`arn:aws:s3:::${BUCKET_NAME}/event-data/*`] }));
    role.addToPolicy(new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [`arn:aws:kms:${FLOW.region}:${FLOW.account}:key/*`] }));
  }
  const deadLetters = new sqs.Queue(team, 'DeadLetters', { queueName: DEAD_LETTERS });
  deadLetters.addToResourcePolicy(new iam.PolicyStatement({ principals: [new iam.ArnPrincipal(`arn:aws:iam::${ANALYTICS}:role/analytics-reader`)], actions: ['sqs:ReceiveMessage'], resources: [deadLetters.queueArn] }));
  app.synth();
  const model = readAssembly(directory);
  const names = new LocalResourceNames(REGION, model.environments);
  registerStaticNames(model, names);
  for (const modelled of model.buckets ?? []) {
    const name = localBucketName(modelled);
    names.register(modelled.key, { ref: name, attributes: { Arn: `arn:aws:s3:::${name}` } });
  }
  const queueKey = Object.keys(model.access!.resources).find((resourceKey) => resourceKey.startsWith('Ledger/DeadLetters'))!;
  names.register(queueKey, { ref: `http://127.0.0.1:1/${TEAM.account}/${DEAD_LETTERS}`, attributes: { Arn: `arn:aws:sqs:${TEAM.region}:${TEAM.account}:${DEAD_LETTERS}` } });
  const access = new FlowAccess(model.access!, names, new Map(), engine);
  const sessions = servedSessions(access, 'http://127.0.0.1:1');
  opened.push({ directory, sessions });
  const readerKey = model.access!.roles.find((modelled) => modelled.key.startsWith('Ledger/Reader'))!.key;
  const roleArn = new IamNames(names, model.access!.resources, new Map()).getAtt(readerKey, 'Arn')!;
  const answer = await sessions.sts.handler({
    method: 'POST',
    path: '/',
    headers: { authorization: `AWS4-HMAC-SHA256 Credential=${TEAM.account}.ledger-oncall/20261130/${TEAM.region}/sts/aws4_request` },
    body: Buffer.from(new URLSearchParams({ Action: 'AssumeRole', RoleArn: roleArn, RoleSessionName: 'oncall' }).toString()),
  });
  const session = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(String(answer.body))?.[1];
  expect(session, String(answer.body)).toBeDefined();
  return { check: access.s3Check(), sqsCheck: access.sqsCheck(), bucket: { key: model.buckets![0]!.key }, queue: { model: { key: queueKey } }, session: session! };
}

describe("the served S3 check of a session of another account's role, reading the flow's payload bucket", () => {
  test('with the bucket grant, the key statement and its identity policy, the session reads the offloaded object', async () => {
    const { check, bucket, session } = await served('none');
    expect(await check({ accessKeyId: session, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toBeUndefined();
    // and only what was granted: nothing outside the prefix, no write
    expect(await check({ accessKeyId: session, operation: 'GetObject', bucket, objectKey: 'elsewhere/x', headers: {} })).toMatch(/not authorized to perform: s3:GetObject/);
    expect(await check({ accessKeyId: session, operation: 'PutObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(/not authorized to perform: s3:PutObject/);
  });

  test('without the bucket policy’s grant to the other account, the read is refused naming s3:GetObject and the object', async () => {
    const { check, bucket, session } = await served('bucket-grant');
    expect(await check({ accessKeyId: session, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(
      new RegExp(`not authorized to perform: s3:GetObject on resource: arn:aws:s3:::${BUCKET_NAME}/event-data/0a1b/2c3d`),
    );
  });

  test('without the key policy’s statement for the other account, the read is refused naming kms:Decrypt on the flow key', async () => {
    const { check, bucket, session } = await served('key-statement');
    expect(await check({ accessKeyId: session, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(/not authorized to perform: kms:Decrypt on resource: arn:aws:kms:eu-west-1:111111111111:key\//);
  });

  test('a bucket grant conditioned on a context key AWS does not fill for the call (aws:SourceAccount on a role’s own GetObject) is not taken as satisfied: refused', async () => {
    const { check, bucket, session } = await served('grant-on-unfilled-key');
    expect(await check({ accessKeyId: session, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(/not authorized to perform: s3:GetObject/);
  });

  test("with the flow's two statements but no identity policy in the role's own account, the read is refused: across accounts both sides must allow", async () => {
    const { check, bucket, session } = await served('identity-policy');
    expect(await check({ accessKeyId: session, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(/not authorized to perform: s3:GetObject/);
  });
});

describe("requests signed with a team's own key (the served run's <account>.<role>, no session): evaluated as that principal, as AWS would", () => {
  test("the ledger team's on-call role reads no object of the flow's bucket: the bucket grant names only the reader role (AccessDenied naming the caller and s3:GetObject)", async () => {
    const { check, bucket } = await served('none');
    expect(await check({ accessKeyId: `${TEAM.account}.ledger-oncall`, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(
      new RegExp(`^User: ${ONCALL} is not authorized to perform: s3:GetObject on resource: arn:aws:s3:::${BUCKET_NAME}/event-data/0a1b/2c3d because the resource policy of \\S+ does not allow ${ONCALL} of account ${TEAM.account}`),
    );
    // nor the account's root
    expect(await check({ accessKeyId: TEAM.account, operation: 'GetObject', bucket, objectKey: OBJECT, headers: {} })).toMatch(/not authorized to perform: s3:GetObject/);
  });

  test("a key naming a role of the app (the reader) is evaluated under that role's policies: it reads with its grants, and is refused without its identity policy", async () => {
    const granted = await served('none');
    expect(await granted.check({ accessKeyId: `${TEAM.account}.${READER}`, operation: 'GetObject', bucket: granted.bucket, objectKey: OBJECT, headers: {} })).toBeUndefined();
    const ungranted = await served('identity-policy');
    expect(await ungranted.check({ accessKeyId: `${TEAM.account}.${READER}`, operation: 'GetObject', bucket: ungranted.bucket, objectKey: OBJECT, headers: {} })).toMatch(/not authorized to perform: s3:GetObject/);
  });

  test("another account's team reads Ledger's dead letters only when the queue's policy grants its role; Ledger's own team is not evaluated (its identity policy is not known)", async () => {
    const { sqsCheck, queue } = await served('none');
    expect(await sqsCheck({ accessKeyId: `${ANALYTICS}.analytics-oncall`, action: 'ReceiveMessage', queue })).toMatch(
      new RegExp(`^User: arn:aws:iam::${ANALYTICS}:role/analytics-oncall is not authorized to perform: sqs:ReceiveMessage on resource: arn:aws:sqs:${TEAM.region}:${TEAM.account}:${DEAD_LETTERS}`),
    );
    expect(await sqsCheck({ accessKeyId: `${ANALYTICS}.analytics-oncall`, action: 'GetQueueAttributes', queue })).toMatch(/not authorized to perform: sqs:GetQueueAttributes/);
    expect(await sqsCheck({ accessKeyId: `${ANALYTICS}.analytics-reader`, action: 'ReceiveMessage', queue })).toBeUndefined();
    expect(await sqsCheck({ accessKeyId: `${TEAM.account}.ledger-oncall`, action: 'ReceiveMessage', queue })).toBeUndefined();
  });
});
