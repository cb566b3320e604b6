/**
 * Review r13, R13-8: a run not quiet in time was the one outcome whose --json had no `verdict`, and it exited 1, the
 * code of VIOLATED: a CI gate on `jq -r .verdict.status` read null, one on the exit code a violated flow. Now its --json
 * has `verdict: { status: 'NOT QUIET', reason }` and it exits with its own code.
 */
import { expect, test } from 'vitest';
import { EXIT_CODE } from '../../operator/cli/command';
import { notQuietJson } from '../../simulator/cli/verify-command';
import type { NotQuietResult } from '../../simulator/verify/verify-run';

const RESULT: NotQuietResult = {
  runId: 'v0-01020304',
  seed: 'verify',
  stacks: ['App'],
  producer: { total: 1, succeeded: 1, retried: 0, failed: [] },
  notQuiet: { reason: "the flow was not quiet after 0s (--timeout); still waiting for Shipping's queue (1 message(s))", timeoutSeconds: 0, waitingFor: ["Shipping's queue (1 message(s))"] },
  committedEvents: 1,
  eventIds: ['order-placed-v0-01020304-order-1'],
  derivedEvents: [],
};

test('a not-quiet --json has verdict.status NOT QUIET with the reason, and the partial result', () => {
  const json = notQuietJson(RESULT);
  expect(json.verdict).toEqual({ status: 'NOT QUIET', reason: RESULT.notQuiet.reason });
  expect(json.notQuiet).toEqual(RESULT.notQuiet);
  expect(json.eventIds).toEqual(RESULT.eventIds);
});

test("its exit code is its own: not VIOLATED's, NOT PROVEN's or any other", () => {
  const others = Object.entries(EXIT_CODE).filter(([name]) => name !== 'NOT_QUIET').map(([, code]) => code);
  expect(EXIT_CODE.NOT_QUIET).toBe(6);
  expect(others).not.toContain(EXIT_CODE.NOT_QUIET);
});
