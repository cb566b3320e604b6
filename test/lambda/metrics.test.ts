import { describe, expect, test } from 'vitest';
import { CONSUMER_METRICS, ConsumerMetrics } from '../../lambda/metrics';

function recorder(functionName?: string) {
  const lines: Array<Record<string, unknown>> = [];
  const metrics = new ConsumerMetrics({
    subscriberName: 'billing',
    processingMode: 'lease',
    functionName,
    sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    now: () => new Date('2024-05-01T00:00:00.000Z'),
  });
  return { metrics, lines };
}

describe('ConsumerMetrics', () => {
  test('adds the function name as a third dimension when it runs in Lambda, so each deployment has its own metrics', () => {
    // GIVEN
    const { metrics, lines } = recorder('Prod-Billing-Fn');
    // WHEN
    metrics.count('blocked');
    metrics.flush();
    // THEN
    const [line] = lines;
    expect((line?._aws as { CloudWatchMetrics: Array<{ Dimensions: unknown }> }).CloudWatchMetrics[0]?.Dimensions).toEqual([
      [CONSUMER_METRICS.SUBSCRIBER_DIMENSION, CONSUMER_METRICS.PROCESSING_MODE_DIMENSION, CONSUMER_METRICS.FUNCTION_NAME_DIMENSION],
    ]);
    expect(line).toMatchObject({ Subscriber: 'billing', ProcessingMode: 'lease', FunctionName: 'Prod-Billing-Fn', Blocked: 1 });
  });

  test('outside Lambda (no function name), writes one EMF line per flush with the counts, the two dimensions and every metric declared', () => {
    const { metrics, lines } = recorder();
    for (const outcome of ['processed', 'processed', 'duplicate', 'failed', 'skipped', 'blocked', 'dead-lettered', 'already-blocked'] as const) metrics.count(outcome);

    metrics.flush();

    expect(lines).toEqual([
      {
        _aws: {
          Timestamp: Date.parse('2024-05-01T00:00:00.000Z'),
          CloudWatchMetrics: [
            {
              Namespace: 'IdempotentEventFlow',
              Dimensions: [['Subscriber', 'ProcessingMode']],
              Metrics: ['Processed', 'Duplicates', 'Failed', 'Blocked', 'DeadLettered', 'AlreadyBlocked'].map((Name) => ({ Name, Unit: 'Count' })),
            },
          ],
        },
        Subscriber: 'billing',
        ProcessingMode: 'lease',
        Processed: 2,
        Duplicates: 1,
        Failed: 2,
        Blocked: 1,
        DeadLettered: 1,
        AlreadyBlocked: 1,
      },
    ]);
  });

  test('counts a skipped FIFO message as failed: it is retried', () => {
    const { metrics, lines } = recorder();
    metrics.count('skipped');
    metrics.flush();
    expect(lines[0]?.[CONSUMER_METRICS.FAILED]).toBe(1);
  });

  test('writes nothing when nothing was counted, and resets after a flush', () => {
    const { metrics, lines } = recorder();
    metrics.flush();
    metrics.count('processed');
    metrics.flush();
    metrics.flush();
    expect(lines).toHaveLength(1);
  });
});
