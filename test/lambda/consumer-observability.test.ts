import { describe, expect, test } from 'vitest';
import { createBatchHandler } from '../../lambda/consumer/create-consumer';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function handlerWithSinks() {
  const metricLines: Array<Record<string, unknown>> = [];
  const { logger, lines } = recordingLogger();
  const handler = createBatchHandler({
    config: { subscriberName: 'billing', functionName: 'Billing-Fn' },
    processingMode: 'transactional',
    options: { deadLetter: new RecordingDeadLetterPublisher(), metricsSink: (line) => metricLines.push(JSON.parse(line) as Record<string, unknown>) },
    logger,
    now: () => new Date('2024-05-01T12:00:01.500Z'),
    execute: async (_envelope, context) => {
      context.logger.info('handler ran');
      return { outcome: 'processed' };
    },
  });
  return { handler, metricLines, lines };
}

describe('consumer observability: end-to-end latency and trace context', () => {
  test('the batch line has the age of each applied event (now minus its time) and its trace id', async () => {
    const { handler, metricLines } = handlerWithSinks();

    await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ traceparent: TRACEPARENT })))] });

    expect(metricLines).toHaveLength(1);
    expect(metricLines[0]).toMatchObject({ Processed: 1, EventAge: 1500, TraceIds: ['4bf92f3577b34da6a3ce929d0e0e4736'] });
  });

  test("the handler's log lines carry the event's trace id and traceparent", async () => {
    const { handler, lines } = handlerWithSinks();

    await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ traceparent: TRACEPARENT, tracestate: 'rojo=1' })))] });

    const handlerLine = lines.find((line) => line.message === 'handler ran');
    expect(handlerLine).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: TRACEPARENT, tracestate: 'rojo=1' });
  });
});
