import { describe, expect, test } from 'vitest';
import { pathText, renderCriticalPathTable, renderModeledTargets, type CriticalPathFigures, type LatencyRow } from '../../bench/support/latency/report';

const critical = (roundTrips: number, modeledMs: number, modeledRecordsPerSecond: number): CriticalPathFigures => ({
  roundTripsP50: roundTrips,
  roundTripsP95: roundTrips,
  timingChainP50: roundTrips,
  timingChainP95: roundTrips,
  modeledP50Ms: modeledMs,
  modeledP95Ms: modeledMs,
  modeledRecordsPerSecond,
  typicalPath: 'TxWrite',
  typicalPathBatches: 15,
  batches: 15,
});

const row = (consumer: string, p50Ms: number, recordsPerSecond: number, figures: CriticalPathFigures): LatencyRow => ({
  delayMs: 8,
  redeliveryRate: 0.2,
  consumer,
  records: 150,
  distinct: 120,
  p50Ms,
  p95Ms: p50Ms,
  recordsPerSecond,
  requestsPerRecord: 1,
  wcuPerRecord: 0,
  failedWcuPerRecord: 0,
  rcuPerRecord: 0,
  handlerRunsPerRecord: 1,
  failedRedelivered: 0,
  violations: [],
  critical: figures,
});

describe('the issue-40 targets on the critical path', () => {
  const rows = [
    row('Powertools', 100, 100, critical(3, 60, 160)),
    row('transactional', 90, 150, critical(2, 40, 260)),
    row('hand-written inbox', 120, 80, critical(10, 200, 50)),
    row('round-trip floor', 50, 300, critical(1, 20, 480)),
  ];

  test('judges each target on the round trips and on the modelled latency, the wall clock beside', () => {
    const lines = renderModeledTargets(rows).split('\n');
    expect(lines).toEqual([
      "- transactional, 8 ms, 20 %: p50 against Powertools' (target ≤ 0.5×, records on distinct items): round trips 2 against 3 = 0.67×: NOT met; modelled 0.67×: NOT met; wall clock 0.90×",
      "- transactional, 8 ms, 20 %: p50 against the round-trip floor's (target ≤ 1.1×, records sharing items): round trips 2 against 1 = 2.00×: NOT met; modelled 2.00×: NOT met; wall clock 1.80×",
      '- transactional, 8 ms, 20 %: records/s against the hand-written inbox\'s (target ≥ 0.9×, one worker): modelled 5.20×: met; wall clock 1.88×',
    ]);
  });

  test('a target is met at its bound', () => {
    const atBound = [row('Powertools', 100, 100, critical(2, 40, 100)), row('transactional', 50, 90, critical(1, 20, 90))];
    expect(renderModeledTargets(atBound)).toContain('= 0.50×: met; modelled 0.50×: met');
  });

  test('leaves out rows without critical-path figures', () => {
    const { critical: _dropped, ...bare } = row('transactional', 90, 150, critical(2, 40, 260));
    expect(renderModeledTargets([row('Powertools', 100, 100, critical(3, 60, 160)), bare])).toBe('');
    expect(renderCriticalPathTable([row('Powertools', 100, 100, critical(3, 60, 160)), bare]).split('\n')).toHaveLength(3);
  });

  test('names the operations of a path shortly, in order', () => {
    expect(pathText(['BatchGetItem', 'TransactWriteItems', 'TransactWriteItems'])).toBe('BatchGet → TxWrite → TxWrite');
    expect(pathText([])).toBe('(no request)');
  });
});
