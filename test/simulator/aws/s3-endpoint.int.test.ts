/**
 * The simulator's S3 (issue 42): s3rver behind the run's S3 endpoint, reached with @aws-sdk/client-s3 as a function
 * reaches it (path-style, through an environment's sender path). Real parts: s3rver stores the objects, the SDK retries
 * what it retries; the endpoint's faults, IAM hook and conditional PutObject are what is under test.
 */
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startS3Endpoint, SLOW_PIECE_BYTES, type S3Endpoint, type S3EndpointOptions, type S3FaultQuestion } from '../../../simulator/aws/s3-endpoint';
import { localBucketName, startLocalS3, type LocalS3 } from '../../../simulator/aws/s3-local';
import { SqsSenders } from '../../../simulator/aws/sqs-senders';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { decideS3ObjectFault, decideS3RequestFault } from '../../../simulator/faults/s3-faults';

const BUCKET = 'payloads';
let local: LocalS3;
let endpoint: S3Endpoint | undefined;

beforeAll(async () => {
  local = await startLocalS3([BUCKET, 'other-bucket']);
});
afterAll(async () => {
  await local.stop();
});
afterEach(async () => {
  await endpoint?.stop();
  endpoint = undefined;
});

/** An SDK client as a function's: dummy credentials, the endpoint with the environment's sender path. */
function client(url: string, accessKeyId = 'ASIASIMTESTKEY'): S3Client {
  return new S3Client({ region: 'us-east-1', endpoint: url, credentials: { accessKeyId, secretAccessKey: 'secret', sessionToken: 'token' }, maxAttempts: 3, retryStrategy: undefined });
}

/** An endpoint whose sender `/sender/1` runs invocation `inv-1` of function `App/Fn`. */
async function start(options: Omit<S3EndpointOptions, 'backend' | 'senders'> = {}): Promise<{ url: string; senders: SqsSenders }> {
  const senders = new SqsSenders();
  const registration = senders.register('App/Fn', 'Fn');
  registration.begin({ invocation: 'App/Fn#1', invocationKey: 'inv-1', eventIds: [] });
  endpoint = await startS3Endpoint({ backend: local.endpoint, senders, ...options });
  return { url: `${endpoint.endpoint}${registration.path}`, senders };
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

async function read(s3: S3Client, key: string, bucket = BUCKET): Promise<Buffer> {
  const reply = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await reply.Body!.transformToByteArray());
}

let counter = 0;
/** A key no other test wrote. */
function freshKey(): string {
  counter += 1;
  return `event-data/${sha256(`event-${counter}`)}/${sha256(`data-${counter}`)}`;
}

describe('the S3 endpoint in front of s3rver', () => {
  test('stores and returns an object of 6 MiB byte for byte, through a sender path', async () => {
    const { url } = await start();
    const s3 = client(url);
    const body = Buffer.alloc(6 * 1024 * 1024, 7);
    body.write('{"attachment":"', 0);
    const key = freshKey();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, ContentType: 'application/json', IfNoneMatch: '*' }));
    const back = await read(s3, key);
    expect(back.length).toBe(body.length);
    expect(sha256(back)).toBe(sha256(body));
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(body.length);
  });

  test("a client configured only by a function's environment (AWS_ENDPOINT_URL_S3 with the sender path) reaches the endpoint path-style, attributed to its invocation", async () => {
    const asked: string[] = [];
    const { url } = await start({ decideFault: ({ functionKey, invocationKey, operation }) => (asked.push(`${functionKey} ${invocationKey} ${operation}`), 'none') });
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ENDPOINT_URL_S3: url, AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_REGION: 'us-east-1' });
    try {
      const s3 = new S3Client({});
      const key = freshKey();
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'from the environment', IfNoneMatch: '*' }));
      expect((await read(s3, key)).toString()).toBe('from the environment');
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    expect(asked).toEqual(['App/Fn inv-1 PutObject', 'App/Fn inv-1 GetObject']);
  });

  test('a conditional PutObject (If-None-Match: *) of a key that exists is refused with 412 and leaves the first object; s3rver alone would replace it', async () => {
    const { url } = await start();
    const s3 = client(url);
    const key = freshKey();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'first', IfNoneMatch: '*' }));
    await expect(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'second', IfNoneMatch: '*' }))).rejects.toMatchObject({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
    expect((await read(s3, key)).toString()).toBe('first');

    // why the endpoint emulates it: s3rver itself ignores the condition (S3 added conditional writes in 2024)
    const direct = new S3Client({ region: 'us-east-1', endpoint: local.endpoint, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'third', IfNoneMatch: '*' }));
    expect((await read(s3, key)).toString()).toBe('third');
  });

  test('concurrent conditional puts of one key: exactly one is stored, the others get 412', async () => {
    const { url } = await start();
    const s3 = client(url);
    const key = freshKey();
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((body) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, IfNoneMatch: '*' }))));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome as PromiseRejectedResult).reason.name)).toEqual(['PreconditionFailed', 'PreconditionFailed', 'PreconditionFailed']);
  });

  test('IAM decides each object request before s3rver sees it: a refusal is 403 AccessDenied with the message, and nothing is stored', async () => {
    const asked: { accessKeyId?: string; operation: string; bucket: string; key: string; sse?: string }[] = [];
    const { url } = await start({
      authorize: async ({ accessKeyId, operation, bucket, key, headers }) => {
        asked.push({ ...(accessKeyId === undefined ? {} : { accessKeyId }), operation, bucket, key, ...(headers['x-amz-server-side-encryption'] === undefined ? {} : { sse: headers['x-amz-server-side-encryption'] }) });
        return operation === 'PutObject' && key.startsWith('denied/') ? 'User: fn is not authorized to perform: s3:PutObject (simulated IAM evaluation)' : undefined;
      },
    });
    const s3 = client(url, 'ASIASIMCALLER');
    await expect(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'denied/x', Body: 'x', ServerSideEncryption: 'aws:kms' }))).rejects.toMatchObject({
      name: 'AccessDenied',
      message: expect.stringContaining('not authorized to perform: s3:PutObject'),
      $metadata: { httpStatusCode: 403 },
    });
    await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'denied/x' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(asked).toEqual([
      { accessKeyId: 'ASIASIMCALLER', operation: 'PutObject', bucket: BUCKET, key: 'denied/x', sse: 'aws:kms' },
      { accessKeyId: 'ASIASIMCALLER', operation: 'GetObject', bucket: BUCKET, key: 'denied/x' },
      // the key is missing: S3 answers 404 only to a caller who may list the bucket
      { accessKeyId: 'ASIASIMCALLER', operation: 'ListBucket', bucket: BUCKET, key: 'denied/x' },
    ]);
  });

  test('a request that is not an object operation or ListObjectsV2 is refused with 501 NotImplemented, naming what is emulated', async () => {
    const { url } = await start();
    const reply = await fetch(`${url}/${BUCKET}?tagging`);
    expect(reply.status).toBe(501);
    expect(await reply.text()).toContain('PutObject, GetObject, HeadObject and DeleteObject');
  });

  test('a missing object is 404 NoSuchKey to a caller IAM lets s3:ListBucket (s3:prefix the key), 403 AccessDenied to one it does not, as S3 answers; an object there is read either way', async () => {
    const asked: { operation: string; key: string }[] = [];
    let mayList = true;
    const { url } = await start({
      authorize: async ({ operation, key }) => {
        asked.push({ operation, key });
        return operation === 'ListBucket' && !mayList ? 'User: fn is not authorized to perform: s3:ListBucket (simulated IAM evaluation)' : undefined;
      },
    });
    const s3 = client(url);
    const missing = freshKey();
    const there = freshKey();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: there, Body: 'here' }));
    await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: missing }))).rejects.toMatchObject({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
    await expect(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: missing }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    expect(asked.filter((a) => a.operation === 'ListBucket')).toEqual([
      { operation: 'ListBucket', key: missing },
      { operation: 'ListBucket', key: missing },
    ]);
    mayList = false;
    await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: missing }))).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    await expect(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: missing }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    expect((await read(s3, there)).toString()).toBe('here');
    // an object that is there needs no s3:ListBucket
    expect(asked.filter((a) => a.operation === 'ListBucket')).toHaveLength(4);
  });

  test('ListObjectsV2 is served after IAM allows s3:ListBucket with s3:prefix the request\'s prefix; a refusal is 403 AccessDenied', async () => {
    const asked: { operation: string; key: string }[] = [];
    const { url } = await start({
      authorize: async ({ operation, key }) => {
        asked.push({ operation, key });
        return operation === 'ListBucket' && !key.startsWith('event-data/') ? 'User: fn is not authorized to perform: s3:ListBucket (simulated IAM evaluation)' : undefined;
      },
    });
    const s3 = client(url);
    const key = freshKey();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: key, MaxKeys: 1 }));
    expect((listed.Contents ?? []).map((object) => object.Key)).toEqual([key]);
    const none = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${key}-not-there`, MaxKeys: 1 }));
    expect(none.Contents ?? []).toEqual([]);
    await expect(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'elsewhere/' }))).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect(asked.filter((a) => a.operation === 'ListBucket').map((a) => a.key)).toEqual([key, `${key}-not-there`, 'elsewhere/']);
  });
});

describe('the S3 endpoint faults', () => {
  test('a 503 SlowDown on the first attempt of each request: the SDK retries and the object goes through; each fault is heard with its function', async () => {
    const questions: S3FaultQuestion[] = [];
    const heard: string[] = [];
    const { url } = await start({
      decideFault: (question) => {
        questions.push(question);
        return question.attempt === 1 ? 'fail' : 'none';
      },
      onFault: (fault, functionKey) => heard.push(`${fault} ${functionKey ?? '?'}`),
    });
    const s3 = client(url);
    const key = freshKey();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'payload', IfNoneMatch: '*' }));
    expect((await read(s3, key)).toString()).toBe('payload');
    expect(questions.map(({ operation, attempt, invocationKey, functionKey }) => `${functionKey} ${invocationKey} ${operation} ${attempt}`)).toEqual([
      'App/Fn inv-1 PutObject 1',
      'App/Fn inv-1 PutObject 2',
      'App/Fn inv-1 GetObject 1',
      'App/Fn inv-1 GetObject 2',
    ]);
    expect(heard).toEqual(['fail App/Fn', 'fail App/Fn']);
  });

  test("a PutObject whose reply is lost is applied; the SDK's retry meets its own object (412), and one object is stored", async () => {
    const { url } = await start({ decideFault: ({ operation, attempt }) => (operation === 'PutObject' && attempt === 1 ? 'lose-response' : 'none') });
    const s3 = client(url);
    const key = freshKey();
    await expect(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'written once', IfNoneMatch: '*' }))).rejects.toMatchObject({ name: 'PreconditionFailed' });
    expect((await read(s3, key)).toString()).toBe('written once');
  });

  test('a slow reply of 1 MiB arrives whole, in pieces', async () => {
    const { url } = await start({ decideFault: ({ operation }) => (operation === 'GetObject' ? 'slow' : 'none') });
    const s3 = client(url);
    const key = freshKey();
    const body = Buffer.from(Array.from({ length: 1024 * 1024 }, (_, index) => index % 251));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    expect(body.length).toBeGreaterThan(SLOW_PIECE_BYTES * 10);
    expect(sha256(await read(s3, key))).toBe(sha256(body));
  });

  test('an object altered after it was written: every read gets the same size and another digest; a missing one: NoSuchKey for every reader', async () => {
    const heard: string[] = [];
    const altered = freshKey();
    const missing = freshKey();
    const { url } = await start({
      decideObjectFault: (_bucket, key) => (key === altered ? 'altered' : key === missing ? 'missing' : undefined),
      onFault: (fault, functionKey, target) => heard.push(`${fault} ${functionKey ?? '?'} ${target.key === altered ? 'altered-key' : 'missing-key'}`),
    });
    const s3 = client(url);
    const body = Buffer.from(JSON.stringify({ lines: Array.from({ length: 1000 }, (_, index) => `line ${index}`) }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: altered, Body: body, IfNoneMatch: '*' }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: missing, Body: body, IfNoneMatch: '*' }));
    const first = await read(s3, altered);
    const second = await read(s3, altered);
    expect(first.length).toBe(body.length);
    expect(sha256(first)).not.toBe(sha256(body));
    expect(sha256(second)).toBe(sha256(first));
    await expect(read(s3, missing)).rejects.toMatchObject({ name: 'NoSuchKey' });
    await expect(read(s3, missing)).rejects.toMatchObject({ name: 'NoSuchKey' });
    // the object's fault, whichever function read it first (that is the connections' order, not the seed's)
    expect(heard).toEqual(['altered ? altered-key', 'missing ? missing-key']);
    expect(endpoint!.injectedObjectFaults()).toEqual([
      { bucket: BUCKET, key: altered, fault: 'altered' },
      { bucket: BUCKET, key: missing, fault: 'missing' },
    ]);
  });

  test("an object's fault is heard as the object's, not as the function whose read came first: two readers in either order give one account", async () => {
    const heard: string[] = [];
    const [first, second] = [freshKey(), freshKey()];
    const { url, senders } = await start({ decideObjectFault: () => 'altered', onFault: (fault, functionKey, target) => heard.push(`${fault} ${functionKey ?? 'no function'} ${target.key === first ? 'first' : 'second'}`) });
    const other = senders.register('App/Other', 'Other');
    other.begin({ invocation: 'App/Other#1', invocationKey: 'inv-2', eventIds: [] });
    const [fn, otherFn] = [client(url), client(`${endpoint!.endpoint}${other.path}`)];
    for (const key of [first, second]) await fn.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'data', IfNoneMatch: '*' }));
    // GIVEN one object first read by Fn, the other first read by Other (which worker's read arrives first is the
    // connections' order, not the seed's)
    await read(fn, first);
    await read(otherFn, first);
    await read(otherFn, second);
    await read(fn, second);

    // THEN each fault is heard once, the same way
    expect(heard).toEqual(['altered no function first', 'altered no function second']);
  });

  test('an object fault is decided at its first read after it exists: a read before the write decides nothing', async () => {
    const key = freshKey();
    const { url } = await start({ decideObjectFault: () => 'missing' });
    const s3 = client(url);
    await expect(read(s3, key)).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(endpoint!.injectedObjectFaults()).toEqual([]);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'late' }));
    await expect(read(s3, key)).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(endpoint!.injectedObjectFaults()).toEqual([{ bucket: BUCKET, key, fault: 'missing' }]);
  });

  test('a request no invocation sent (no sender path) gets no fault', async () => {
    let asked = 0;
    endpoint = await startS3Endpoint({ backend: local.endpoint, senders: new SqsSenders(), decideFault: () => ((asked += 1), 'fail') });
    const s3 = client(endpoint.endpoint);
    const key = freshKey();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'operator' }));
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(asked).toBe(0);
  });
});

describe('the seeded S3 fault decisions', () => {
  const question: S3FaultQuestion = { functionKey: 'App/Fn', invocationKey: 'App/Mapping|m-1|1', operation: 'GetObject', bucket: BUCKET, key: 'event-data/a/b', attempt: 1 };

  test('depend on the seed and the request only, and follow the rates', () => {
    const plan = new FaultPlan('s3-seed', { ...NO_FAULTS, s3Failure: 0.5, s3Slow: 0.5 });
    const decisions = Array.from({ length: 400 }, (_, attempt) => decideS3RequestFault(plan, { ...question, attempt: attempt + 1 }));
    expect(decisions).toEqual(Array.from({ length: 400 }, (_, attempt) => decideS3RequestFault(new FaultPlan('s3-seed', { ...NO_FAULTS, s3Failure: 0.5, s3Slow: 0.5 }), { ...question, attempt: attempt + 1 })));
    const failed = decisions.filter((fault) => fault === 'fail').length;
    expect(failed).toBeGreaterThan(150);
    expect(failed).toBeLessThan(250);
    expect(decisions.filter((fault) => fault === 'slow').length).toBeGreaterThan(50);
    // a get never loses its reply: only a put is a write whose reply can be lost
    expect(decisions).not.toContain('lose-response');
    expect(new Set(Array.from({ length: 50 }, (_, attempt) => decideS3RequestFault(new FaultPlan('s', { ...NO_FAULTS, lostResponse: 1 }), { ...question, operation: 'PutObject', attempt })))).toEqual(new Set(['lose-response']));
  });

  test('no rates, no faults; an object fault is decided per object', () => {
    const none = new FaultPlan('s3-seed', NO_FAULTS);
    expect(decideS3RequestFault(none, question)).toBe('none');
    expect(decideS3ObjectFault(none, BUCKET, 'k')).toBeUndefined();
    const altering = new FaultPlan('s3-seed', { ...NO_FAULTS, s3ObjectAltered: 1 });
    expect(decideS3ObjectFault(altering, BUCKET, 'k')).toBe('altered');
    expect(decideS3ObjectFault(new FaultPlan('s3-seed', { ...NO_FAULTS, s3ObjectMissing: 1, s3ObjectAltered: 1 }), BUCKET, 'k')).toBe('missing');
  });
});

describe('localBucketName', () => {
  test("a template's BucketName is kept; else the stack and logical id, as S3 allows a name", () => {
    expect(localBucketName({ bucketName: 'my-bucket', stackName: 'S', logicalId: 'B' })).toBe('my-bucket');
    expect(localBucketName({ stackName: 'Orders_Stack', logicalId: 'PayloadBucketA1B2' })).toBe('orders-stack-payloadbucketa1b2');
    expect(localBucketName({ stackName: 'S'.repeat(80), logicalId: 'B' })).toHaveLength(63);
  });
});
