/**
 * Correct producers whose retries the double-commit check must not take for a second commit (review r17, R17-1 and
 * R17-2; test/simulator/fixtures/parallel-lines): the run ends OK at the seeds the review found them named at.
 */
import { describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { synthesizedFixture } from './fixture-run-kit';

const FIXTURE = 'test/simulator/fixtures/parallel-lines';

const fixture = synthesizedFixture(FIXTURE);

describe('simulate correct producers that write a command in several transactions of one shape', () => {
  test('Tickets: three tickets written at once, ids from the command, a lost reply re-sent by the SDK after the others: not command-committed-twice, OK', async () => {
    const { code, stdout } = await fixture.simulate('--scenario', `${FIXTURE}/scenario.ts`, '--stack', 'Tickets', '--count', '10', '--seed', '1', '--start-time', '2026-11-29T00:00:00Z');

    expect(stdout).toMatch(/producer: 10\/10 succeeded/);
    expect(stdout).toMatch(/30 events committed to the outbox/);
    expect(stdout).not.toContain('[command-committed-twice]');
    expect(code).toBe(EXIT_CODE.OK);
  });

  test('CondRandom: lines under random event ids, a retry refused by the condition on the line it had reserved: not command-committed-twice, OK', async () => {
    const { code, stdout } = await fixture.simulate('--scenario', `${FIXTURE}/scenario.ts`, '--stack', 'CondRandom', '--count', '10', '--seed', '1', '--start-time', '2026-11-29T00:00:00Z');

    expect(stdout).toMatch(/producer: 10\/10 succeeded/);
    expect(stdout).toMatch(/30 events committed to the outbox/);
    expect(stdout).not.toContain('[command-committed-twice]');
    expect(code).toBe(EXIT_CODE.OK);
  });
});
