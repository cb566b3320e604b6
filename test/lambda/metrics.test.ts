import { describe, expect, test } from 'vitest';
import { ConsumerMetrics } from '../../lambda/metrics';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';

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
        level: 'INFO',
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

describe('ConsumerMetrics: end-to-end latency (EventAge)', () => {
  const now = Date.parse('2024-05-01T00:00:00.000Z');
  const body = (secondsAgo: number) => ({ envelope: { time: new Date(now - secondsAgo * 1000).toISOString() } });

  test('adds the age of each applied event as a value of EventAge in milliseconds; duplicates and failures add none', () => {
    const { metrics, lines } = recorder();
    metrics.count('processed', body(2));
    metrics.count('processed', body(0.25));
    metrics.count('duplicate', body(60));
    metrics.count('failed', body(60));
    metrics.count('processed', { envelope: {} }); // no time: counted, no age

    metrics.flush();

    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ Processed: 3, Duplicates: 1, [CONSUMER_METRICS.EVENT_AGE]: [2000, 250] });
    const declared = (lines[0]?._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string; Unit: string }> }> }).CloudWatchMetrics[0]?.Metrics;
    expect(declared).toContainEqual({ Name: 'EventAge', Unit: 'Milliseconds' });
  });

  test('declares no EventAge on a line that applied nothing', () => {
    const { metrics, lines } = recorder();
    metrics.count('duplicate', body(1));
    metrics.flush();
    expect(JSON.stringify(lines[0]?._aws)).not.toContain('EventAge');
    expect(lines[0]).not.toHaveProperty('EventAge');
  });

  test('splits more than 100 ages over several lines, as EMF takes at most 100 values of a metric per line', () => {
    const { metrics, lines } = recorder();
    for (let index = 0; index < 250; index++) metrics.count('processed', body(1));
    metrics.flush();
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => (line.EventAge as number[]).length)).toEqual([100, 100, 50]);
    expect(lines[0]?.Processed).toBe(250);
    expect(lines[1]).not.toHaveProperty('Processed');
  });
});
