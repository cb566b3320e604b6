/**
 * A real local S3 for tests: `s3rver` (npm, a fake S3 server for Node that stores objects on disk), in this process,
 * behind a thin HTTP front that adds what s3rver 3.7 lacks and the claim-check relies on: S3's conditional write
 * (`PutObject` with `If-None-Match: *` answers `412 PreconditionFailed` when the key exists; s3rver overwrites). The
 * front checks and writes one key at a time, so two writes of one key cannot both pass the check. Everything else
 * (object bytes, `NoSuchKey`, metadata) is s3rver's own.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** A running local S3. */
export interface LocalS3 {
  readonly endpoint: string;
  /** A client for it (path-style, fixed test credentials). */
  readonly client: S3Client;
  /** Creates a bucket and returns its name. */
  createBucket(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

interface S3rverStore {
  existsObject(bucket: string, key: string): Promise<boolean>;
}

const PRECONDITION_FAILED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>';

/** `/bucket/key...` of a path-style request, or undefined. */
function bucketAndKey(url: string): { bucket: string; key: string } | undefined {
  const pathname = new URL(url, 'http://local').pathname;
  const match = /^\/([^/]+)\/(.+)$/.exec(pathname);
  return match === null ? undefined : { bucket: decodeURIComponent(match[1]!), key: decodeURIComponent(match[2]!) };
}

/** Starts s3rver (as a request handler, no server of its own) behind the conditional-write front, on a free port. */
export async function startLocalS3(): Promise<LocalS3> {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-s3-'));
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const handle = s3rver.callback() as (request: IncomingMessage, response: ServerResponse) => void;
  const store = (s3rver as unknown as { store: S3rverStore }).store;
  // one conditional write per key at a time: the check and the write are one step, as in S3
  const keyLocks = new Map<string, Promise<void>>();
  const front: Server = createServer((request, response) => {
    const target = request.method === 'PUT' && request.headers['if-none-match'] !== undefined ? bucketAndKey(request.url ?? '/') : undefined;
    if (target === undefined) {
      handle(request, response);
      return;
    }
    const lockKey = `${target.bucket}/${target.key}`;
    const previous = keyLocks.get(lockKey) ?? Promise.resolve();
    const done = previous.then(async () => {
      if (request.headers['if-none-match'] === '*' && (await store.existsObject(target.bucket, target.key))) {
        request.resume();
        response.writeHead(412, { 'content-type': 'application/xml' }).end(PRECONDITION_FAILED);
        return;
      }
      await new Promise<void>((resolve) => {
        response.on('close', resolve);
        handle(request, response);
      });
    });
    keyLocks.set(lockKey, done.catch(() => undefined));
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  let buckets = 0;
  return {
    endpoint,
    client,
    async createBucket(prefix = 'payloads') {
      const name = `${prefix}-${process.pid}-${++buckets}-${crypto.randomUUID().slice(0, 8)}`;
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async stop() {
      client.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
