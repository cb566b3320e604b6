/**
 * `idempotent-event-flow simulate` through the command line: option errors, and the deliberately non-idempotent app
 * (test/simulator/fixtures/non-idempotent) caught with exit code 1.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { writeAssembly } from '../simulator/model/assembly-fixture';

const PROJECT = path.resolve(__dirname, '../..');
const FIXTURE = 'test/simulator/fixtures/non-idempotent';

function eventsFile(events: unknown[]): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'ief-events-')), 'events.json');
  writeFileSync(file, JSON.stringify(events));
  return file;
}

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT });
  return { code, stdout, stderr };
}

describe('simulate: options', () => {
  test('fails without a scenario or events, saying what drives the flow', async () => {
    const { code, stderr } = await cli('simulate');
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain('give --scenario <module> or --events <file.json>');
  });

  test.each([
    [['--crash-rate', '1.5'], "--crash-rate must be a probability from 0 to 1, but '1.5' was given"],
    [['--duplicate-rate', 'often'], "--duplicate-rate must be a probability from 0 to 1, but 'often' was given"],
    [['--count', '2.5'], "--count must be a whole number from 1 to 100000, but '2.5' was given"],
    [['--concurrency', '0'], "--concurrency must be a whole number from 1 to 64, but '0' was given"],
    [['--no-faults', '--throttle-rate', '0.1'], '--no-faults contradicts --throttle-rate'],
    [['--start-time', 'yesterday'], "--start-time must be a UTC time from 1970-01-01T00:00:00Z on, such as 2026-11-29T00:00:00Z, but 'yesterday' was given"],
    [['--start-time', '2026-11-29T00:00:00+01:00'], "--start-time must be a UTC time from 1970-01-01T00:00:00Z on, such as 2026-11-29T00:00:00Z, but '2026-11-29T00:00:00+01:00' was given"],
    [['--start-time', '2026-02-30T00:00:00Z'], "--start-time must be a UTC time from 1970-01-01T00:00:00Z on, such as 2026-11-29T00:00:00Z, but '2026-02-30T00:00:00Z' was given"],
    [['--start-time', '1969-12-31T23:59:59Z'], "--start-time must be a UTC time from 1970-01-01T00:00:00Z on, such as 2026-11-29T00:00:00Z, but '1969-12-31T23:59:59Z' was given"],
    [['--app', 'npx tsx bin/app.ts', '--assembly', 'cdk.out'], '--app synthesizes the app and --assembly reads one already synthesized; give one of them'],
  ])('fails on %j naming the option and the value', async (options, message) => {
    const { code, stderr } = await cli('simulate', '--scenario', 'example/simulation/scenario.ts', ...options);
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain(message);
  });

  test('refuses --events together with a scenario that has a producer: only one can drive the flow', async () => {
    const { code, stderr } = await cli('simulate', '--scenario', 'example/simulation/scenario.ts', '--events', eventsFile([{ type: 'A', data: {} }]));
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain("--events and the producer(s) of scenario example/simulation/scenario.ts both drive the flow; give one of them");
  });

  test('refuses --count with --events, which produce exactly the file\'s events', async () => {
    const { code, stderr } = await cli('simulate', '--events', eventsFile([{ type: 'A', data: {} }]), '--count', '5');
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain("--count sets how many commands a scenario's producer runs; with --events, each event of the file is appended once");
  });

  test('fails on a scenario module that does not exist, naming it (usage error)', async () => {
    for (const missing of ['simulation/nope.ts', 'simulation/nope.js']) {
      const { code, stderr } = await cli('simulate', '--scenario', missing);
      expect(code).toBe(EXIT_CODE.USAGE);
      expect(stderr).toContain(`--scenario ${missing}: there is no file ${path.join(PROJECT, missing)}`);
    }
  });

  test.each([
    ['syntax.js', 'module.exports = { scenario: { ;', /scenario module .*syntax\.js could not be loaded: .*Unexpected token/],
    ['syntax.ts', 'export const scenario = { effects: { A: ( } };', /scenario module .*syntax\.ts could not be loaded: [\s\S]*syntax\.ts:1:\d+: ERROR/],
    ['throws.js', "throw new Error('no table configured');", /scenario module .*throws\.js could not be loaded: no table configured/],
    ['wrong-export.js', 'module.exports = { scenarios: {} };', /scenario module .*wrong-export\.js must export 'scenario' \(or a default export\)/],
    ['wrong-export.ts', 'export const effects = {};', /scenario module .*wrong-export\.ts must export 'scenario' \(or a default export\)/],
    ['bad-probe.js', "module.exports = { scenario: { producer: { function: 'P', commands: () => [], probe: 'orders' } } };", /scenario module .*bad-probe\.js: producer\.probe must be a function, got string/],
  ])('fails on a scenario module %s that cannot be used, naming it (exit code 1)', async (name, source, message) => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-scenario-'));
    // a project of its own with the esbuild a TypeScript scenario is bundled with
    symlinkSync(path.join(PROJECT, 'node_modules'), path.join(directory, 'node_modules'), 'dir');
    const file = path.join(directory, name);
    writeFileSync(file, source);
    const { code, stderr } = await cli('simulate', '--scenario', file);
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stderr).toMatch(message);
  });

  test('fails on a --stack that names no stack of the app, listing them (usage error)', async () => {
    const assembly = writeAssembly({ Core: { template: { Resources: {} } } }, { 'assembly-Dev': { DevShop: { stackName: 'Dev-Shop', displayName: 'Dev/Shop', template: { Resources: {} } } } });
    const { code, stderr } = await cli('simulate', '--assembly', assembly, '--events', eventsFile([{ type: 'A', data: {} }]), '--stack', 'Shop');
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain('error: --stack: no stack of the app is Shop; its stacks: Core, Dev/Shop (stack name Dev-Shop)');
  });

  test('accepts --dynamodb-endpoint, the name DynamoDB Local\'s own error messages use, as --endpoint', async () => {
    const { code, stderr } = await cli('simulate', '--events', eventsFile([{ type: 'A', data: {} }]), '--dynamodb-endpoint', 'http://127.0.0.1:1', '--endpoint', 'http://127.0.0.1:2');
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain('--dynamodb-endpoint http://127.0.0.1:1 contradicts --endpoint http://127.0.0.1:2');
  });

  test('without --app in a directory without cdk.json, says how to name the app (usage error)', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-no-app-'));
    let stderr = '';
    const home = process.env.HOME;
    process.env.HOME = directory; // no ~/.cdk.json either
    try {
      const code = await main(['simulate', '--events', eventsFile([{ type: 'A', data: {} }]), '--endpoint', 'http://127.0.0.1:1'], {
        stdout: () => undefined,
        stderr: (text) => void (stderr += text),
        cwd: directory,
      });
      expect(code).toBe(EXIT_CODE.USAGE);
    } finally {
      process.env.HOME = home;
    }
    expect(stderr).toContain(`error: no app to synthesize: ${directory} has no cdk.json with an "app" command, and no --app was given`);
  });

  test('fails on an events file that is not an array of events, naming the event', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'ief-events-')), 'events.json');
    writeFileSync(file, JSON.stringify([{ type: 'A', data: {} }, { data: {} }]));
    const { code, stderr } = await cli('simulate', '--events', file);
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain('event 1 must be an object with a string \'type\' and a \'data\' field');
  });
});

describe('simulate: a deliberately non-idempotent consumer', () => {
  test('is caught: its effect applied twice on a redelivery is a violation, and the exit code is 1', async () => {
    // GIVEN the broken app, and events for it
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-events-'));
    const file = path.join(directory, 'events.json');
    writeFileSync(file, JSON.stringify(Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Counted', subject: `s${index}`, data: { index } }))));
    // the log and the result hold handlers' output and payloads: readable by their owner only, even when they existed
    const logFile = path.join(directory, 'run.log');
    const jsonFile = path.join(directory, 'result.json');
    writeFileSync(logFile, 'STALE-CONTENT-SENTINEL', { mode: 0o644 });
    writeFileSync(jsonFile, 'STALE-CONTENT-SENTINEL', { mode: 0o644 });

    // WHEN it is simulated with duplicate deliveries and consumer crashes (no other fault). A duplicate of a committed
    // message no longer reaches the handler once the batch read is on (it is, with redeliveries this common), so what re-runs the handler's own write is a
    // crash between that write and the commit, then the redelivery
    const { code, stdout, stderr } = await cli(
      'simulate',
      '--app', `npx tsx ${FIXTURE}/app.ts`,
      // into the run's temporary directory: no assembly is left for a later run to reuse
      '--synth',
      '--scenario', `${FIXTURE}/scenario.ts`,
      '--events', file,
      '--duplicate-rate', '0.5', '--lost-response-rate', '0', '--throttle-rate', '0', '--crash-rate', '0.05',
      '--concurrency', '1', '--seed', 'caught', '--quiet',
      // the run's clock starts here: its times (the functions' log lines) follow it, and the replay line names it
      '--start-time', '2026-01-02T00:00:00Z',
      '--endpoint', inject('dynamoDbEndpoint'),
      '--log', logFile, '--json', jsonFile, '--profile',
    );

    // THEN
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/VIOLATED: \d+ invariant violation/);
    expect(stdout).toMatch(/\[effect-count\] Counter: counter of [0-9a-f-]+: applied [2-9] time\(s\), expected exactly 1/);
    expect(stdout).toMatch(/Counter\s+transactional\s+8\s/);
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
    expect(statSync(jsonFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(jsonFile, 'utf8')).not.toContain('STALE-CONTENT-SENTINEL');
    // which invocation applied the event again, and how: in the report and in --json (simulator/check/apply-attribution.ts)
    const again = /applied again by invocation #\d+ \(receive [2-9], at \+\d+ s\) with its own client \(\S+: 1 UpdateItem\), after invocation #\d+ \(receive 1, at \+\d+ s\) crashed/;
    expect(stdout).toMatch(new RegExp(`\\[effect-count\\] Counter: .*${again.source}`));
    const { violations } = JSON.parse(readFileSync(jsonFile, 'utf8')) as { violations: { kind: string; detail: string }[] };
    expect(violations.filter((violation) => violation.kind === 'effect-count' && again.test(violation.detail)).length).toBeGreaterThan(0);
    // the first line says the app was synthesized; the last, the one command that replays this run
    expect(stderr.split('\n')[0]).toMatch(/^synthesized the app at \S+ into /);
    expect(stderr).toContain(`replay this run: npx idempotent-event-flow simulate --app 'npx tsx ${FIXTURE}/app.ts' --synth --scenario ${FIXTURE}/scenario.ts --events ${file}`);
    expect(stderr).toContain(`--start-time 2026-01-02T00:00:00.000Z --endpoint ${inject('dynamoDbEndpoint')} --seed caught --concurrency 1\n`);
    expect(readFileSync(logFile, 'utf8')).toContain('2026-01-02T00:00:00');
    // the replay line never names this run's --json or --log: running it as printed keeps the result to compare with
    const replayLine = stderr.split('\n').find((line) => line.startsWith('replay this run: '));
    expect(replayLine).not.toContain(jsonFile);
    expect(replayLine).not.toContain(logFile);
    // --json carries what replays the run (a passing run prints no replay line): its start, seed and concurrency, and
    // the replay line itself, which agrees with them
    const written = JSON.parse(readFileSync(jsonFile, 'utf8')) as { seed: string; startTime: string; startTimeMs: number; concurrency: number; replayCommand: string };
    expect(written).toMatchObject({ seed: 'caught', startTime: '2026-01-02T00:00:00.000Z', startTimeMs: Date.parse('2026-01-02T00:00:00Z'), concurrency: 1 });
    expect(`replay this run: ${written.replayCommand}`).toBe(replayLine);
    expect(written.replayCommand).toContain(`--start-time ${written.startTime} `);
    expect(written.replayCommand).toMatch(new RegExp(`--seed ${written.seed} --concurrency ${written.concurrency}$`));
    // --profile says where the time went (and is no part of the replay: it changes nothing of the run)
    expect(stderr).toMatch(/profile \(real time of this machine\):\n {2}assembly +\d+\.\d\d s\n/);
    expect(stderr).toMatch(/replies \(the worker runs on to its next request\) +\d+ +\d+\.\d\d s/);
    expect(stderr).toMatch(/cold starts: [1-9]\d* \(\d+ initialized ahead of need\)/);
    expect(stderr).not.toContain('--profile');
    rmSync(directory, { recursive: true, force: true });
  });
});
