/**
 * Where a user's edit-and-simulate loop goes, phase by phase, on the example app: synthesizing (CDK, esbuild's
 * bundling of the six functions included), deciding to reuse an assembly (the scan of the app's sources), starting
 * and stopping DynamoDB Local, and starting one execution environment of each function (a worker thread loading its
 * bundle, up to its first invocation). Each phase runs `--repeat` times (default 3); the table shows the median and
 * the range, with the load average before and after, since timings on a shared machine move with its load.
 *
 *   npx tsx bench/inner-loop.ts [--repeat N]
 *
 * The whole run (rounds included) is measured by the CLI itself (`realSeconds` of `--json`): see docs/BENCHMARKS.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';
import { VirtualClock } from '../simulator/aws/clock';
import { startDynamoDbLocal } from '../simulator/aws/dynamodb-local';
import { FunctionRunner } from '../simulator/lambda/function-runner';
import { newestSource } from '../simulator/model/assembly-cache';
import { readAssembly } from '../simulator/model/read-assembly';
import { synthesize } from '../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '..');

function load(): string {
  return loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function summary(samples: readonly number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${(median / 1000).toFixed(2)} s (${(sorted[0]! / 1000).toFixed(2)}-${(sorted[sorted.length - 1]! / 1000).toFixed(2)})`;
}

async function main(): Promise<void> {
  const repeatIndex = process.argv.indexOf('--repeat');
  const repeat = repeatIndex > 0 ? Number(process.argv[repeatIndex + 1]) : 3;
  const work = mkdtempSync(path.join(tmpdir(), 'ief-inner-loop-'));
  const rows: [string, string][] = [];
  const loadBefore = load();
  try {
    const synthSamples: number[] = [];
    let assembly = '';
    for (let index = 0; index < repeat; index += 1) {
      assembly = path.join(work, `cdk.out-${index}`);
      synthSamples.push(await timed(() => synthesize({ cwd: PROJECT, outputDirectory: assembly })));
    }
    rows.push(['synthesis (cdk synth, bundling the 6 functions)', summary(synthSamples)]);

    const scanSamples: number[] = [];
    for (let index = 0; index < repeat; index += 1) scanSamples.push(await timed(async () => newestSource(PROJECT)));
    rows.push(['reuse decision (scan of the app sources)', summary(scanSamples)]);

    const databaseSamples: number[] = [];
    for (let index = 0; index < repeat; index += 1) {
      databaseSamples.push(
        await timed(async () => {
          const database = await startDynamoDbLocal({ projectDirectory: PROJECT });
          await database.stop();
        }),
      );
    }
    rows.push(['DynamoDB Local start and stop', summary(databaseSamples)]);

    const model = readAssembly(assembly);
    const workerSamples: number[] = [];
    for (let index = 0; index < repeat; index += 1) {
      for (const fn of model.functions) {
        const runner = new FunctionRunner({ fn, environment: {}, clock: new VirtualClock(), dynamoDbEndpoint: 'http://127.0.0.1:9', sqsEndpoint: 'http://127.0.0.1:9', region: 'us-east-1', maxEnvironments: 1 });
        // an empty batch: the handler loads (the cold start) and returns without a request
        workerSamples.push(await timed(() => runner.invoke({ Records: [] }, 'cold-start')));
        await runner.stop();
      }
    }
    rows.push([`one execution environment's cold start (worker + bundle), per function (${model.functions.length} functions)`, summary(workerSamples)]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`| phase | median (range) of ${repeat} |\n| --- | --- |\n${rows.map(([phase, figure]) => `| ${phase} | ${figure} |`).join('\n')}\n\nload average (1, 5, 15 min): ${loadBefore} before, ${load()} after\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
