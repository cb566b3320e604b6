/**
 * What the relay gave up on, checked: an event on the pipe's dead-letter queue is accounted for (the report says how
 * to replay it), one given up with no dead letter is lost with its reason; and dead letters on a queue no alarm
 * watches fail the run.
 */
import { describe, expect, test } from 'vitest';
import { checkRelayed } from '../../../simulator/check/invariants';
import { checkUnwatchedDeadLetters } from '../../../simulator/check/unwatched-dead-letters';
import { RunLedger } from '../../../simulator/observation/ledger';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';

const RELAY = 'Stack/Relay';

describe('checkRelayed', () => {
  test('accepts a published event and one the pipe put on its dead-letter queue; names one it gave up on without a dead letter', () => {
    const ledger = new RunLedger();
    ledger.onStreamRecord(RELAY, { eventId: 'published', published: true, duplicate: false });
    ledger.onRelayGaveUp(RELAY, { eventIds: ['dead-lettered'], reason: '11 publish attempt(s) failed', deadLetterQueue: 'Stack/RelayDlq' });
    ledger.onRelayGaveUp(RELAY, { eventIds: ['discarded'], reason: 'its retries ran out; and the pipe has no dead-letter queue' });

    const violations = checkRelayed(new Map([[RELAY, ['published', 'dead-lettered', 'discarded', 'never-read']]]), ledger);

    expect(violations).toEqual([
      { kind: 'not-relayed', detail: `event discarded is in the outbox but relay ${RELAY} never published it: the pipe gave up on it and it is lost (its retries ran out; and the pipe has no dead-letter queue)` },
      { kind: 'not-relayed', detail: `event never-read is in the outbox but relay ${RELAY} never published it` },
    ]);
  });

  test("an event another relay dead-lettered does not account for this relay's event", () => {
    const ledger = new RunLedger();
    ledger.onRelayGaveUp('Stack/OtherRelay', { eventIds: ['e1'], reason: 'failed', deadLetterQueue: 'Stack/OtherDlq' });
    expect(checkRelayed(new Map([[RELAY, ['e1']]]), ledger)).toHaveLength(1);
  });
});

describe('checkUnwatchedDeadLetters', () => {
  const clock = frozenClock();
  const holding = (logicalId: string, messages: number) => {
    const queue = makeQueue(queueModel(logicalId, { constructPath: `Stack/${logicalId}/Resource` }), { clock });
    for (let index = 0; index < messages; index += 1) queue.send({ body: `dead letter ${index}`, origin: { via: 'pipe-dead-letter' } });
    return queue;
  };

  test('fails a dead-letter queue that holds messages when no alarm watches it, naming the queue and who put them there', () => {
    const unwatched = holding('RelayDlq', 2);
    expect(checkUnwatchedDeadLetters([{ queue: unwatched, owner: 'relay Stack/Relay' }], new Map())).toEqual([
      {
        kind: 'unwatched-dead-letters',
        detail: expect.stringMatching(/^2 dead letter\(s\) of relay Stack\/Relay are on queue Stack\/RelayDlq\/Resource, and no CloudWatch alarm in the templates watches it .*nobody would be told$/),
      },
    ]);
  });

  test('accepts a watched queue, and an empty one whether watched or not; reports a queue shared by two owners once', () => {
    const watched = holding('WatchedDlq', 1);
    const empty = holding('EmptyDlq', 0);
    const shared = holding('SharedDlq', 1);
    const alarms = new Map([[watched.model.key, ['Stack/Alarm']]]);
    const violations = checkUnwatchedDeadLetters(
      [
        { queue: watched, owner: 'subscriber A' },
        { queue: empty, owner: 'subscriber A' },
        { queue: shared, owner: 'subscriber A' },
        { queue: shared, owner: 'subscriber B' },
      ],
      alarms,
    );
    expect(violations).toHaveLength(1);
    expect(violations[0]?.detail).toContain('of subscriber A are on queue Stack/SharedDlq/Resource');
  });
});
