/**
 * `fence skip` with the table flags (no Operator output) reads the dead-letter queue only when the typed subscriber
 * queue's RedrivePolicy names it (review ro15b, RO15B-2): an empty FIFO queue typed as --dead-letter-queue (staging's,
 * another subscriber's) passed the skip past an event that sat in the subscriber's own dead-letter queue. DynamoDB
 * Local, the simulator's FIFO SQS behind its endpoint, the real CLI and @aws-sdk/client-sqs.
 */
import { describe, expect, test } from 'vitest';
import { SKIP_NEEDS_QUEUE_LINE } from '../../operator/cli/fence-skip-queue';
import { cli } from './operator-services';
import { clock, endpoint } from './ordered-dlq-kit';
import { deadLetter, fenceAt, fifoQueues, firstApplied, inboxConfig, outbox, output, skip, SUBSCRIBER, useFenceSkipWorld } from './fence-skip-kit';

useFenceSkipWorld();

const typedSkip = (aggregateId: string, ...queues: string[]) =>
  cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, aggregateId, '--table', inboxConfig.inboxTableName, '--outbox-table', outbox.outboxTableName, ...queues, '--from', '1', '--to', '2', '--reason', 'lost', '--yes', '--json');

describe("fence skip ties a typed --dead-letter-queue to the subscriber's queue (RO15B-2)", () => {
  test('a FIFO queue that is not the subscriber queue\'s dead-letter queue is refused, the fence stays (the real one holds #2)', async () => {
    const id = `acct-typed-${Date.now()}`;
    const { queue, dlq } = fifoQueues();
    const events = await firstApplied(id, ['opened', 'credited', 'debited']);
    deadLetter(dlq, events[1]!);
    // the subscriber's output refuses the skip, as the letter of #2 is there
    expect((await skip(id, output(queue, dlq), 2, '--yes')).code).toBe(3);
    // another FIFO queue (staging's dead-letter queue, another subscriber's), empty, typed with the table flags
    const other = fifoQueues().dlq;
    const noQueue = await typedSkip(id, '--dead-letter-queue', other.address.url);
    expect({ code: noQueue.code, fence: await fenceAt(id) }).toEqual({ code: 2, fence: 1 });
    expect(noQueue.stderr).toContain(SKIP_NEEDS_QUEUE_LINE);
    const wrong = await typedSkip(id, '--queue', queue.address.url, '--dead-letter-queue', other.address.url);
    expect({ code: wrong.code, fence: await fenceAt(id) }).toEqual({ code: 3, fence: 1 });
    expect(wrong.stderr).toContain(`--dead-letter-queue ${other.address.url} is not the dead-letter queue of --queue ${queue.address.url}`);
    // the subscriber's own pair: read, and the letter of #2 refuses the skip
    const own = await typedSkip(id, '--queue', queue.address.url, '--dead-letter-queue', dlq.address.url);
    expect({ code: own.code, fence: await fenceAt(id) }).toEqual({ code: 3, fence: 1 });
    expect(own.stderr).toContain('the dead-letter queue holds');
  });

  test('the subscriber\'s own queue and dead-letter queue, typed, with nothing there: the skip moves the fence', async () => {
    const id = `acct-typed-ok-${Date.now()}`;
    const { queue, dlq } = fifoQueues();
    await firstApplied(id, ['opened', 'credited', 'debited']);
    const own = await typedSkip(id, '--queue', queue.address.url, '--dead-letter-queue', dlq.address.url);
    expect({ code: own.code, fence: await fenceAt(id) }).toEqual({ code: 0, fence: 2 });
  });
});
