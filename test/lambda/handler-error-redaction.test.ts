/**
 * Errors thrown by a user's handler (and their `cause` chains) reach the logs and the dead-letter attributes with
 * their payload values redacted, as schema and JSON errors do, unless the consumer was created with
 * `logPayloadValues: true` (issue 22, item 5). The runtime's own errors keep their messages.
 */
import { describe, expect, test } from 'vitest';
import { createBatchHandler } from '../../lambda/consumer/create-consumer';
import { MessageBlockedError, PermanentError } from '../../lambda/errors';
import * as runtimeExports from '../../lambda/index';
import { RUNTIME_COMPOSED_ERRORS } from '../../lambda/redact';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const CARD = '4111111111111111';

/** Runs one message through a batch handler whose executor throws `error`; returns the log lines and the dead letters. */
async function runWith(error: unknown, logPayloadValues?: boolean) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createBatchHandler<unknown>({
    config: { subscriberName: 'billing' },
    processingMode: 'transactional',
    options: { deadLetter, metricsSink: () => undefined, logPayloadValues },
    logger,
    now: () => new Date(),
    execute: async () => {
      throw error;
    },
  });
  await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { card: CARD } })))] });
  return { lines, deadLetter };
}

describe("a handler's error", () => {
  test('is logged with its message and cause chain redacted, its name kept', async () => {
    const cause = new Error(`gateway refused card "${CARD}" for amount 1999.5`);
    const { lines } = await runWith(new Error(`charging '${CARD}' failed`, { cause }));
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(CARD);
    expect(logged).not.toContain('1999.5');
    expect(logged).toContain("charging '…' failed");
    expect(logged).toContain('gateway refused card \\"…\\" for amount #');
  });

  test("reaches the dead letter's errorMessage redacted when it is permanent", async () => {
    const { deadLetter, lines } = await runWith(new PermanentError(`card ${CARD} declined`));
    expect(deadLetter.published).toHaveLength(1);
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'PermanentError', errorMessage: 'card # declined' });
    expect(JSON.stringify(lines)).not.toContain(CARD);
  });

  test('keeps its values with logPayloadValues: true', async () => {
    const { deadLetter, lines } = await runWith(new PermanentError(`card ${CARD} declined`, { cause: new Error(`amount 1999.5`) }), true);
    expect(deadLetter.published[0]).toMatchObject({ errorMessage: `card ${CARD} declined` });
    expect(JSON.stringify(lines)).toContain(CARD);
    expect(JSON.stringify(lines)).toContain('1999.5');
  });
});

describe("the runtime's own errors", () => {
  test('keep their messages (step names, event ids) in logs and dead letters', async () => {
    const { deadLetter, lines } = await runWith(new MessageBlockedError("step 'email-invoice' outcome unknown", { eventId: 'e-1', step: 'email-invoice' }));
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'MessageBlockedError', errorMessage: "step 'email-invoice' outcome unknown" });
    expect(JSON.stringify(lines)).toContain("step 'email-invoice' outcome unknown");
  });
});

describe('every error class of the runtime', () => {
  test('is either composed by the runtime (kept) or one a handler throws too (redacted): a new class must be classified', () => {
    const runtime = runtimeExports as Record<string, unknown>;
    const errorClasses = Object.entries(runtime)
      .filter(([, value]) => typeof value === 'function' && (value as { prototype?: unknown }).prototype instanceof Error)
      .map(([name]) => name);
    expect(errorClasses.length).toBeGreaterThan(10);
    const thrownByHandlersToo = new Set(['EventFlowError', 'PermanentError', 'RetryableError']);
    expect(errorClasses.filter((name) => !RUNTIME_COMPOSED_ERRORS.has(name) && !thrownByHandlersToo.has(name))).toEqual([]);
  });
});
