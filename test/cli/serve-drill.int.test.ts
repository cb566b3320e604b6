/**
 * The on-call drill, finished locally with `simulate --serve`: a run whose handler throws on one event type fails and
 * leaves that event on the dead-letter queue; while the run serves, the operator fixes the handler on disk (the app is
 * synthesized again and the function takes the new code), runs the printed redrive, and sees the event applied once by
 * the served function, with no `IEF_*` variable typed by hand and no drain script.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, inject, onTestFinished, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { synthesize } from '../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../..');
const TSX = path.join(PROJECT, 'node_modules/.bin/tsx');

/** The consumer: `broken` throws on every `com.example.Refunded` event (the mistake), the fix handles it. */
function consumerSource(broken: boolean): string {
  return [
    `import { createTransactionalConsumer } from ${JSON.stringify(path.join(PROJECT, 'lambda', 'index'))};`,
    'export const handler = createTransactionalConsumer({',
    '  handle: async (event) => {',
    "    if (event.type !== 'com.example.Refunded') return;",
    broken
      ? '    const data = event.data as { order?: { refund?: { amountCents: number } } };\n    if (data.order!.refund!.amountCents < 0) throw new RangeError(\'negative refund\');'
      : '    const data = event.data as { refund?: { amountCents: number } };\n    if ((data.refund?.amountCents ?? 0) < 0) throw new RangeError(\'negative refund\');',
    '  },',
    '});',
    '',
  ].join('\n');
}

const APP_SOURCE = [
  "import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';",
  "import * as path from 'node:path';",
  `import { IdempotentEventFlow } from ${JSON.stringify(path.join(PROJECT, 'lib'))};`,
  'const app = new App();',
  "const stack = new Stack(app, 'Drill');",
  "const flow = new IdempotentEventFlow(stack, 'Flow', { eventSource: 'urn:test:drill', removalPolicy: RemovalPolicy.DESTROY });",
  "flow.addSubscriber('Audit', { entry: path.join(__dirname, 'consumer.ts') });",
  'app.synth();',
  '',
].join('\n');

/** The words of a shell command line, as bash splits and unquotes them. */
function shellWords(line: string): string[] {
  return execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
}

/**
 * Waits until `condition` holds; after `timeoutMs` (a hang catcher, never a slow machine's limit) says what it waited
 * for and what the command printed (`output()`).
 */
async function waitFor(condition: () => boolean, what: string, output: () => string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the command printed:\n${output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('simulate --serve: the on-call drill', () => {
  test('a handler fixed on disk is bundled again and used by the next invocation: the redriven event is applied once', async () => {
    // GIVEN a project whose Audit handler throws on Refunded events (its own cdk.json; dependencies from this repository)
    const project = mkdtempSync(path.join(tmpdir(), 'ief-serve-drill-'));
    onTestFinished(() => rmSync(project, { recursive: true, force: true }));
    symlinkSync(path.join(PROJECT, 'node_modules'), path.join(project, 'node_modules'), 'dir');
    writeFileSync(path.join(project, 'app.ts'), APP_SOURCE);
    writeFileSync(path.join(project, 'consumer.ts'), consumerSource(true));
    writeFileSync(path.join(project, 'cdk.json'), JSON.stringify({ app: `${TSX} app.ts` }));
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'serve-drill', private: true }));
    writeFileSync(path.join(project, 'package-lock.json'), JSON.stringify({ name: 'serve-drill', lockfileVersion: 3, packages: {} }));
    mkdirSync(path.join(project, 'run'));
    const eventsFile = path.join(project, 'run', 'events.json');
    writeFileSync(eventsFile, JSON.stringify([{ type: 'com.example.Audited', data: { index: 1 } }, { type: 'com.example.Refunded', data: { refund: { amountCents: 250 } } }]));
    // synthesized once here (not through the project's assembly cache, which would live in this repository's node_modules)
    const assembly = await synthesize({ cwd: project, outputDirectory: path.join(project, 'run', 'cdk.out') });
    const logFile = path.join(project, 'run', 'functions.log');

    // WHEN it runs with --serve
    let stdout = '';
    const stop = new AbortController();
    const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stdout += text), cwd: project, stopSignal: stop.signal };
    const endpoint = ['--endpoint', inject('dynamoDbEndpoint')];
    const running = main(['simulate', '--assembly', assembly, '--events', eventsFile, '--no-faults', '--quiet', '--serve', '--log', logFile, ...endpoint], io);
    let finished = false;
    void running.finally(() => (finished = true));
    try {
      await waitFor(() => stdout.includes('serving until') || finished, 'the run to serve', () => stdout);

      // THEN the verdict names the event never applied, and the serve says the functions consume and where the logs are
      expect(stdout).toMatch(/\[unapplied-event\] Audit: /);
      expect(stdout).toContain(`function logs   ${logFile}`);
      expect(stdout).toContain('A handler changed on disk is bundled again');

      // WHEN the handler is fixed on disk
      writeFileSync(path.join(project, 'consumer.ts'), consumerSource(false));

      // THEN the app is synthesized again and Audit's function takes the new code
      await waitFor(() => /\[served\] new code from the next invocation: .*Audit/.test(stdout) || stdout.includes('did not synthesize'), 'the new code', () => stdout);
      expect(stdout).toMatch(/\[served\] new code from the next invocation: .*Audit/);

      // WHEN the printed redrive runs
      const redrive = stdout.split('\n').find((line) => /idempotent-event-flow dlq redrive --subscriber-output .*"subscriberName":"Audit"/.test(line));
      expect(redrive).toBeDefined();
      let redriveOutput = '';
      const [, , ...argv] = shellWords(redrive!.trim());
      // with the credentials the serve prints (local services take any)
      const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
      Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' });
      let code: number;
      try {
        code = await main([...argv, '--yes'], { stdout: (text) => void (redriveOutput += text), stderr: (text) => void (redriveOutput += text) });
      } finally {
        for (const [name, value] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      expect({ code, redriveOutput }).toMatchObject({ code: EXIT_CODE.OK });

      // THEN the served function applies the redriven event, once, with the fixed code
      const applied = /\[served\] Audit: event (\S+) \(receive 1, sent to its queue: a redrive or a replay\): processed/;
      await waitFor(() => applied.test(stdout), 'the redriven event applied', () => stdout);
      const eventId = applied.exec(stdout)![1]!;
      // a moment for a second application to show, were there one
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(stdout.split('\n').filter((line) => line.includes(`event ${eventId} `) && line.includes('[served]') && line.endsWith(': processed'))).toHaveLength(1);
      expect(stdout).not.toMatch(/\[served\] Audit: .*failed/);
    } finally {
      stop.abort();
      await running;
    }
    expect(stdout).toContain("stopped the run's services");
  });
});
