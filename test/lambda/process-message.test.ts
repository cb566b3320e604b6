import { describe, expect, test } from 'vitest';
import { createBatchHandler } from '../../lambda/consumer/create-consumer';
import { processMessage, type MessageDependencies, type MessageExecutor } from '../../lambda/consumer/process-message';
import { MessageBlockedError, MessageInProgressError, PayloadMismatchError, PermanentError } from '../../lambda/errors';
import { payloadFingerprint } from '../../lambda/fingerprint';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

interface Deposit {
  readonly account: string;
  readonly amount: number;
}

function dependencies(execute: MessageExecutor<Deposit>, overrides: Partial<MessageDependencies<Deposit>> = {}) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const deps: MessageDependencies<Deposit> = { execute, subscriberName: 'billing', deadLetter, logger, now: () => new Date(), ...overrides };
  return { deps, lines, deadLetter };
}

const processed: MessageExecutor<Deposit> = async () => ({ outcome: 'processed' });

describe('processMessage', () => {
  test('hands the executor the parsed data and the payload fingerprint', async () => {
    const envelope = envelopeObject({ data: { account: 'a-1', amount: '12' } });
    const seen: unknown[] = [];
    const { deps } = dependencies(
      async (parsed, context) => {
        seen.push(parsed.data, context.fingerprint);
        return { outcome: 'processed' };
      },
      { parse: (data) => ({ ...(data as Deposit), amount: Number((data as { amount: string }).amount) }) },
    );

    expect(await processMessage(sqsRecord(JSON.stringify(envelope)), deps)).toBe('processed');
    // the fingerprint is of the payload as delivered, not as parsed
    expect(seen).toEqual([{ account: 'a-1', amount: 12 }, payloadFingerprint(envelope as never)]);
  });

  test('dead-letters a payload that fails the schema at once, with the reason, without running the mode', async () => {
    let executed = false;
    const { deps, deadLetter } = dependencies(
      async () => {
        executed = true;
        return { outcome: 'processed' };
      },
      {
        parse: () => {
          throw new Error('amount: expected a number');
        },
      },
    );
    const envelope = envelopeObject();

    expect(await processMessage(sqsRecord(JSON.stringify(envelope), { receiveCount: 1 }), deps)).toBe('dead-lettered');
    expect(executed).toBe(false);
    expect(deadLetter.published).toEqual([
      expect.objectContaining({
        errorName: 'SchemaValidationError',
        errorMessage: `event '${envelope.id}' (FundsDeposited) failed the subscriber's schema: amount: expected a number`,
        eventId: envelope.id,
        approximateReceiveCount: 1,
      }),
    ]);
  });

  test.each([
    ['a string', 'amount is required', 'amount is required'],
    ['a plain object (a validation library\'s issue list)', { issues: [{ path: ['amount'], message: 'Required' }] }, '{"issues":[{"path":["amount"],"message":"Required"}]}'],
    ['an object without prototype', Object.assign(Object.create(null) as object, { field: 'amount' }), '{"field":"amount"}'],
    ['undefined', undefined, 'undefined'],
  ])('dead-letters a schema that throws %s, with what was thrown as the reason', async (_name, thrown, reason) => {
    const { deps, deadLetter } = dependencies(processed, {
      parse: () => {
        throw thrown;
      },
    });
    const envelope = envelopeObject();
    expect(await processMessage(sqsRecord(JSON.stringify(envelope)), deps)).toBe('dead-lettered');
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'SchemaValidationError', errorMessage: `event '${envelope.id}' (FundsDeposited) failed the subscriber's schema: ${reason}` });
  });

  test('keeps a PermanentError thrown by the schema as it is', async () => {
    const { deps, deadLetter } = dependencies(processed, {
      parse: () => {
        throw new PermanentError('unknown currency XYZ');
      },
    });
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('dead-lettered');
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'PermanentError', errorMessage: 'unknown currency XYZ' });
  });

  test('dead-letters a reused event id with a different payload (PayloadMismatchError)', async () => {
    const { deps, deadLetter } = dependencies(async () => {
      throw new PayloadMismatchError({ eventId: 'e-1', storedFingerprint: 'sha256:a', receivedFingerprint: 'sha256:b', subscriber: 'billing' });
    });
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('dead-lettered');
    expect(deadLetter.published[0]?.errorName).toBe('PayloadMismatchError');
  });

  test('a blocked message is dead-lettered with the reason and counts as blocked', async () => {
    const { deps, deadLetter, lines } = dependencies(async () => {
      throw new MessageBlockedError("step 'email-invoice' outcome unknown", { eventId: 'e-1', step: 'email-invoice' });
    });
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('blocked');
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'MessageBlockedError', errorMessage: "step 'email-invoice' outcome unknown" });
    expect(lines.at(-1)).toMatchObject({ level: 'ERROR', outcome: 'blocked' });
  });

  test('a message in progress elsewhere is retried quietly (INFO), not dead-lettered', async () => {
    const { deps, deadLetter, lines } = dependencies(async () => {
      throw new MessageInProgressError('leased by another delivery', { eventId: 'e-1', leaseExpiresAtEpochMilliseconds: 1 });
    });
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('failed');
    expect(deadLetter.published).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ level: 'INFO', outcome: 'failed', detail: 'retried later' });
  });

  test('any other error is a transient failure, logged as WARN', async () => {
    const { deps, lines } = dependencies(async () => {
      throw new Error('socket hang up');
    });
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('failed');
    expect(lines.at(-1)).toMatchObject({ level: 'WARN', outcome: 'failed' });
  });

  test('a blocked message stays on the queue when the dead-letter send fails', async () => {
    const { deps } = dependencies(
      async () => {
        throw new MessageBlockedError('unknown', { eventId: 'e-1', step: 'effect' });
      },
      { deadLetter: new RecordingDeadLetterPublisher(true) },
    );
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('failed');
  });
});

describe('createBatchHandler', () => {
  test('reports failures per record and writes one metrics line per batch with the mode dimension', async () => {
    const metricLines: Array<Record<string, unknown>> = [];
    const { logger } = recordingLogger();
    const handler = createBatchHandler<Deposit>({
      config: { subscriberName: 'billing' },
      processingMode: 'aggregate',
      options: { deadLetter: new RecordingDeadLetterPublisher(), metricsSink: (line) => metricLines.push(JSON.parse(line) as Record<string, unknown>) },
      logger,
      now: () => new Date(),
      execute: async (envelope) => {
        if (envelope.data.amount < 0) throw new Error('transient');
        return { outcome: envelope.data.amount === 0 ? 'duplicate' : 'processed' };
      },
    });
    const good = sqsRecord(JSON.stringify(envelopeObject({ data: { account: 'a', amount: 1 } })), { messageId: 'good' });
    const dup = sqsRecord(JSON.stringify(envelopeObject({ data: { account: 'a', amount: 0 } })), { messageId: 'dup' });
    const bad = sqsRecord(JSON.stringify(envelopeObject({ data: { account: 'a', amount: -1 } })), { messageId: 'bad' });
    const malformed = sqsRecord('not json', { messageId: 'malformed' });

    const response = await handler({ Records: [good, dup, bad, malformed] });

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect(metricLines).toHaveLength(1);
    expect(metricLines[0]).toMatchObject({ Subscriber: 'billing', ProcessingMode: 'aggregate', Processed: 1, Duplicates: 1, Failed: 1, DeadLettered: 1, Blocked: 0 });
  });
});
