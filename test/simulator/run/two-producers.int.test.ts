/**
 * Two producers on one outbox, one of them probed (nu11 finding 4): the dual-write check charges the probed producer
 * with the events its function wrote, not with every event of the outbox (test/simulator/fixtures/two-producers).
 */
import { describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { synthesizedFixture } from './fixture-run-kit';

const FIXTURE = 'test/simulator/fixtures/two-producers';

const fixture = synthesizedFixture(FIXTURE);

describe('simulate two producers on one outbox, one with a probe', () => {
  test("the other producer's events are not charged to the probed one: no dual-write violation, OK", async () => {
    const { code, stdout } = await fixture.simulate('--scenario', `${FIXTURE}/scenario.ts`, '--count', '4', '--seed', 'two-producers');

    expect(stdout).toMatch(/producer: 8\/8 succeeded/);
    expect(stdout).not.toContain('[dual-write]');
    expect(stdout).toContain('OK: ');
    expect(code).toBe(EXIT_CODE.OK);
  });

  test("an event of the probed producer without its business change is still found, named with its producer; the other's are not listed", async () => {
    const { code, stdout } = await fixture.simulate('--scenario', `${FIXTURE}/scenario-unrecorded.ts`, '--count', '4', '--seed', 'two-producers');

    const dualWrite = stdout.split('\n').filter((line) => line.includes('[dual-write]'));
    expect(dualWrite).toHaveLength(1);
    expect(dualWrite[0]).toMatch(/1 event\(s\) the producer TwoProducers\/Payments\/PlaceOrder wrote are in the outbox without a business change that has them .*: com\.example\.OrderPlaced-o-1$/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });
});
