/** The runtime's per-record outcome lines, read out of one invocation's output. */
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../lambda/logger';
import { loggedRecordOutcomes } from '../../../simulator/observation/record-outcomes';

describe('loggedRecordOutcomes', () => {
  test('keeps the last outcome per SQS message id, with its error or detail, and ignores every other line', () => {
    // GIVEN lines as the runtime's logger writes them, between a plain line, an EMF line and a line without an outcome
    const lines: string[] = ['START of something', JSON.stringify({ _aws: {}, Processed: 1 })];
    const log = createLogger({ sink: (line) => lines.push(line) }).child({ subscriber: 'Billing' });
    log.warn('payload not verified', { sqsMessageId: 'm-1', detail: 'acknowledged as a duplicate' });
    log.warn('failed', { sqsMessageId: 'm-1', outcome: 'failed', error: new TypeError('bad input') });
    log.info('skipped', { sqsMessageId: 'm-2', outcome: 'skipped', detail: 'an earlier message of this FIFO group failed' });
    log.error('dead-lettered', { sqsMessageId: 'm-3', outcome: 'dead-lettered', error: new Error('schema') });
    log.info('processed', { sqsMessageId: 'm-3', outcome: 'processed' });

    // THEN
    expect(loggedRecordOutcomes(lines)).toEqual(
      new Map([
        ['m-1', { outcome: 'failed', detail: 'TypeError: bad input' }],
        ['m-2', { outcome: 'skipped', detail: 'an earlier message of this FIFO group failed' }],
        ['m-3', { outcome: 'processed', detail: undefined }],
      ]),
    );
  });
});
