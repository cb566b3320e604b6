/**
 * One seed, one run, for an app whose producer draws its event ids from node:crypto's and Web Crypto's random sources
 * (the random-sources fixture: randomBytes, its callback form, randomFillSync, randomFill, randomInt, getRandomValues of
 * node:crypto, webcrypto and globalThis.crypto). Before the worker seeded them, two runs of one seed differed in the
 * ids and in what followed from them (faults, conflicts, deliveries: 29 fields of `--json`).
 */
import { describe, expect, test } from 'vitest';
import { differingFields, useFixtureReplay } from './replay-kit';

/** One run of the seed (eight orders: one id from each source), as `--json` writes it less wall-clock time. */
const run = useFixtureReplay({ fixture: 'test/simulator/fixtures/random-sources', tmpPrefix: 'ief-random-sources-', seed: 'random-sources-1', startTime: Date.UTC(2026, 10, 30) });

describe('replaying a seed of an app drawing ids from every random source', () => {
  test('two runs of one seed give the same result', { timeout: 1_800_000 }, async () => {
    const first = await run();
    const second = await run();
    // the run met faults (what a different id changed before)
    expect(first.result.totalFaults).toBeGreaterThan(0);
    expect(differingFields(JSON.parse(first.json), JSON.parse(second.json)).slice(0, 20)).toEqual([]);
    expect(second.json).toBe(first.json);
  });
});
