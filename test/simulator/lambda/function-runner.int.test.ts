/**
 * The function runner with small hand-written handlers: the Lambda environment and context, warm and cold
 * environments, the worker's simulated `Date`, handler styles and failures, timeouts, output capture, and the calls
 * that must not leave the machine.
 */
import { afterAll, afterEach, describe, expect, inject, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import type { FunctionRunner } from '../../../simulator/lambda/function-runner';
import type { InvocationOutcome, SimulationObserver } from '../../../simulator/observation/observer';
import { assetDirectory, functionModel, requireOf, runner } from './handler-kit';

const ECHO = `
let invocations = 0;
exports.handler = async (event, context) => {
  invocations += 1;
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  const env = {};
  for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_LAMBDA_FUNCTION_NAME', 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 'AWS_LAMBDA_FUNCTION_VERSION',
    'AWS_EXECUTION_ENV', 'LAMBDA_TASK_ROOT', '_HANDLER', 'TZ', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_CONFIG_FILE',
    'AWS_SHARED_CREDENTIALS_FILE', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL_SNS', 'TABLE_NAME', 'HOME']) {
    env[name] = process.env[name];
  }
  const { awsRequestId, functionName, functionVersion, invokedFunctionArn, memoryLimitInMB, logGroupName, logStreamName, callbackWaitsForEmptyEventLoop } = context;
  return {
    event, env, invocations,
    context: { awsRequestId, functionName, functionVersion, invokedFunctionArn, memoryLimitInMB, logGroupName, logStreamName, callbackWaitsForEmptyEventLoop },
    remainingMs: context.getRemainingTimeInMillis(),
    notSerialized: () => 1,
  };
};
`;

const DATES = `
exports.handler = async () => {
  class Later extends Date {}
  const dateString = Date();
  return {
    now: Date.now(),
    constructed: new Date().getTime(),
    called: typeof dateString === 'string' ? Date.parse(dateString) : -1,
    parse: Date.parse('2020-01-01T00:00:00.000Z'),
    utc: Date.UTC(2020, 0, 1),
    withArgument: new Date(0).toISOString(),
    withParts: new Date(2020, 0, 1, 12).getTime() - new Date(2020, 0, 1, 0).getTime(),
    instance: new Date() instanceof Date,
    constructorIsGlobal: new Date().constructor === Date,
    subclass: new Later(5).getTime() === 5 && new Later() instanceof Date && new Later() instanceof Later,
    length: Date.length,
  };
};
`;

const FAILURES = `
exports.handler = async (event) => {
  if (event.do === 'throw') { const error = new TypeError('bad input'); throw error; }
  if (event.do === 'reject-later') { Promise.reject(new RangeError('nobody awaited me')); await new Promise((resolve) => setTimeout(resolve, 1000)); return 'late'; }
  if (event.do === 'hang') return new Promise(() => undefined);
  if (event.do === 'log') { console.log('first line'); console.error('an error line'); console.log('second\\nthird'); return 'logged'; }
  if (event.do === 'exit') process.exit(3);
  return 'fine';
};
`;

const CALLBACKS = `
exports.handler = (event, context, callback) => {
  setTimeout(() => (event.fail ? callback(new Error('callback failure')) : callback(null, { doubled: event.value * 2 })), 5);
};
`;

interface EchoResponse {
  readonly event: unknown;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly invocations: number;
  readonly context: Readonly<Record<string, unknown>>;
  readonly remainingMs: number;
}

interface DatesResponse {
  readonly now: number;
  readonly constructed: number;
  readonly called: number;
}

/** The response of an invocation that must have returned. */
function responseOf<T>(outcome: InvocationOutcome): T {
  if (outcome.kind !== 'returned') throw new Error(`the invocation did not return: ${JSON.stringify(outcome)}`);
  return outcome.response as T;
}

const directories: { remove(): void }[] = [];
const runners: FunctionRunner[] = [];

function asset(files: Record<string, string>): string {
  const created = assetDirectory(files);
  directories.push(created);
  return created.directory;
}

function track(created: FunctionRunner): FunctionRunner {
  runners.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(runners.splice(0).map((each) => each.stop()));
});
afterAll(() => {
  for (const directory of directories) directory.remove();
});

describe('FunctionRunner: environment and context', () => {
  test('gives the handler the Lambda variables, the local endpoints, dummy credentials and a Lambda context; the response is JSON', async () => {
    const directory = asset({ 'index.js': ECHO });
    const fn = functionModel(directory, { memorySizeMb: 512, timeoutSeconds: 7 });
    const run = track(runner(fn, { environment: { TABLE_NAME: 'orders-local', AWS_ENDPOINT_URL_SNS: 'https://sns.eu-west-1.amazonaws.com' }, sqsEndpoint: 'http://127.0.0.1:4566', accountId: '123456789012' }));
    const invokedAt = Date.now();
    const response = responseOf<EchoResponse>(await run.invoke({ hello: 'world' }, 'echo'));
    const returnedAt = Date.now();
    expect(response.event).toEqual({ hello: 'world' });
    expect(response).not.toHaveProperty('notSerialized');
    expect(response.env).toMatchObject({
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_LAMBDA_FUNCTION_NAME: 'Stack-EchoFunction',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      LAMBDA_TASK_ROOT: directory,
      _HANDLER: 'index.handler',
      TZ: ':UTC',
      AWS_ACCESS_KEY_ID: expect.any(String),
      AWS_SECRET_ACCESS_KEY: expect.any(String),
      AWS_SESSION_TOKEN: expect.any(String),
      AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566',
      TABLE_NAME: 'orders-local',
    });
    // no ~/.aws file is read, no variable of this process leaks in, no function variable redirects a service
    expect(response.env.AWS_CONFIG_FILE).toMatch(/nonexistent/);
    expect(response.env.AWS_SHARED_CREDENTIALS_FILE).toMatch(/nonexistent/);
    expect(response.env.HOME).toBeUndefined();
    expect(response.env.AWS_ENDPOINT_URL_SNS).toBeUndefined();
    expect(response.env.AWS_ENDPOINT_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(response.env.AWS_ENDPOINT_URL_DYNAMODB).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(response.env.AWS_ENDPOINT_URL_DYNAMODB).not.toBe(inject('dynamoDbEndpoint'));
    expect(response.context).toEqual({
      awsRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      functionName: 'Stack-EchoFunction',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:Stack-EchoFunction',
      memoryLimitInMB: '512',
      logGroupName: '/aws/lambda/Stack-EchoFunction',
      logStreamName: expect.stringMatching(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/),
      callbackWaitsForEmptyEventLoop: true,
    });
    // the 7 s timeout counts down in real time from the invocation: at most 7 s was left when the handler asked, and
    // at least 7 s less the whole invocation's real time (however slow this machine is)
    expect(response.remainingMs).toBeLessThanOrEqual(7000);
    expect(response.remainingMs).toBeGreaterThanOrEqual(7000 - (returnedAt - invokedAt));
  });

  test('reuses a warm environment, and starts another only while all are busy, up to maxEnvironments', async () => {
    const run = track(runner(functionModel(asset({ 'index.js': ECHO })), { maxEnvironments: 2 }));
    const first = await run.invoke({}, 'a');
    const second = await run.invoke({}, 'b');
    // the module stayed loaded: its counter went on
    expect([first, second].map((outcome) => responseOf<EchoResponse>(outcome).invocations)).toEqual([1, 2]);
    expect(run.stats()).toEqual({ invocations: 2, coldStarts: 1, preInitialized: 0, crashes: 0 });

    const started = Date.now();
    const concurrent = await Promise.all([1, 2, 3].map((n) => run.invoke({ sleepMs: 300 }, `c${n}`)));
    expect(concurrent.every((outcome) => outcome.kind === 'returned')).toBe(true);
    // two environments at most: the third invocation waited for one of them
    expect(run.stats()).toEqual({ invocations: 5, coldStarts: 2, preInitialized: 0, crashes: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
  });

  test("the worker's Date reads the virtual clock; every other Date behaviour is the real one", async () => {
    // a frozen clock: what the worker reads is exactly the virtual time, however long the invocations take in real time
    const clock = VirtualClock.frozen(Date.UTC(2030, 0, 1, 12));
    const run = track(runner(functionModel(asset({ 'index.js': DATES })), { clock }));
    const before = await run.invoke({}, 'd1');
    clock.advanceBy(3_600_000);
    const expectedNow = clock.now();
    const after = await run.invoke({}, 'd2');
    const earlier = responseOf<DatesResponse>(before);
    const later = responseOf<DatesResponse>(after);
    expect(earlier.now).toBe(Date.UTC(2030, 0, 1, 12));
    expect(later.now - earlier.now).toBe(3_600_000);
    expect(later.now).toBe(expectedNow);
    expect(later.constructed).toBe(expectedNow);
    // Date() is a string of whole seconds
    expect(later.called).toBe(Math.floor(expectedNow / 1000) * 1000);
    expect(later).toMatchObject({
      parse: 1_577_836_800_000,
      utc: 1_577_836_800_000,
      withArgument: '1970-01-01T00:00:00.000Z',
      withParts: 12 * 3_600_000,
      instance: true,
      constructorIsGlobal: true,
      subclass: true,
      length: 7,
    });
  });
});

describe('FunctionRunner: handler styles and loading', () => {
  test('runs callback-style handlers (3 parameters): a result and an error', async () => {
    const run = track(runner(functionModel(asset({ 'index.js': CALLBACKS }))));
    expect(await run.invoke({ value: 21 }, 'ok')).toEqual({ kind: 'returned', response: { doubled: 42 } });
    expect(await run.invoke({ fail: true }, 'fail')).toEqual({ kind: 'threw', errorName: 'Error', errorMessage: 'callback failure' });
  });

  test('loads an ES module handler at a nested path (dist/app.handler → dist/app.mjs) and a .js one under "type": "module"', async () => {
    const nested = track(runner(functionModel(asset({ 'dist/app.mjs': 'export const handler = async (event) => ({ esm: event.n + 1, url: import.meta.url });' }), { handler: 'dist/app.handler' })));
    const outcome = await nested.invoke({ n: 1 }, 'esm');
    expect(outcome).toEqual({ kind: 'returned', response: { esm: 2, url: expect.stringMatching(/^file:\/\/.*\/dist\/app\.mjs$/) } });

    const typeModule = track(runner(functionModel(asset({ 'package.json': '{ "type": "module" }', 'main.js': 'export async function run() { return typeof require; }' }), { handler: 'main.run' })));
    expect(await typeModule.invoke({}, 'type-module')).toEqual({ kind: 'returned', response: 'undefined' });
  });

  test('a missing handler file is Runtime.ImportModuleError, a missing export Runtime.HandlerNotFound', async () => {
    const directory = asset({ 'index.js': 'exports.other = async () => 1;' });
    const missingFile = track(runner(functionModel(directory, { handler: 'missing.handler' })));
    const fileOutcome = await missingFile.invoke({}, 'missing-file');
    expect(fileOutcome).toMatchObject({ kind: 'threw', errorName: 'Runtime.ImportModuleError', errorMessage: expect.stringContaining("Cannot find module 'missing'"), atInit: true });

    const missingExport = track(runner(functionModel(directory)));
    expect(await missingExport.invoke({}, 'missing-export')).toEqual({
      kind: 'threw',
      errorName: 'Runtime.HandlerNotFound',
      errorMessage: 'index.handler is undefined or not exported',
      atInit: true,
    });
  });

  test('an error the module throws while it loads fails the invocation at init, with the error as the module threw it', async () => {
    const throwsAtLoad = track(runner(functionModel(asset({ 'index.js': "class ConfigurationError extends Error { name = 'ConfigurationError'; }\nthrow new ConfigurationError('IEF_INBOX_TABLE_NAME is not set');" }))));
    expect(await throwsAtLoad.invoke({}, 'throws-at-load')).toEqual({ kind: 'threw', errorName: 'ConfigurationError', errorMessage: 'IEF_INBOX_TABLE_NAME is not set', atInit: true });
  });
});

describe('FunctionRunner: failures, timeouts and output', () => {
  test('a handler error fails the invocation and keeps the environment warm', async () => {
    const run = track(runner(functionModel(asset({ 'index.js': FAILURES }))));
    expect(await run.invoke({ do: 'throw' }, 'throw')).toEqual({ kind: 'threw', errorName: 'TypeError', errorMessage: 'bad input' });
    expect(await run.invoke({}, 'after-throw')).toEqual({ kind: 'returned', response: 'fine' });
    expect(run.stats().coldStarts).toBe(1);
  });

  test('an unhandled rejection fails the invocation and the runtime restarts (the next invocation is a cold start)', async () => {
    const run = track(runner(functionModel(asset({ 'index.js': FAILURES }))));
    expect(await run.invoke({ do: 'reject-later' }, 'reject')).toEqual({
      kind: 'threw',
      errorName: 'Runtime.UnhandledPromiseRejection',
      errorMessage: 'RangeError: nobody awaited me',
    });
    expect(await run.invoke({}, 'after-reject')).toEqual({ kind: 'returned', response: 'fine' });
    expect(run.stats().coldStarts).toBe(2);
  });

  test('process.exit in the handler fails the invocation as Runtime.ExitError', async () => {
    const run = track(runner(functionModel(asset({ 'index.js': FAILURES }))));
    expect(await run.invoke({ do: 'exit' }, 'exit')).toEqual({ kind: 'threw', errorName: 'Runtime.ExitError', errorMessage: 'Runtime exited with error: exit status 3' });
    expect(await run.invoke({}, 'after-exit')).toEqual({ kind: 'returned', response: 'fine' });
    expect(run.stats().coldStarts).toBe(2);
  });

  test('an invocation running past the timeout (real time) is terminated; the next one gets a new environment', async () => {
    const run = track(runner(functionModel(asset({ 'index.js': FAILURES }), { timeoutSeconds: 1 })));
    const started = Date.now();
    expect(await run.invoke({ do: 'hang' }, 'hang')).toEqual({ kind: 'timed-out', timeoutSeconds: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(await run.invoke({}, 'after-timeout')).toEqual({ kind: 'returned', response: 'fine' });
    expect(run.stats().coldStarts).toBe(2);
  });

  test("each line the function writes to stdout and stderr reaches the observer with the function's key", async () => {
    const lines: [string, string, string][] = [];
    const observer: SimulationObserver = { onFunctionOutput: (functionKey, line, stream) => lines.push([functionKey, line, stream]) };
    const run = track(runner(functionModel(asset({ 'index.js': FAILURES })), { observer }));
    expect(await run.invoke({ do: 'log' }, 'log')).toEqual({ kind: 'returned', response: 'logged' });
    // every line arrived before the outcome
    expect(lines.filter(([, , stream]) => stream === 'stdout')).toEqual([
      ['Stack/EchoFunction', 'first line', 'stdout'],
      ['Stack/EchoFunction', 'second', 'stdout'],
      ['Stack/EchoFunction', 'third', 'stdout'],
    ]);
    expect(lines.filter(([, , stream]) => stream === 'stderr')).toEqual([['Stack/EchoFunction', 'an error line', 'stderr']]);
  });

  test('the output listener of an invocation hears its lines and no other invocation\'s, when two run at once', async () => {
    const handler = `exports.handler = async (event) => { console.log('start ' + event.n); await new Promise((resolve) => setTimeout(resolve, 50)); console.log('end ' + event.n); return event.n; };`;
    const run = track(runner(functionModel(asset({ 'index.js': handler })), { maxEnvironments: 2 }));
    const heard: string[][] = [[], []];
    const outcomes = await Promise.all([0, 1].map((n) => run.invoke({ n }, `concurrent-${n}`, (line) => heard[n]!.push(line))));
    expect(outcomes).toEqual([0, 1].map((n) => ({ kind: 'returned', response: n })));
    expect(heard).toEqual([['start 0', 'end 0'], ['start 1', 'end 1']]);
  });

  test('a call to a service that is not simulated fails on this machine and is reported', async () => {
    const handler = `
      const { DynamoDBStreamsClient, ListStreamsCommand } = ${requireOf('@aws-sdk/client-dynamodb-streams')};
      exports.handler = async () => {
        const client = new DynamoDBStreamsClient({ maxAttempts: 1 });
        try { await client.send(new ListStreamsCommand({})); return 'reached a service'; } catch (error) { return error.code ?? error.name; }
      };`;
    const lines: string[] = [];
    const run = track(runner(functionModel(asset({ 'index.js': handler })), { observer: { onFunctionOutput: (_key, line) => lines.push(line) } }));
    const outcome = await run.invoke({}, 'blocked');
    expect(outcome).toEqual({ kind: 'returned', response: 'ECONNRESET' });
    expect(lines).toContainEqual(expect.stringMatching(/blocked a call to AWS service 'dynamodb'/));
  });
});
