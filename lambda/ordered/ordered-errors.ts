/** The errors of the ordered path (docs/ORDERED-DELIVERY.md). */
import { EventFlowError, PermanentError } from '../errors';

/**
 * An ordered event arrived before the one before it in its aggregate: the subscriber's fence waits for sequence
 * `expected`, and this is `received`. Nothing was applied; the message is retried (a batch item failure), so it waits
 * for the missing event (a FIFO queue holds the group's later messages behind it). It is never skipped: when the
 * missing event can not come (it is in a dead-letter queue, or lost), an operator redrives it, or moves the fence
 * past it on purpose (`SequenceFences.skipGap`).
 */
export class SequenceGapError extends EventFlowError {
  public constructor(
    public readonly aggregateId: string,
    public readonly expected: number,
    public readonly received: number,
  ) {
    super(
      `aggregate '${aggregateId}': this event is sequence ${received}, but the subscriber has applied up to ${expected - 1} and waits for ${expected}; ` +
        `not applied, retried until ${expected === received - 1 ? `sequence ${expected} is` : `sequences ${expected} to ${received - 1} are`} applied ` +
        '(find a missing one in the dead-letter queue and redrive it, or see `SequenceFences`)',
    );
    this.name = 'SequenceGapError';
  }
}

/** A message on an ordered subscriber's queue without the `partitionkey` and `sequence` of an ordered event: dead-lettered. */
export class NotAnOrderedEventError extends PermanentError {
  public constructor(reason: string) {
    super(`not an ordered event: ${reason}; an ordered subscriber takes only events written by OrderedOutbox`);
    this.name = 'NotAnOrderedEventError';
  }
}

/**
 * Two different events under one sequence of one aggregate: the aggregate's head item went back (a point-in-time
 * restore into a new table, a replaced outbox table, a head deleted or written around `OrderedOutbox`).
 * Dead-lettered, never acknowledged: the subscriber can not tell which one is the aggregate's history.
 * - `appliedEventId` given: the fence stands at this sequence, applied as that other event;
 * - `appliedEventId` undefined: the fence stands past this sequence at `fence`, and the subscriber has no inbox record
 *   of this event although it is younger than the deduplication window, so it was never applied: a new event under a
 *   sequence already passed (docs/ORDERED-DELIVERY.md, "Restoring the outbox table").
 */
export class SequenceReusedError extends PermanentError {
  public constructor(aggregateId: string, sequence: number, appliedEventId: string | undefined, eventId: string, fence: number = sequence) {
    super(
      appliedEventId !== undefined
        ? `aggregate '${aggregateId}': sequence ${sequence} was applied as event '${appliedEventId}', and event '${eventId}' claims it too; ` +
            "the aggregate's head item went back or was changed outside OrderedOutbox (a restored or replaced outbox table?)"
        : `aggregate '${aggregateId}': event '${eventId}' is sequence ${sequence}, but the subscriber's fence stands at ${fence} and it has no inbox record of ` +
            'this event, which is younger than the deduplication window: a new event under a sequence already passed, never applied. ' +
            "The aggregate's head item went back (a restored or replaced outbox table?): carry the heads over (`outbox heads`, " +
            'docs/ORDERED-DELIVERY.md "Restoring the outbox table"), then write this event again',
    );
    this.name = 'SequenceReusedError';
  }
}
