/**
 * The Lambda context object's data, built by the runner for each invocation and sent to the worker, which adds
 * `getRemainingTimeInMillis()` and `callbackWaitsForEmptyEventLoop` (functions cannot cross threads).
 * Field names and formats as the Node.js runtime sets them: https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { deterministicUuid } from '../aws/message-ids';

/** The serializable part of the context object. */
export interface LambdaContextData {
  readonly awsRequestId: string;
  readonly functionName: string;
  /** `$LATEST`: the simulator runs the unpublished function. */
  readonly functionVersion: string;
  /** `arn:aws:lambda:<region>:<account>:function:<name>` */
  readonly invokedFunctionArn: string;
  /** A string, as in the Node.js runtime. */
  readonly memoryLimitInMB: string;
  /** `/aws/lambda/<name>` */
  readonly logGroupName: string;
  /** `<yyyy>/<mm>/<dd>/[$LATEST]<32 hex digits>`, one per execution environment. */
  readonly logStreamName: string;
  /**
   * When the invocation times out, in REAL epoch milliseconds: `getRemainingTimeInMillis()` counts down to it when no
   * scheduler decides the run (under one, see {@link LambdaContextData.timeoutMs}).
   */
  readonly deadlineMs: number;
  /**
   * The function's timeout in milliseconds. Under the run's seeded scheduler, `getRemainingTimeInMillis()` is this less
   * the invocation's elapsed virtual time (how far its timers have moved it), the same time the scheduler times the
   * invocation out by: real time, which a loaded machine stretches, decides nothing a seed should.
   */
  readonly timeoutMs: number;
}

/** The function's identity, the same for every invocation. */
export interface LambdaFunctionIdentity {
  readonly functionName: string;
  readonly region: string;
  readonly accountId: string;
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
}

/** The version the simulator reports: the function is never published. */
export const FUNCTION_VERSION = '$LATEST';

/** `/aws/lambda/<function name>` */
export function logGroupNameOf(functionName: string): string {
  return `/aws/lambda/${functionName}`;
}

/**
 * A new log stream name for an execution environment started at `epochMs`: `<yyyy>/<mm>/<dd>/[$LATEST]<hex>`. The hex
 * digits are drawn from `seed` (the environment's worker seed, under the run's scheduler: its seed, function and
 * environment number), so a replay names the same streams. @default `seed`: random digits
 */
export function newLogStreamName(epochMs: number, seed?: number): string {
  const day = new Date(epochMs).toISOString().slice(0, 10).replaceAll('-', '/');
  const digits = seed === undefined ? randomBytes(16).toString('hex') : deterministicUuid(`log-stream|${seed}`, 0).replaceAll('-', '');
  return `${day}/[${FUNCTION_VERSION}]${digits}`;
}

/**
 * The `awsRequestId` of an environment's `invocation`-th invocation (1, 2, ...), drawn from `seed` (the environment's
 * worker seed, see {@link newLogStreamName}) so that a replay gives each invocation the same id. @default `seed`: a random UUID
 */
export function awsRequestIdOf(invocation: number, seed?: number): string {
  return seed === undefined ? randomUUID() : deterministicUuid(`request|${seed}`, invocation);
}

/** The context data of one invocation starting now (`realNowMs`, real time), with its `awsRequestId`. */
export function lambdaContextData(identity: LambdaFunctionIdentity, logStreamName: string, realNowMs: number, awsRequestId: string): LambdaContextData {
  return {
    awsRequestId,
    functionName: identity.functionName,
    functionVersion: FUNCTION_VERSION,
    invokedFunctionArn: `arn:aws:lambda:${identity.region}:${identity.accountId}:function:${identity.functionName}`,
    memoryLimitInMB: String(identity.memorySizeMb),
    logGroupName: logGroupNameOf(identity.functionName),
    logStreamName,
    deadlineMs: realNowMs + identity.timeoutSeconds * 1000,
    timeoutMs: identity.timeoutSeconds * 1000,
  };
}
