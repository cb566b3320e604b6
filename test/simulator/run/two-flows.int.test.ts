/**
 * One run checks a whole app: a scenario's `producers` drive both flows of test/simulator/fixtures/two-flows (Orders
 * and Payments, each with its producer and its Audit subscriber), and `--events` can name the flow each event goes to.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { synthesizedFixture } from './fixture-run-kit';

const FIXTURE = 'test/simulator/fixtures/two-flows';

const fixture = synthesizedFixture(FIXTURE);
const cli = fixture.simulate;

function eventsFile(name: string, events: readonly unknown[]): string {
  const file = path.join(fixture.directory(), name);
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
