/**
 * Fakes that record what the runtime logs and dead-letters, for unit, integration and proof tests. Not a test file.
 */
import type { DeadLetter, DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import { createLogger, type Logger } from '../../../lambda/logger';

/** A logger that keeps its lines, parsed, instead of printing them. */
export function recordingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  // every line, the per-record DEBUG outcome lines included
  return { logger: createLogger({ level: 'DEBUG', sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
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

  /** True when a dead letter of event `eventId` was published. */
  public has(eventId: string): boolean {
    return this.published.some((letter) => letter.eventId === eventId);
  }

  /** The error names each SQS message was dead-lettered with (each name once), by SQS message id. */
  public errorNamesByMessage(): Record<string, string[]> {
    const names: Record<string, string[]> = {};
    for (const letter of this.published) {
      const known = (names[letter.sourceMessageId] ??= []);
      if (!known.includes(letter.errorName)) known.push(letter.errorName);
    }
    return names;
  }
}
