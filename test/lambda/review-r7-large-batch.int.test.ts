/**
 * Review r7 (seventh session, adversarial), R7-6: MAX_OFFLOADED_DATA_BYTES (64 MiB) is documented as keeping "a Lambda
 * of the default sizes able to read what was written" (lambda/contract/claim-check.ts), and docs/LARGE-EVENTS.md says an
 * offloaded event that cannot be read fails "that message alone, never the batch". A subscriber's defaults are 256 MiB
 * of memory and batches of 10 (lib/private/secure-nodejs-function.ts, lib/consumer/private/defaults.ts). Here a batch
 * of two events of 64 MiB data each, both written as the producer allows, runs in a Node process whose heap alone may
 * take all of a default Lambda's 256 MiB (generous: on Lambda the buffers outside the heap count against it too),
 * against DynamoDB Local and the local S3.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig } from '../../lambda/config';
import { MAX_OFFLOADED_DATA_BYTES, payloadDataRef, payloadObjectKey } from '../../lambda/contract/claim-check';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { startLocalS3, type LocalS3 } from '../support/s3-local';
import { sqsRecord } from './helpers';

const sha256 = (value: string | Uint8Array): string => createHash('sha256').update(value).digest('hex');
/** The memory of a subscriber's function by default, in MiB. */
const DEFAULT_LAMBDA_MEMORY_MIB = 256;

let proxy: FaultProxy;
let s3: LocalS3;
let bucket: string;
let inboxConfig: ConsumerConfig;

beforeAll(async () => {
  let client;
  [{ client, proxy }, s3] = await Promise.all([startTestbed(), startLocalS3()]);
  [bucket, inboxConfig] = await Promise.all([s3.createBucket(), createInbox(client, { subscriberName: 'archive', deduplicationWindowSeconds: 3600 })]);
});
afterAll(async () => {
  await Promise.all([proxy.stop(), s3.stop()]);
});

/** Writes an object of `size` bytes of JSON (`{"attachment":"xxx…"}`) as the producer would, and returns its envelope. */
async function offloadedEvent(size: number): Promise<Record<string, unknown>> {
  const id = `document-${crypto.randomUUID()}`;
  const body = Buffer.alloc(size, 'x');
  body.write('{"attachment":"', 0);
  body.write('"}', size - 2);
  const digest = sha256(body);
  const key = payloadObjectKey('event-data/', sha256(id), digest, new Date());
  await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' }));
  return {
    specversion: '1.0',
    id,
    source: 'documents-service',
    type: 'DocumentAttached',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    dataref: payloadDataRef(bucket, key),
    iefdatasha256: digest,
    iefdatasize: size,
  };
}

test('R7-6: a batch of two 64 MiB offloaded events is applied by a consumer of the default memory, not an out-of-memory crash of the whole batch', async () => {
  const size = Number(process.env.R7_EVENT_BYTES ?? MAX_OFFLOADED_DATA_BYTES); // R7_EVENT_BYTES: the runner's check at a size that fits
  const events = [await offloadedEvent(size), await offloadedEvent(size)];
  const records = events.map((event) => sqsRecord(JSON.stringify(event)));
  const outcome = await new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [`--max-old-space-size=${DEFAULT_LAMBDA_MEMORY_MIB}`, '--require', 'tsx/cjs', path.join(__dirname, 'review-r7-large-batch-runner.ts')],
      {
        env: {
          ...process.env,
          AWS_SDK_JS_SUPPRESS_NODE_VERSION_WARNING: '1',
          R7_DYNAMODB_ENDPOINT: proxy.endpoint,
          R7_S3_ENDPOINT: s3.endpoint,
          R7_INBOX_CONFIG: JSON.stringify(inboxConfig),
          R7_RECORDS: JSON.stringify(records),
          // the flow's bucket, as the flow sets it: without it the consumer follows no reference (R7-4) and reads nothing
          IEF_PAYLOAD_BUCKET_NAME: bucket,
          IEF_PAYLOAD_KEY_PREFIX: 'event-data/',
        },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, signal: error?.signal ?? null, stdout, stderr }),
    );
  });
  // seen: the process dies 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory'
  // (exit 134): on Lambda the invocation fails as a whole, every record of the batch is retried, and after
  // maxReceiveCount each (the valid events beside the large ones too) reaches the dead-letter queue without a reason
  const fatal = /FATAL ERROR[^\n]*/.exec(outcome.stderr)?.[0];
  // the runner's last stdout line is the batch response (the consumer's JSON log lines come before it)
  const response = outcome.stdout.trim().split('\n').filter((line) => line.startsWith('{"response"')).at(-1);
  expect({ code: outcome.code, fatal, response }).toEqual({ code: 0, fatal: undefined, response: JSON.stringify({ response: { batchItemFailures: [] } }) });
});
