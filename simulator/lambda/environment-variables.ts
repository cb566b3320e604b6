/**
 * The `process.env` of a simulated execution environment: the function's own variables, what Lambda sets
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime), and the
 * endpoints that keep every AWS call on this machine:
 * - `AWS_ENDPOINT_URL_DYNAMODB`: the environment's fault proxy in front of DynamoDB Local;
 * - `AWS_ENDPOINT_URL_SQS`: the simulator's SQS endpoint;
 * - `AWS_ENDPOINT_URL_SNS`: the simulator's SNS endpoint (Publish, PublishBatch: ../aws/sns-endpoint.ts), when the run has one;
 * - `AWS_ENDPOINT_URL_S3`: the simulator's S3 endpoint (object requests: ../aws/s3-endpoint.ts), when the app has a bucket;
 * - `AWS_ENDPOINT_URL`: a loopback port that resets every connection, so a call to any other service fails at once
 *   instead of reaching AWS (the SDK v3 reads these variables:
 *   https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html);
 * - static dummy credentials, no shared config or credentials file (`AWS_CONFIG_FILE` and
 *   `AWS_SHARED_CREDENTIALS_FILE` name a file that does not exist, so no `~/.aws` profile, endpoint or credential is
 *   read), and no instance metadata lookups.
 * The process's own environment is NOT inherited: the worker sees only these variables, as a Lambda function does.
 */
import { join } from 'node:path';
import { FUNCTION_VERSION, logGroupNameOf } from './lambda-context';

/** What the environment variables are made of. */
export interface EnvironmentVariablesInput {
  /** The function's `Environment.Variables`, already resolved to local names. */
  readonly functionVariables: Readonly<Record<string, string>>;
  readonly functionName: string;
  readonly region: string;
  readonly memorySizeMb: number;
  /** `LAMBDA_TASK_ROOT`: the asset directory. */
  readonly taskRoot: string;
  /** `Handler` */
  readonly handler: string;
  /** The `AWS_EXECUTION_ENV` runtime name, from `Runtime` (`nodejs24.x` → `AWS_Lambda_nodejs24.x`). */
  readonly runtime: string;
  readonly logStreamName: string;
  readonly dynamoDbEndpoint: string;
  readonly sqsEndpoint: string;
  /** The simulator's SNS endpoint (`AWS_ENDPOINT_URL_SNS`): Publish and PublishBatch. @default SNS calls go to the blocked endpoint */
  readonly snsEndpoint?: string;
  /** The simulator's S3 endpoint (`AWS_ENDPOINT_URL_S3`). @default S3 calls go to the blocked endpoint */
  readonly s3Endpoint?: string;
  /** Where every other AWS service's calls go (and fail). */
  readonly blockedEndpoint: string;
  /** `AWS_LAMBDA_LOG_LEVEL`, from the function's `LoggingConfig.ApplicationLogLevel`. @default not set */
  readonly applicationLogLevel?: string;
  /** `AWS_ACCESS_KEY_ID`, which names the function to the simulator's endpoints. @default {@link SHARED_ACCESS_KEY_ID} */
  readonly accessKeyId?: string;
  /** `TMPDIR` (what `os.tmpdir()` returns): the environment's own temporary directory. @default not set */
  readonly tmpDirectory?: string;
}

/** The dummy access key id of an environment given none. */
export const SHARED_ACCESS_KEY_ID = 'SIMULATORACCESSKEY';

/** A path that exists on no machine: the SDK finds no shared config or credentials file there. */
export const NO_SHARED_AWS_FILE = join('/', 'nonexistent-idempotent-event-flow-simulator', 'aws-config');

/** Function variables that could send a call elsewhere (`AWS_ENDPOINT_URL_SNS`, `AWS_PROFILE`, ...) are dropped. */
const ENDPOINT_OVERRIDE = /^AWS_(ENDPOINT_URL($|_)|IGNORE_CONFIGURED_ENDPOINT_URLS$|PROFILE$|CONFIG_FILE$|SHARED_CREDENTIALS_FILE$)/;

function withoutEndpointOverrides(variables: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(variables).filter(([name]) => !ENDPOINT_OVERRIDE.test(name)));
}

/** The worker's complete `process.env`. Lambda's reserved variables and the endpoints win over the function's own;
 * function variables that would redirect a call (any `AWS_ENDPOINT_URL*`, `AWS_PROFILE`, ...) are dropped. */
export function lambdaEnvironmentVariables(input: EnvironmentVariablesInput): Record<string, string> {
  return {
    ...withoutEndpointOverrides(input.functionVariables),
    AWS_REGION: input.region,
    AWS_DEFAULT_REGION: input.region,
    AWS_LAMBDA_FUNCTION_NAME: input.functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(input.memorySizeMb),
    AWS_LAMBDA_FUNCTION_VERSION: FUNCTION_VERSION,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: logGroupNameOf(input.functionName),
    AWS_LAMBDA_LOG_STREAM_NAME: input.logStreamName,
    ...(input.applicationLogLevel === undefined ? {} : { AWS_LAMBDA_LOG_LEVEL: input.applicationLogLevel }),
    AWS_EXECUTION_ENV: `AWS_Lambda_${input.runtime}`,
    LAMBDA_TASK_ROOT: input.taskRoot,
    _HANDLER: input.handler,
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
    ...(input.tmpDirectory === undefined ? {} : { TMPDIR: input.tmpDirectory }),
    AWS_ACCESS_KEY_ID: input.accessKeyId ?? SHARED_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: 'simulator-secret-access-key',
    AWS_SESSION_TOKEN: 'simulator-session-token',
    AWS_CONFIG_FILE: NO_SHARED_AWS_FILE,
    AWS_SHARED_CREDENTIALS_FILE: NO_SHARED_AWS_FILE,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ENDPOINT_URL: input.blockedEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: input.dynamoDbEndpoint,
    AWS_ENDPOINT_URL_SQS: input.sqsEndpoint,
    ...(input.snsEndpoint === undefined ? {} : { AWS_ENDPOINT_URL_SNS: input.snsEndpoint }),
    ...(input.s3Endpoint === undefined ? {} : { AWS_ENDPOINT_URL_S3: input.s3Endpoint }),
    // the SDK's notice about the LOCAL Node.js version; the function runs on `Runtime` in AWS, not on this one
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
