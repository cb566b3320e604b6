import { afterEach, describe, expect, test, vi } from 'vitest';
import { createBatchHandler } from '../../lambda/consumer/create-consumer';
import { MessageBlockedError } from '../../lambda/errors';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

/**
 * Lambda's log-level filtering of a function in JSON log format, as its developer guide states it ("Log-level
 * filtering"): the application log levels from the most detailed, TRACE, to the least, FATAL; Lambda sends a line at the
 * chosen level or a less detailed one; a line whose `level` is missing or invalid counts as INFO.
 */
const LAMBDA_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
function lambdaKeeps(line: Record<string, unknown>, applicationLogLevel: (typeof LAMBDA_LEVELS)[number]): boolean {
  const level = typeof line.level === 'string' && (LAMBDA_LEVELS as readonly string[]).includes(line.level.toUpperCase()) ? line.level.toUpperCase() : 'INFO';
  return LAMBDA_LEVELS.indexOf(level as (typeof LAMBDA_LEVELS)[number]) >= LAMBDA_LEVELS.indexOf(applicationLogLevel);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

async function metricLinesAt(applicationLogLevel: string | undefined): Promise<Array<Record<string, unknown>>> {
  if (applicationLogLevel !== undefined) vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', applicationLogLevel);
  const metricLines: Array<Record<string, unknown>> = [];
  const handler = createBatchHandler({
    config: { subscriberName: 'billing', functionName: 'Billing-Fn' },
    processingMode: 'lease',
    options: { deadLetter: new RecordingDeadLetterPublisher(), metricsSink: (line) => metricLines.push(JSON.parse(line) as Record<string, unknown>) },
    logger: recordingLogger().logger,
    now: () => new Date('2024-05-01T12:00:01.500Z'),
    execute: async (envelope) => {
      throw new MessageBlockedError('the effect\'s outcome is unknown', { eventId: envelope.id, step: 'effect' });
    },
  });
  await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({})))] });
  return metricLines;
}

describe('consumer metric lines survive Lambda\'s log-level filtering at every application log level', () => {
  test.each(LAMBDA_LEVELS)('at %s, Lambda keeps the EMF line with the Blocked count, and it is still EMF', async (applicationLogLevel) => {
    const lines = await metricLinesAt(applicationLogLevel);

    expect(lines).toHaveLength(1);
    const line = lines[0] as Record<string, unknown>;
    expect(lambdaKeeps(line, applicationLogLevel)).toBe(true);
    // EMF: the `_aws` metadata with its directives, and every target member at the root (a `level` member is one more
    // root member, which the EMF specification allows and ignores)
    const directive = (line._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }>; Dimensions: string[][] }> }).CloudWatchMetrics[0];
    expect(directive?.Metrics.map((metric) => metric.Name)).toContain('Blocked');
    for (const name of [...(directive?.Dimensions.flat() ?? []), ...(directive?.Metrics.map((metric) => metric.Name) ?? [])]) expect(line).toHaveProperty(name);
    expect(line.Blocked).toBe(1);
  });

  test('the line is as detailed as Lambda keeps: INFO up to INFO, the application log level above it', async () => {
    expect((await metricLinesAt(undefined))[0]?.level).toBe('INFO');
    expect((await metricLinesAt('DEBUG'))[0]?.level).toBe('INFO');
    expect((await metricLinesAt('WARN'))[0]?.level).toBe('WARN');
    expect((await metricLinesAt('fatal'))[0]?.level).toBe('FATAL');
  });
});
