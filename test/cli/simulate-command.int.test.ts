/**
 * `idempotent-event-flow simulate` through the command line: option errors, and the deliberately non-idempotent app
 * (test/simulator/fixtures/non-idempotent) caught with exit code 1.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../cli/main';

const PROJECT = path.resolve(__dirname, '../..');
const FIXTURE = 'test/simulator/fixtures/non-idempotent';

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
  ])('fails on %j naming the option and the value', async (options, message) => {
    const { code, stderr } = await cli('simulate', '--scenario', 'example/simulation/scenario.ts', ...options);
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain(message);
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
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'ief-events-')), 'events.json');
    writeFileSync(file, JSON.stringify(Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Counted', subject: `s${index}`, data: { index } }))));

    // WHEN it is simulated with duplicate deliveries (and no other fault)
    const { code, stdout } = await cli(
      'simulate',
      '--app', `npx tsx ${FIXTURE}/app.ts`,
      '--scenario', `${FIXTURE}/scenario.ts`,
      '--events', file,
      '--duplicate-rate', '0.5', '--lost-response-rate', '0', '--throttle-rate', '0', '--crash-rate', '0',
      '--concurrency', '2', '--seed', 'caught', '--quiet',
      '--endpoint', inject('dynamoDbEndpoint'),
    );

    // THEN
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/VIOLATED: \d+ invariant violation/);
    expect(stdout).toMatch(/\[effect-count\] Counter: counter of [0-9a-f-]+: applied [2-9] time\(s\), expected exactly 1/);
    expect(stdout).toMatch(/Counter\s+transactional\s+8\s/);
  });
});
