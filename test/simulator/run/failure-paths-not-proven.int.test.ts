/**
 * A run too small to meet the failure paths its fault rates steer to every subscriber proves too little, and breaks
 * nothing: its verdict is NOT PROVEN (exit code 5, non-zero: a CI step still fails), never VIOLATED (exit code 1, which
 * says the app broke exactly-once). Through the command line on the example app, one order at the default rates: the
 * NOT PROVEN block names each subscriber, the paths it never met, the events that reached it and the advice; `--json`
 * has them (`failurePathsNotMet`) with the same verdict and no violation.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { FAILURE_PATHS_NOT_MET_ADVICE, type FailurePath } from '../../../simulator/check/failure-paths';
import { exampleAssembly } from '../../support/example-assembly';

const PROJECT = path.resolve(__dirname, '../../..');
const directory = mkdtempSync(path.join(tmpdir(), 'ief-not-proven-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

interface Written {
  readonly verdict: string;
  readonly violations: readonly unknown[];
  readonly failurePathsNotMet: readonly { subscriber: string; paths: FailurePath[]; eventsReached: number }[];
  readonly subscribers: readonly { name: string; failurePaths: Record<FailurePath, number> }[];
}

describe('simulate: a run too small to meet every failure path', () => {
  test('is NOT PROVEN (exit code 5), not VIOLATED: the text and --json name each subscriber, the paths it never met and the events that reached it', async () => {
    const file = path.join(directory, 'one-order.json');
    let stdout = '';
    // one order at the default rates, seed 1: each subscriber gets its one or two events, too few to meet every path
    const code = await main(
      ['simulate', '--assembly', await exampleAssembly(), '--scenario', 'example/simulation/scenario.ts', '--count', '1', '--seed', '1', '--quiet', '--endpoint', inject('dynamoDbEndpoint'), '--json', file],
      { stdout: (text) => void (stdout += text), stderr: (text) => void (stdout += text), cwd: PROJECT },
    );

    const written = JSON.parse(readFileSync(file, 'utf8')) as Written;
    expect(written.violations, stdout).toEqual([]);
    expect(code, stdout).toBe(EXIT_CODE.NOT_PROVEN);
    expect(written.verdict).toBe('NOT PROVEN');
    expect(stdout).not.toContain('VIOLATED');
    expect(stdout).not.toMatch(/^OK: /m);
    expect(written.failurePathsNotMet.length).toBeGreaterThan(0);
    const verdict = stdout.slice(stdout.indexOf('\nNOT PROVEN: '));
    expect(verdict).toMatch(/^\nNOT PROVEN: no check failed \(.*\), but \d+ subscriber\(s\) never met a failure path the run's fault rates steer to them, so this run does not prove they handle it \(not-exercised\):\n/);
    for (const { subscriber, paths, eventsReached } of written.failurePathsNotMet) {
      // each named path is one the subscriber's own counts show it never met, and events did reach it
      expect(paths.length).toBeGreaterThan(0);
      expect(eventsReached).toBeGreaterThan(0);
      const counts = written.subscribers.find((row) => row.name === subscriber)!.failurePaths;
      expect(paths.map((failurePath) => counts[failurePath])).toEqual(paths.map(() => 0));
      expect(verdict).toContain(`\n  ${subscriber}: never met ${paths.join(', ')} (${eventsReached} event(s) reached it)\n`);
    }
    expect(verdict).toContain(`\n  ${FAILURE_PATHS_NOT_MET_ADVICE}\n`);
  });
});
