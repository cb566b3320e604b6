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
    ['a permanent failure', async (): Promise<never> => Promise.reject(new PermanentError('refused for good'))],
    ['a schema failure', processed],
  ])('%s whose dead-letter send fails is left on the queue (failed), never acknowledged: nothing else keeps it', async (name, execute) => {
    const { deps, lines } = dependencies(execute, {
      deadLetter: {
        publish: async () => {
          throw new Error('SQS SendMessage failed');
        },
      },
      ...(name === 'a schema failure'
        ? {
            parse: () => {
              throw new Error('amount: expected a number');
            },
          }
        : {}),
    });
    expect(await processMessage(sqsRecord(JSON.stringify(envelopeObject())), deps)).toBe('failed');
    expect(JSON.stringify(lines)).toContain('dead-letter send failed');
  });

  test.each([
    ['a string', 'amount is required', 'amount is required'],
    ['a plain object (a validation library\'s issue list)', { issues: [{ path: ['amount'], message: 'Required' }] }, '{"issues":[{"path":["…"],"message":"…"}]}'],
    ['an object without prototype', Object.assign(Object.create(null) as object, { field: 'amount' }), '{"field":"…"}'],
    ['undefined', undefined, 'undefined'],
  ])('dead-letters a schema that throws %s, with what was thrown as the reason, its values redacted', async (_name, thrown, reason) => {
    const { deps, deadLetter } = dependencies(processed, {
      parse: () => {
        throw thrown;
      },
    });
    const envelope = envelopeObject();
    expect(await processMessage(sqsRecord(JSON.stringify(envelope)), deps)).toBe('dead-lettered');
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'SchemaValidationError', errorMessage: `event '${envelope.id}' (FundsDeposited) failed the subscriber's schema: ${reason}` });
  });

  test('never copies the payload values a schema error echoes into the dead-letter attributes or the log, unless logPayloadValues', async () => {
    const schemaError = new Error('amount: Number must be less than or equal to 1000, received 1999.5');
    const parse = (): never => {
      throw schemaError;
    };
    const envelope = envelopeObject({ data: { account: 'a-1', amount: 1999.5 } });

    const redacted = dependencies(processed, { parse });
    expect(await processMessage(sqsRecord(JSON.stringify(envelope)), redacted.deps)).toBe('dead-lettered');
    expect(redacted.deadLetter.published[0]!.errorMessage).toBe(
      `event '${envelope.id}' (FundsDeposited) failed the subscriber's schema: amount: Number must be less than or equal to #, received #`,
    );
    expect(JSON.stringify(redacted.lines)).not.toContain('1999.5');
    expect(JSON.stringify(redacted.lines)).toContain('SchemaValidationError');

    const revealed = dependencies(processed, { parse, logPayloadValues: true });
    expect(await processMessage(sqsRecord(JSON.stringify(envelope)), revealed.deps)).toBe('dead-lettered');
    expect(revealed.deadLetter.published[0]!.errorMessage).toContain('received 1999.5');
    expect(JSON.stringify(revealed.lines)).toContain('1999.5');
  });

  test("never copies the start of a body that is not JSON (JSON.parse quotes it) into the dead letter's reason or the log, unless logPayloadValues", async () => {
    const body = 'card=4111111111111111;cvv=123';
    const redacted = dependencies(processed);
    expect(await processMessage(sqsRecord(body), redacted.deps)).toBe('dead-lettered');
    expect(redacted.deadLetter.published[0]).toMatchObject({ errorName: 'MalformedEnvelopeError', errorMessage: expect.stringContaining('message body is not valid JSON') });
    expect(redacted.deadLetter.published[0]!.errorMessage).not.toContain('4111');
    expect(JSON.stringify(redacted.lines)).not.toContain('4111');

    const revealed = dependencies(processed, { logPayloadValues: true });
    expect(await processMessage(sqsRecord(body), revealed.deps)).toBe('dead-lettered');
    expect(revealed.deadLetter.published[0]!.errorMessage).toContain('card=4111');
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
  test('puts the deployed function name on every metrics line', async () => {
    // GIVEN
    const metricLines: Array<Record<string, unknown>> = [];
    const { logger } = recordingLogger();
    const handler = createBatchHandler<Deposit>({
      config: { subscriberName: 'billing', functionName: 'Staging-Billing-Fn' },
      processingMode: 'lease',
      options: { deadLetter: new RecordingDeadLetterPublisher(), metricsSink: (line) => metricLines.push(JSON.parse(line) as Record<string, unknown>) },
      logger,
      now: () => new Date(),
      execute: async () => ({ outcome: 'processed' }),
    });
    // WHEN
    await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account: 'a', amount: 1 } })))] });
    // THEN
    expect(metricLines).toHaveLength(1);
    expect(metricLines[0]).toMatchObject({ Subscriber: 'billing', ProcessingMode: 'lease', FunctionName: 'Staging-Billing-Fn', Processed: 1 });
    expect(JSON.stringify(metricLines[0]?._aws)).toContain('"Dimensions":[["Subscriber","ProcessingMode","FunctionName"]]');
  });

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
