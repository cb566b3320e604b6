/** Shared fixtures of the runtime tests. Not a test file (vitest only runs `*.test.ts`). */
import { randomUUID } from 'node:crypto';
import type { DeadLetter, DeadLetterPublisher } from '../../lambda/consumer/dead-letter';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import { createLogger, type Logger } from '../../lambda/logger';

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

/** A logger that keeps its lines, parsed, instead of printing them. */
export function recordingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { logger: createLogger({ sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

/** The outcomes logged per event id, in order. */
export function outcomesOf(lines: ReadonlyArray<Record<string, unknown>>): string[] {
  return lines.filter((line) => typeof line.outcome === 'string').map((line) => line.outcome as string);
}

/** A dead-letter publisher that records what it is given, or fails when told to. */
export class RecordingDeadLetterPublisher implements DeadLetterPublisher {
  public readonly published: DeadLetter[] = [];
  public constructor(private readonly fail = false) {}

  public async publish(deadLetter: DeadLetter): Promise<void> {
    if (this.fail) throw new Error('SQS is unavailable (recording fake)');
    this.published.push(deadLetter);
  }
}
