/** Where an ordered event stands: its aggregate and sequence, read from the message body's envelope extensions. */
import { NotAnOrderedEventError } from './ordered-errors';
import { MAX_ORDERED_ID_CHARACTERS, ORDERED_ENVELOPE, SEQUENCE_DIGITS } from '../contract/ordered-wire-format';

/** An ordered event's aggregate and its position in it. */
export interface OrderedPosition {
  readonly aggregateId: string;
  /** 1, 2, 3, ... */
  readonly sequence: number;
  /**
   * When the producer's runtime wrote the event (epoch milliseconds, `ORDERED_ENVELOPE.WRITTEN_AT_ATTRIBUTE`); undefined
   * when the envelope has none or not a whole number: its age can not be proven.
   */
  readonly writtenAt?: number;
  /** The head's generation the event was written on (`ORDERED_ENVELOPE.GENERATION_ATTRIBUTE`); 0 when absent. */
  readonly generation: number;
  /** The sequence its generation started at (`ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE`); 0 when absent. */
  readonly generationBase: number;
}

/** How many wrappers (an SNS notification, an extra JSON-string encoding) are peeled off at most, as `parseEnvelope` does. */
const MAX_UNWRAP_DEPTH = 3;

/** The envelope object inside a body that `parseEnvelope` accepted (a JSON object, a JSON string of one, an SNS notification). */
function envelopeObject(body: string): Record<string, unknown> {
  let value: unknown = body;
  for (let depth = 0; depth <= MAX_UNWRAP_DEPTH; depth++) {
    if (typeof value === 'string') value = JSON.parse(value);
    else if (typeof value === 'object' && value !== null && (value as { Type?: unknown }).Type === 'Notification') value = (value as { Message?: unknown }).Message;
    else break;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new NotAnOrderedEventError('the body is not an envelope object');
  return value as Record<string, unknown>;
}

/**
 * The aggregate (`partitionkey`) and sequence (`sequence`, 16 digits) of the envelope in `body`.
 * Call it after `parseEnvelope` accepted the body.
 *
 * @throws NotAnOrderedEventError when either is missing or malformed (the message is dead-lettered)
 */
export function orderedPositionOf(body: string): OrderedPosition {
  const envelope = envelopeObject(body);
  const aggregateId = envelope[ORDERED_ENVELOPE.AGGREGATE_ATTRIBUTE];
  const sequence = envelope[ORDERED_ENVELOPE.SEQUENCE_ATTRIBUTE];
  if (typeof aggregateId !== 'string' || aggregateId.length === 0 || aggregateId.length > MAX_ORDERED_ID_CHARACTERS) {
    throw new NotAnOrderedEventError(`'${ORDERED_ENVELOPE.AGGREGATE_ATTRIBUTE}' must be a string of 1 to ${MAX_ORDERED_ID_CHARACTERS} characters`);
  }
  if (typeof sequence !== 'string' || !new RegExp(`^\\d{${SEQUENCE_DIGITS}}$`).test(sequence) || Number(sequence) < 1 || !Number.isSafeInteger(Number(sequence))) {
    throw new NotAnOrderedEventError(`'${ORDERED_ENVELOPE.SEQUENCE_ATTRIBUTE}' must be ${SEQUENCE_DIGITS} decimal digits of a whole number from 1`);
  }
  const writtenAt = envelope[ORDERED_ENVELOPE.WRITTEN_AT_ATTRIBUTE];
  const generation = wholeNumber(envelope, ORDERED_ENVELOPE.GENERATION_ATTRIBUTE);
  const generationBase = wholeNumber(envelope, ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE);
  if (generationBase >= Number(sequence)) {
    throw new NotAnOrderedEventError(`'${ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE}' (${generationBase}) must be below '${ORDERED_ENVELOPE.SEQUENCE_ATTRIBUTE}' (${Number(sequence)})`);
  }
  return { aggregateId, sequence: Number(sequence), generation, generationBase, ...(typeof writtenAt === 'number' && Number.isSafeInteger(writtenAt) ? { writtenAt } : {}) };
}

/** A whole-number extension attribute of the envelope: 0 when absent. @throws NotAnOrderedEventError when malformed */
function wholeNumber(envelope: Record<string, unknown>, attribute: string): number {
  const value = envelope[attribute];
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new NotAnOrderedEventError(`'${attribute}' must be a whole number from 0`);
  return value;
}
