/**
 * The bundle of a minimal consumer against Powertools' (issue 31, item 3): esbuild bundles two handlers the way the
 * constructs bundle a function (minified, CommonJS, Node.js 20), once with the AWS SDK left out (both need the same
 * DynamoDB client, so what differs is each library's own code) and once with everything, and reads esbuild's metafile
 * for what each bundle holds, by input file. Then it loads each SDK-less bundle in a fresh Node.js process, alternating,
 * and times its `require` (the cold-start cost of the code).
 *
 *   npx tsx bench/bundle-size.ts [--loads N] [--top N]
 *
 * - ours: `createTransactionalConsumer` from the runtime's public entry (`@idempotent-event-flow/runtime`, here
 *   lambda/index.ts), with a handler that stages one Update;
 * - Powertools: `BatchProcessor` + `processPartialResponse` from @aws-lambda-powertools/batch and `makeIdempotent` with
 *   the `DynamoDBPersistenceLayer` from @aws-lambda-powertools/idempotency, as the batch-latency bench combines them.
 *
 * Results (Markdown) go to standard output. See docs/BENCHMARKS.md ("The bundle").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { build, type Metafile } from 'esbuild';

const root = path.resolve(__dirname, '..');

const ENTRIES = {
  ours: `
    import { createTransactionalConsumer } from './lambda/index';
    export const handler = createTransactionalConsumer({
      handle: (event, tx) => { tx.update({ TableName: 'ledger', Key: { pk: 'a' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } }); },
    });`,
  Powertools: `
    import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
    import { makeIdempotent, IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
    import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
    import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
    const client = new DynamoDBClient({});
    const persistenceStore = new DynamoDBPersistenceLayer({ tableName: 'idempotency', awsSdkV3Client: client });
    const processor = new BatchProcessor(EventType.SQS);
    const record = makeIdempotent(
      async (r) => { await client.send(new UpdateItemCommand({ TableName: 'ledger', Key: { pk: { S: 'a' } }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': { N: '1' } } })); },
      { persistenceStore, config: new IdempotencyConfig({ eventKeyJmesPath: 'powertools_json(body).id' }) },
    );
    export const handler = (event, context) => processPartialResponse(event, record, processor, { context });`,
} as const;

type Name = keyof typeof ENTRIES;

const SDK_EXTERNALS = ['@aws-sdk/*', '@smithy/*', '@aws-crypto/*'];

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`--${name} must be a whole number from 1 on\nusage: npx tsx bench/bundle-size.ts [--loads N] [--top N]\n`);
    process.exit(2);
  }
  return value;
}

async function bundle(name: Name, outfile: string, withSdk: boolean, minify = true): Promise<{ bytes: number; metafile: Metafile }> {
  const result = await build({
    stdin: { contents: ENTRIES[name], resolveDir: root, loader: 'ts', sourcefile: `${name}-entry.ts` },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify,
    metafile: true,
    outfile,
    external: withSdk ? [] : SDK_EXTERNALS,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0];
  return { bytes: output?.bytes ?? 0, metafile: result.metafile };
}

/** Bytes in the bundle by input, largest first (packages summed per package). */
function contents(metafile: Metafile): Array<[string, number]> {
  const sums = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match === null ? input : `${match[1]} (package)`;
      sums.set(key, (sums.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...sums.entries()].sort((a, b) => b[1] - a[1]);
}

/** Milliseconds to `require` the bundle in a fresh Node.js process (the SDK it leaves out resolved from node_modules). */
function loadMilliseconds(file: string): number {
  const script = `const t = process.hrtime.bigint(); require(${JSON.stringify(file)}); process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));`;
  // the environment the constructs give a transactional subscriber (the consumer reads it as the module loads)
  const env = { ...process.env, AWS_REGION: 'us-east-1', IEF_SUBSCRIBER_NAME: 'Billing', IEF_INBOX_TABLE_NAME: 'inbox', IEF_DEDUPLICATION_WINDOW_SECONDS: '86400' };
  return Number(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

async function main(): Promise<void> {
  const loads = argument('loads', 9);
  const top = argument('top', 12);
  // inside the repository, so the bundles that leave the SDK out resolve it from its node_modules when loaded
  const directory = mkdtempSync(path.join(root, 'node_modules', '.bundle-size-'));
  try {
    const names = Object.keys(ENTRIES) as Name[];
    const lean = new Map<Name, { bytes: number; metafile: Metafile; file: string }>();
    const full = new Map<Name, number>();
    const unminified = new Map<Name, number>();
    for (const name of names) {
      const file = path.join(directory, `${name}.js`);
      lean.set(name, { ...(await bundle(name, file, false)), file });
      full.set(name, (await bundle(name, path.join(directory, `${name}-full.js`), true)).bytes);
      unminified.set(name, (await bundle(name, path.join(directory, `${name}-unminified.js`), false, false)).bytes);
    }
    const times = new Map<Name, number[]>(names.map((name) => [name, []]));
    for (let round = 0; round < loads; round++) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) times.get(name)?.push(loadMilliseconds((lean.get(name) as { file: string }).file));
    }
    const ours = lean.get('ours') as { bytes: number };
    const theirs = lean.get('Powertools') as { bytes: number };
    const lines = [
      '# The bundle: a minimal transactional consumer against Powertools (BatchProcessor + makeIdempotent)',
      '',
      `- command: \`npx tsx bench/bundle-size.ts --loads ${loads} --top ${top}\``,
      '- esbuild, minified, CommonJS, Node.js 20, as the constructs bundle a function; "without the SDK": @aws-sdk/*, @smithy/*, @aws-crypto/* left out (both need the same DynamoDB client)',
      `- load: \`require\` of the bundle without the SDK in a fresh Node.js ${process.versions.node} process, ${loads} each, alternating; median`,
      '',
      '| bundle | without the SDK | without the SDK, not minified | with everything | load, median ms |',
      '|---|---:|---:|---:|---:|',
      ...names.map(
        (name) =>
          `| ${name} | ${kb((lean.get(name) as { bytes: number }).bytes)} | ${kb(unminified.get(name) as number)} | ${kb(full.get(name) as number)} | ${median(times.get(name) as number[]).toFixed(1)} |`,
      ),
      `| ours / Powertools | ${(ours.bytes / theirs.bytes).toFixed(2)}× | ${((unminified.get('ours') as number) / (unminified.get('Powertools') as number)).toFixed(2)}× | ` +
        `${((full.get('ours') as number) / (full.get('Powertools') as number)).toFixed(2)}× | ${(median(times.get('ours') as number[]) / median(times.get('Powertools') as number[])).toFixed(2)}× |`,
      '',
      ...names.flatMap((name) => [
        `## What the ${name} bundle without the SDK holds (esbuild metafile, bytes in the output, the ${top} largest)`,
        '',
        '| input | bytes |',
        '|---|---:|',
        ...contents((lean.get(name) as { metafile: Metafile }).metafile)
          .slice(0, top)
          .map(([input, bytes]) => `| ${input} | ${bytes.toLocaleString('en-US')} |`),
        '',
      ]),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

void main();
