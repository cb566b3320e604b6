import { describe, expect, test } from 'vitest';
import { ConsumerMetrics } from '../../../lambda/metrics';
import type { ResourceKey } from '../../../simulator/model/flow-model';
import { RunLedger } from '../../../simulator/observation/ledger';

/**
 * The simulator sets `AWS_LAMBDA_FUNCTION_NAME` for every function it runs, so the runtime's EMF lines carry the
 * `FunctionName` dimension (item 17 of issue 10); the ledger's runtime counters must still add them up.
 */
describe('RunLedger: the runtime EMF counters', () => {
  test('counts the lines of a consumer that runs with a function name (the FunctionName dimension)', () => {
    // GIVEN
    const ledger = new RunLedger();
    const functionKey: ResourceKey = 'Prod/BillingFunction';
    const metrics = new ConsumerMetrics({
      subscriberName: 'Billing',
      processingMode: 'lease',
      functionName: 'Prod-BillingFunction',
      sink: (line) => ledger.onFunctionOutput(functionKey, line, 'stdout'),
    });
    // WHEN two batches
    metrics.count('processed');
    metrics.count('blocked');
    metrics.flush();
    metrics.count('processed');
    metrics.flush();
    // THEN
    expect(ledger.runtimeCounters.get(functionKey)).toEqual({ Processed: 2, Duplicates: 0, Failed: 0, Blocked: 1, DeadLettered: 0, AlreadyBlocked: 0 });
  });
});
