/** Shared fixtures of the runtime tests. Not a test file (vitest only runs `*.test.ts`). */
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from '../../lambda/consumer/sqs';

/** A valid CloudEvents envelope object, with overrides. */
export function envelopeObject(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: 'test-producer',
    type: 'FundsDeposited',
    subject: 'account-1',
    time: '2024-05-01T12:00:00.000Z',
    datacontenttype: 'application/json',
    data: { account: 'account-1', amount: 10 },
    ...overrides,
  };
}

/** An SQS record as Lambda delivers it. */
export function sqsRecord(body: string, options: { messageId?: string; receiveCount?: number } = {}): SQSRecord {
  return {
    messageId: options.messageId ?? randomUUID(),
    body,
    attributes: { ApproximateReceiveCount: String(options.receiveCount ?? 1) },
  };
}

/** The recording logger and dead-letter publisher, shared with the integration and proof support. */
export { outcomesOf, RecordingDeadLetterPublisher, recordingLogger } from '../support/proof/recorders';

/** What `promise` rejected with; throws when it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
