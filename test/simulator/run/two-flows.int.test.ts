/**
 * One run checks a whole app: a scenario's `producers` drive both flows of test/simulator/fixtures/two-flows (Orders
 * and Payments, each with its producer and its Audit subscriber), and `--events` can name the flow each event goes to.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/two-flows';

let directory: string;
let assembly: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-two-flows-'));
  assembly = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(['simulate', ...argv, '--assembly', assembly, '--quiet', '--endpoint', inject('dynamoDbEndpoint')], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stdout += text),
    cwd: PROJECT,
  });
  return { code, stdout };
}

function eventsFile(name: string, events: readonly unknown[]): string {
  const file = path.join(directory, name);
  writeFileSync(file, JSON.stringify(events));
  return file;
}

/** The `events` column of a subscriber's row in the report's table. */
function eventsOf(stdout: string, subscriber: string): number {
  const row = stdout.split('\n').find((line) => line.startsWith(`${subscriber} `));
  return Number(row?.trim().split(/\s+/)[2]);
}

describe('simulate an app with two flows', () => {
  test("a scenario's producers drive both flows: each subscriber gets its flow's events, each producer's writes are checked", async () => {
    const { code, stdout } = await cli('--scenario', `${FIXTURE}/scenario.ts`, '--count', '6', '--seed', 'two-flows');

    expect(stdout).toMatch(/producer: 12\/12 succeeded, .* · TwoFlows\/Orders\/Produce 6\/6, TwoFlows\/Payments\/Produce 6\/6/);
    expect(eventsOf(stdout, 'OrdersAudit')).toBe(6);
    expect(eventsOf(stdout, 'PaymentsAudit')).toBe(6);
    expect(stdout).toContain('OK: every business change of the producers committed with its events;');
    expect(code).toBe(EXIT_CODE.OK);
  });

  test('--events go to the flow each names, and to the first outbox without one', async () => {
    const file = eventsFile('named.json', [
      { type: 'com.example.PaymentTaken', data: { id: 'p1' }, flow: 'Payments' },
      { type: 'com.example.PaymentTaken', data: { id: 'p2' }, flow: 'Payments/OutboxTable' },
      { type: 'com.example.OrderPlaced', data: { id: 'o1' } },
    ]);

    const { code, stdout } = await cli('--events', file, '--no-faults');

    expect(eventsOf(stdout, 'PaymentsAudit')).toBe(2);
    expect(eventsOf(stdout, 'OrdersAudit')).toBe(1);
    expect(code).toBe(EXIT_CODE.OK);
  });

  test('an event naming no flow of the app is refused before anything is written, with the flows it could name', async () => {
    const file = eventsFile('unknown.json', [{ type: 'com.example.RefundIssued', data: {}, flow: 'Refunds' }]);

    const { code, stdout } = await cli('--events', file, '--no-faults');

    expect(code).toBe(EXIT_CODE.USAGE);
    expect(stdout).toMatch(/--events: event flow 'Refunds' names no outbox relay of the app; its relays are: TwoFlows\/Orders\/Relay \(outbox TwoFlows\/Orders\/OutboxTable\), TwoFlows\/Payments\/Relay \(outbox TwoFlows\/Payments\/OutboxTable\)/);
  });
});
