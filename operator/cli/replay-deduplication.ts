/**
 * The deduplication ids of a replay to an ordered subscriber's FIFO queue (`fence replay`, ordered `replay`). Per run:
 * a replay run again within SQS's 5-minute deduplication interval (the first run's events were dead-lettered by a
 * failing handler, since fixed) sends them again, rather than having SQS accept the sends and drop them while the
 * command says they were sent (review ro15, RO15-3). Within one run an SDK retry of a send keeps its id, so SQS drops
 * it; a second copy that reaches the consumer is what the fence answers.
 */
import { createHash, randomUUID } from 'node:crypto';

/** The longest deduplication id SQS takes. */
const MAX_DEDUPLICATION_ID_LENGTH = 128;

/** A new replay run's deduplication ids: `of(eventId)` is the same for every send of the event in the run, another in the next run. */
export function replayDeduplicationIds(): { of(eventId: string): string } {
  const run = randomUUID().replace(/-/g, '');
  return {
    of(eventId: string): string {
      const id = `replayed-${run}-${eventId}`;
      return id.length <= MAX_DEDUPLICATION_ID_LENGTH && /^[\x21-\x7e]+$/.test(id) ? id : `replayed-${run}-${createHash('sha256').update(eventId).digest('hex')}`;
    },
  };
}
