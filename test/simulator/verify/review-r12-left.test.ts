/**
 * What reviews r12, r12b and the trial nu12 (session 12) left open in `verify` (/work/runs/s12/): each test names what
 * verify said wrongly, or did not say, and what it says now. Pure: results, reports and the checks over what verify
 * read, no AWS.
 */
import { describe, expect, test } from 'vitest';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';
import type { DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { checkVerifiedRun } from '../../../simulator/verify/verify-checks';
import { notQuietCleanupSkippedReason } from '../../../simulator/verify/verify-run';
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

function subscriberOf(name: string, processingMode: 'transactional' | 'aggregate' = 'transactional'): DeployedSubscriber {
  return {
    name,
    stackName: 'App',
    environment: {},
    deployment: { format: 1, subscriberName: name, processingMode, deduplicationWindowSeconds: 86400, ...(processingMode === 'aggregate' ? {} : { inboxTable: `${name}Inbox` }), outboxTable: 'Outbox', queueUrl: `http://127.0.0.1/111111111111/${name}`, deadLetterQueueUrl: `http://127.0.0.1/111111111111/${name}-dlq` },
  };
}

const RUN_EVENT = 'order-placed-v0-01020304-order-1';
const runEvents = new Map([[RUN_EVENT, { specversion: '1.0', id: RUN_EVENT, type: 'OrderPlaced', source: 'test', data: {} } as unknown as SimulatedEvent]]);

describe("R12-8: not-drained counts a subscriber's queue only while the run's events on it are not all accounted for", () => {
  test('a subscriber that took none of the run\'s events: its queue\'s messages are not the run\'s (no violation)', () => {
    const violations = checkVerifiedRun([{ subscriber: subscriberOf('OrderTracking'), taken: new Set(), deadLetters: [], onQueue: 5, applied: new Set() }], runEvents, () => false);
    expect(violations).toEqual([]);
  });

  test('a subscriber whose inbox holds every run event it took: other messages on its queue are not the run\'s (no violation)', () => {
    const violations = checkVerifiedRun([{ subscriber: subscriberOf('Shipping'), taken: new Set([RUN_EVENT]), deadLetters: [], onQueue: 3, applied: new Set([RUN_EVENT]) }], runEvents, () => false);
    expect(violations).toEqual([]);
  });

  test('a run event not applied while messages are on the queue is still not-drained (the run\'s may be among them)', () => {
    const violations = checkVerifiedRun([{ subscriber: subscriberOf('Shipping'), taken: new Set([RUN_EVENT]), deadLetters: [], onQueue: 3, applied: new Set() }], runEvents, () => false);
    expect(violations.map((violation) => violation.kind)).toContain('not-drained');
  });
});

describe('R12B-7: a not-quiet run with --cleanup says why it removed nothing', () => {
  test('the reason names the missing verdict and the run id to remove by', () => {
    expect(notQuietCleanupSkippedReason('v0-01020304')).toMatch(/^removed nothing: the flow was not quiet in time, so no verdict \(only an OK run is cleaned up\).*the run id v0-01020304/);
  });
});
