/**
 * A retry that meets a refused write on an item its earlier attempt wrote (review r18a; the fixture
 * test/simulator/fixtures/rewrite-after-refusal): a version (If-Match) retry that deposits again, though its transaction
 * also puts a ledger row under a random id, is named `command-committed-twice`; a correct producer whose retry finds
 * the first transition of an order done and makes the next one is not.
 */
import { describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { synthesizedFixture } from './fixture-run-kit';

const FIXTURE = 'test/simulator/fixtures/rewrite-after-refusal';

const fixture = synthesizedFixture(FIXTURE);

const run = (stack: string, seed: string) => fixture.simulate('--scenario', `${FIXTURE}/scenario.ts`, '--stack', stack, '--count', '10', '--seed', seed, '--start-time', '2026-11-29T00:00:00Z');

describe('simulate a retry refused on an item its earlier attempt wrote', () => {
  test('VersionRetryRow: a deposit whose version check refused, re-read and made again with a new ledger row: 11 deposits for 10 commands, command-committed-twice, VIOLATED', async () => {
    const { code, stdout } = await run('VersionRetryRow', '1');

    expect(stdout).toMatch(/11 events committed to the outbox/);
    expect(stdout).toMatch(/\[command-committed-twice\] the producer VersionRetryRow\/Flow\/Command committed command #\d+ again at attempt \d+ after attempt \d+ had committed it: event \S+ \(Deposited of item-\d+\)/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });

  test('Transitions: an order moved NEW -> PLACED -> CONFIRMED under random event ids, the retry refused by the done transition and making the next: 20 events, not command-committed-twice, OK', async () => {
    const { code, stdout } = await run('Transitions', '1');

    expect(stdout).toMatch(/producer: 10\/10 succeeded/);
    expect(stdout).toMatch(/20 events committed to the outbox/);
    expect(stdout).not.toContain('[command-committed-twice]');
    expect(code).toBe(EXIT_CODE.OK);
  });
});
