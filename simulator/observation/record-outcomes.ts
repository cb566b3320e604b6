/**
 * Reads the runtime's own per-record outcome lines out of one invocation's output. Every consumer the runtime builds
 * logs one JSON line per SQS record with `sqsMessageId` and `outcome` (lambda/consumer/process-message.ts and
 * create-consumer.ts): `processed`, `duplicate`, `dead-lettered` and `blocked` are acknowledged (the last two after the
 * runtime sent the message to its dead-letter queue), `failed` and `skipped` are reported as batch item failures
 * (lambda/consumer/batch.ts). These lines are the witness a batch response is checked against.
 */
import { RETRIED_OUTCOMES as RUNTIME_RETRIED_OUTCOMES } from '../../lambda/consumer/batch';

/** The outcomes after which the runtime reports the record in `batchItemFailures`, so SQS delivers it again (the runtime's own list). */
export const RETRIED_OUTCOMES: ReadonlySet<string> = RUNTIME_RETRIED_OUTCOMES;

/** One record's outcome as the runtime logged it. */
export interface LoggedRecordOutcome {
  /** The `outcome` field: `processed`, `duplicate`, `dead-lettered`, `blocked`, `failed` or `skipped`. */
  readonly outcome: string;
  /** What the line says about it: the error (`name: message`) or its `detail`, when it has either. */
  readonly detail?: string;
}

/** The error or detail of an outcome line, in words; undefined when it has neither. */
export function describeLoggedError(line: Readonly<Record<string, unknown>>): string | undefined {
  const error = line.error;
  if (typeof error === 'object' && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    return `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : ''}`;
  }
  return typeof line.detail === 'string' ? line.detail : undefined;
}

/** Parses a line as a JSON object; undefined for anything else. */
export function jsonLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The last outcome the runtime logged for each SQS message id among `lines` (lines of one invocation). */
export function loggedRecordOutcomes(lines: readonly string[]): Map<string, LoggedRecordOutcome> {
  const outcomes = new Map<string, LoggedRecordOutcome>();
  for (const line of lines) {
    const parsed = jsonLine(line);
    if (parsed === undefined || typeof parsed.sqsMessageId !== 'string' || typeof parsed.outcome !== 'string') continue;
    outcomes.set(parsed.sqsMessageId, { outcome: parsed.outcome, detail: describeLoggedError(parsed) });
  }
  return outcomes;
}
