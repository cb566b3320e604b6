/**
 * A real local S3 for tests: the simulator's own (simulator/aws/s3-local.ts starts s3rver, the npm S3 emulator that
 * stores objects on disk) behind the simulator's S3 endpoint (simulator/aws/s3-endpoint.ts) with no IAM and no faults,
 * for what s3rver 3.7 lacks and the claim-check relies on: S3's conditional write (`PutObject` with
 * `If-None-Match: *` answers `412 PreconditionFailed` when the key exists; s3rver alone overwrites). One way to start
 * s3rver in this project: tests and runs share it.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Endpoint } from '../../simulator/aws/s3-endpoint';
import { startLocalS3 as startS3rver } from '../../simulator/aws/s3-local';

/** A running local S3. */
export interface LocalS3 {
  /** The endpoint in front of s3rver (conditional PutObject emulated; object requests only). */
  readonly endpoint: string;
  /** A client of {@link endpoint} (path-style, fixed test credentials): what the code under test is given. */
  readonly client: S3Client;
  /** A client of s3rver itself, for what the endpoint does not serve (bucket requests such as ListObjectsV2). */
  readonly backendClient: S3Client;
  /** Creates a bucket and returns its name. */
  createBucket(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

function clientOf(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Starts s3rver and the endpoint in front of it, each on a free port of 127.0.0.1. */
export async function startLocalS3(): Promise<LocalS3> {
  const s3rver = await startS3rver([]);
  const front = await startS3Endpoint({ backend: s3rver.endpoint }).catch(async (error: unknown) => {
    await s3rver.stop();
    throw error;
  });
  const client = clientOf(front.endpoint);
  const backendClient = clientOf(s3rver.endpoint);
  let buckets = 0;
  return {
    endpoint: front.endpoint,
    client,
    backendClient,
    async createBucket(prefix = 'payloads') {
      const name = `${prefix}-${process.pid}-${++buckets}-${crypto.randomUUID().slice(0, 8)}`;
      await backendClient.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async stop() {
      client.destroy();
      backendClient.destroy();
      try {
        await front.stop();
      } finally {
        await s3rver.stop();
      }
    },
  };
}
