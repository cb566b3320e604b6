/**
 * Contention alone never dead-letters a valid event (issue 39 item 2, issue 40): test/simulator/fixtures/contended puts
 * every event on ONE hot item, credited by a transactional subscriber (Tally) and an aggregate one (Account), with
 * duplicates; one short seeded run must end with every event applied once and nothing dead-lettered.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/contended';

let directory: string;

beforeAll(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-contended-'));
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

describe('simulate the contended app', () => {
  test('no valid event is dead-lettered by contention: every event applied once, no dead letter, at concurrency 10 with duplicates', async () => {
    const json = path.join(directory, 'result.json');
    let output = '';
    const code = await main(
      ['simulate', '--app', `npx tsx ${FIXTURE}/app.ts`, '--scenario', `${FIXTURE}/scenario.ts`, '--count', '10', '--concurrency', '10', '--duplicate-rate', '0.2', '--seed', '19', '--json', json, '--quiet', '--endpoint', inject('dynamoDbEndpoint')],
      { stdout: (text) => void (output += text), stderr: (text) => void (output += text), cwd: PROJECT },
    );
    const result = JSON.parse(readFileSync(json, 'utf8')) as { deadLetters: Record<string, unknown[]>; violations: Array<{ kind: string }> };

    expect(result.violations.map((violation) => violation.kind), output).toEqual([]);
    expect(result.deadLetters).toEqual({ Tally: [], Account: [] });
    expect(code).toBe(EXIT_CODE.OK);
  });
});
