/** The report's causes and warnings: each fix printed once per violation, a setting's bound read as a bound, a warning's line (nu39 NU39-3, review r16b R16B-5). */
import { describe, expect, test } from 'vitest';
import { fixFor, type ViolationCause } from '../../simulator/check/violation-cause';
import { leaseBelowTimeout, warningText } from '../../simulator/check/lease-below-timeout';
import { formatSummary, printedDetail } from '../../simulator/report/summary';
import { resultJson } from '../../simulator/run/result-json';
import type { SimulationResult } from '../../simulator/run/simulation';
import { reportedRun } from '../support/simulation-result';

const FAILURE_PATHS = { 'handler-error': 1, 'lost-response': 1, conflict: 1, 'crash-before-commit': 1, 'crash-after-commit': 1, redelivery: 1, 'dead-letter': 1 };

/** A run of one subscriber, Receipts, with the violations and causes given. */
function run(violations: SimulationResult['violations'], causes: SimulationResult['causes'], warnings: SimulationResult['warnings'] = []): SimulationResult {
  return reportedRun({
    subscribers: [{ name: 'Receipts', events: 2, deliveries: 2, duplicatesSuppressed: 0, faults: 0, faultsByKind: {}, retries: 0, deadLettered: 0, failurePaths: FAILURE_PATHS }],
    violations,
    causes,
    warnings,
  });
}

const outside: ViolationCause = {
  kind: 'effect-outside-lease',
  subscriber: 'Receipts',
  eventIds: ['e-1'],
  invocations: [],
  requests: [],
  calls: [{ method: 'POST', host: '127.0.0.1:9', path: '/receipts', count: 2, when: 'before-claim' }],
  fix: fixFor('effect-outside-lease'),
};

describe('the text report of causes', () => {
  test("a fix is printed once per violation, on its cause line; the violation's line keeps the story, --json the whole detail", () => {
    const detail = `/receipts of e-1: applied 2 time(s), expected exactly 1 (events e-1); event e-1: POST 127.0.0.1:9/receipts was called outside the lease by invocation #1 and again by invocation #2, each time before the lease claim: ${fixFor('effect-outside-lease')}`;
    const result = run([{ kind: 'effect-count', subscriber: 'Receipts', detail }], [{ violation: 0, causes: [outside, { ...outside, eventIds: ['e-2'] }] }]);

    const text = formatSummary(result);
    expect(text.split(fixFor('effect-outside-lease')).length - 1).toBe(1);
    expect(text).toContain('  [effect-count] Receipts: /receipts of e-1: applied 2 time(s), expected exactly 1 (events e-1); event e-1: POST 127.0.0.1:9/receipts was called outside the lease by invocation #1 and again by invocation #2, each time before the lease claim\n');
    expect(text).toContain(`      cause: effect-outside-lease (event(s) e-1, e-2; call(s) POST 127.0.0.1:9/receipts); fix: ${fixFor('effect-outside-lease')}\n`);
    expect((resultJson(result).violations as { detail: string }[])[0]!.detail).toBe(detail);
  });

  test("a fix is printed once per subscriber for its kind of cause: a later violation with the same cause says so, another subscriber's prints it, and --json keeps every fix", () => {
    const result = run(
      [
        { kind: 'effect-count', subscriber: 'Receipts', detail: 'e-1: applied 2 time(s), expected exactly 1' },
        { kind: 'effect-count', subscriber: 'Receipts', detail: 'e-2: applied 2 time(s), expected exactly 1' },
      ],
      [
        { violation: 0, causes: [outside] },
        { violation: 1, causes: [{ ...outside, eventIds: ['e-2'] }] },
      ],
    );

    const text = formatSummary(result);
    expect(text.split(fixFor('effect-outside-lease')).length - 1).toBe(1);
    expect(text).toContain(`      cause: effect-outside-lease (event(s) e-1; call(s) POST 127.0.0.1:9/receipts); fix: ${fixFor('effect-outside-lease')}\n`);
    expect(text).toContain('      cause: effect-outside-lease (event(s) e-2; call(s) POST 127.0.0.1:9/receipts); fix: as for effect-outside-lease above\n');
    // another subscriber's violation with the same cause prints the fix again
    const atTwo = run(
      [
        { kind: 'effect-count', subscriber: 'Receipts', detail: 'e-1: applied 2 time(s), expected exactly 1' },
        { kind: 'effect-count', subscriber: 'Settlement', detail: 'e-2: applied 2 time(s), expected exactly 1' },
      ],
      [
        { violation: 0, causes: [outside] },
        { violation: 1, causes: [{ ...outside, subscriber: 'Settlement', eventIds: ['e-2'] }] },
      ],
    );
    expect(formatSummary(atTwo).split(fixFor('effect-outside-lease')).length - 1).toBe(2);
    const json = resultJson(result) as { violations: { causes?: ViolationCause[] }[] };
    expect(json.violations.map((violation) => violation.causes?.[0]?.fix)).toEqual([fixFor('effect-outside-lease'), fixFor('effect-outside-lease')]);
  });

  test("a fix told after a semicolon, and a detail whose fix is not a cause's, are printed as they are but for the cause's fix", () => {
    const fix = fixFor('event-id-per-attempt');
    expect(printedDetail(`the producer draws a new event id on each attempt; ${fix}`, [{ ...outside, kind: 'event-id-per-attempt', fix }])).toBe('the producer draws a new event id on each attempt');
    expect(printedDetail(`applied again: ${fix}`, [outside])).toBe(`applied again: ${fix}`);
  });

  test('a lease past the visibility timeout reads as a bound, the most the queue allows, not as what the run needed', () => {
    const lease: ViolationCause = { kind: 'lease-outlasts-redelivery', subscriber: 'Receipts', eventIds: ['e-1'], invocations: [], requests: [], setting: { name: 'leaseDurationSeconds', value: 900, needed: 175 }, fix: fixFor('lease-outlasts-redelivery') };
    const text = formatSummary(run([{ kind: 'lease-outlasts-redelivery', subscriber: 'Receipts', detail: 'refused' }], [{ violation: 0, causes: [lease] }]));

    expect(text).toContain('cause: lease-outlasts-redelivery (event(s) e-1; leaseDurationSeconds 900, at most 175 allowed); fix: ');
    expect(text).not.toContain('needed');
  });
});

describe('the text report of warnings', () => {
  test('a lease below the timeout is a warning line before the verdict; the verdict stays OK and --json has it', () => {
    const warning = leaseBelowTimeout({ subscriber: 'Receipts', environment: { IEF_PROCESSING_MODE: 'lease', IEF_LEASE_DURATION_SECONDS: '30' }, functionTimeoutSeconds: 30, writtenLeaseSeconds: 5 })!;
    const result = run([], [], [warning]);

    const lines = formatSummary(result).split('\n');
    const at = lines.indexOf(warningText(warning));
    expect(at).toBeGreaterThan(0);
    expect(lines.findIndex((line) => line.startsWith('OK: '))).toBeGreaterThan(at);
    expect(JSON.parse(JSON.stringify(resultJson(result))).warnings).toEqual([warning]);
  });
});
