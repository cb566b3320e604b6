/** Hand-written handler files in a temporary directory, and function runners for them. Not a test file. */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, inject } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { FunctionRunner, type FunctionRunnerOptions } from '../../../simulator/lambda/function-runner';
import type { FunctionModel } from '../../../simulator/model/flow-model';

/** A directory with `files` (relative path → source), removed by `remove()`. */
export function assetDirectory(files: Readonly<Record<string, string>>): { readonly directory: string; remove(): void } {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-lambda-asset-'));
  for (const [relative, source] of Object.entries(files)) {
    const file = path.join(directory, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, source);
  }
  return { directory, remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
}

/** A function model of a handler in `directory`. */
export function functionModel(directory: string, overrides: Partial<FunctionModel> = {}): FunctionModel {
  return {
    key: 'Stack/EchoFunction',
    stackName: 'Stack',
    logicalId: 'EchoFunction',
    assetDirectory: directory,
    handler: 'index.handler',
    runtime: 'nodejs24.x',
    timeoutSeconds: 5,
    memorySizeMb: 256,
    environment: {},
    ...overrides,
  };
}

/** A runner with test defaults: the shared DynamoDB Local, a fresh clock, one environment. */
export function runner(fn: FunctionModel, overrides: Partial<FunctionRunnerOptions> = {}): FunctionRunner {
  return new FunctionRunner({
    fn,
    environment: {},
    clock: new VirtualClock(),
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    sqsEndpoint: 'http://127.0.0.1:9',
    region: 'eu-west-1',
    maxEnvironments: 1,
    ...overrides,
  });
}

/** `require(<absolute path of an installed package>)`, for handler files outside the project. */
export function requireOf(packageName: string): string {
  return `require(${JSON.stringify(createRequire(__filename).resolve(packageName))})`;
}

/**
 * A handler (`index.js`) that touches files named `/tmp/<prefix>...`: one invocation per `invoke` on a fresh runner with
 * a frozen clock, and `machineFiles()` the machine's `/tmp` files of that prefix (which must stay absent). Registers an
 * `afterAll` that removes the handler's directory and any such machine file.
 */
export function tmpProbe(prefix: string, handler: string, seed: string, start: number): {
  invoke(event: object): Promise<Record<string, unknown>>;
  machineFiles(): string[];
} {
  const asset = assetDirectory({ 'index.js': handler });
  const machineFiles = (): string[] => fs.readdirSync('/tmp').filter((name) => name.startsWith(prefix)).sort();
  afterAll(() => {
    asset.remove();
    for (const name of machineFiles()) fs.rmSync(`/tmp/${name}`, { force: true });
  });
  const invoke = async (event: object): Promise<Record<string, unknown>> => {
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler: new SeededScheduler(seed), clock: VirtualClock.frozen(start) });
    try {
      const outcome = await run.invoke(event, seed);
      if (outcome.kind !== 'returned') throw new Error(`the invocation ${outcome.kind}: ${JSON.stringify(outcome)}`);
      return outcome.response as Record<string, unknown>;
    } finally {
      await run.stop();
    }
  };
  return { invoke, machineFiles };
}
