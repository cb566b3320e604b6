/**
 * What reviews r12, r12b and the trial nu12 (session 12) left open in `verify` (/work/runs/s12/): each test names what
 * verify said wrongly, or did not say, and what it says now. Pure: results and reports, no AWS.
 */
import { describe, expect, test } from 'vitest';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { formatVerifyReport, producerProbesNotRunLine } from '../../../simulator/verify/verify-report';
import { verifyResult } from './verify-result-kit';

describe("R12-3: verify does not run the scenario's producer probes (the dual-write check), and says so", () => {
  test('an OK run names the producers whose probes it did not run, and the verdict stays OK', () => {
    const result = verifyResult({ producerProbesNotRun: ['Orders/PlaceOrder', 'Orders/FulfilOrder'] });
    const report = formatVerifyReport(result);
    expect(verifyVerdict(result).status).toBe('OK');
    expect(report).toContain(producerProbesNotRunLine(['Orders/PlaceOrder', 'Orders/FulfilOrder']));
    expect(producerProbesNotRunLine(['Orders/PlaceOrder'])).toMatch(/dual-write.*does not run the scenario's producer probe\(s\) of Orders\/PlaceOrder/);
    expect(report.indexOf('Not checked: the producer side')).toBeGreaterThan(report.indexOf('OK: '));
  });

  test('a VIOLATED run says it too; a scenario without producer probes says nothing of them', () => {
    const violated = verifyResult({ producerProbesNotRun: ['Orders/PlaceOrder'], violations: [{ kind: 'effect-count', subscriber: 'Shipping', detail: 'applied 2 time(s)' }] });
    expect(formatVerifyReport(violated)).toContain(producerProbesNotRunLine(['Orders/PlaceOrder']));
    expect(formatVerifyReport(verifyResult({}))).not.toContain('Not checked: the producer side');
  });
});
