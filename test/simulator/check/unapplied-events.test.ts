/**
 * An event a subscriber's filter took whose messages ended only in its dead-letter queues fails the run, whatever
 * explains the dead letter; an acknowledged event, one the scenario marked malformed, and the dead letters other checks
 * fail do not.
 */
import { describe, expect, test } from 'vitest';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { checkUnappliedEvents } from '../../../simulator/check/unapplied-events';
import { unappliedEventsRule } from '../../../simulator/check/rules/unapplied-events';
import { fixFor } from '../../../simulator/check/violation-cause';
import { RECEIVE_COUNT_SOURCE } from '../../../lambda/contract/receive-count';
import { receiveAll, SUBSCRIPTION_KEY, subscriberKit } from './check-kit';

/** A kit whose queue moves a message to the dead-letter queue after one failed receive. */
function oneReceiveKit(eventIds: readonly string[]) {
  const kit = subscriberKit({ maxReceiveCount: 1 });
  for (const id of eventIds) kit.deliver(id);
  return kit;
}

function outcome(kit: ReturnType<typeof subscriberKit>, operator: 'acted' | 'off' | 'none' = 'none') {
  return {
    name: 'Billing',
    matched: kit.ledger.matchedEvents.get(SUBSCRIPTION_KEY) ?? new Set<string>(),
    applied: new Set([...(kit.ledger.acknowledgedEvents.get(SUBSCRIPTION_KEY) ?? []), ...(kit.ledger.handledEvents.get(SUBSCRIPTION_KEY) ?? [])]),
    deadLetters: readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger),
    operator,
  };
}

describe('unapplied-event', () => {
  test('fails, naming the events and the failure, when SQS moved the messages of events never acknowledged', () => {
    // GIVEN three events whose one receive failed with a TypeError: SQS moves them at the next receive
    const kit = oneReceiveKit(['event-1', 'event-2', 'event-3']);
    for (const message of receiveAll(kit.queue)) kit.ledger.lastFailure.set(message.messageId, "the runtime reported: TypeError: Cannot read properties of undefined (reading 'refund')");
    kit.clock.advanceBy(31_000);
    expect(kit.queue.receive(10)).toEqual([]);

    // WHEN event-3 is the scenario's malformed one
    const violations = checkUnappliedEvents(outcome(kit), (eventId) => eventId === 'event-3');

    // THEN one violation names the two others and the failure
    expect(violations).toEqual([
      {
        kind: 'unapplied-event',
        subscriber: 'Billing',
        detail: expect.stringMatching(
          /^2 event\(s\) its filter policy took were never acknowledged by it, their messages left in its dead-letter queue \(events event-1, event-2\): .*sent away by: moved by SQS after maxReceiveCount receives; last failure: the runtime reported: TypeError: Cannot read properties of undefined \(reading 'refund'\)$/,
        ),
      },
    ]);
  });

  test('passes an event with a dead letter when another copy of it was acknowledged', () => {
    const kit = oneReceiveKit(['event-1']);
    kit.deliver('event-1');
    const [first, second] = receiveAll(kit.queue);
    kit.queue.delete(second!.receiptHandle);
    kit.ledger.lastFailure.set(first!.messageId, 'the invocation timed out');
    kit.clock.advanceBy(31_000);
    kit.queue.receive(10);

    expect(kit.deadLetterQueue.counts().total).toBe(1);
    expect(checkUnappliedEvents(outcome(kit), () => false)).toEqual([]);
  });

  test('passes an event its consumer answered as handled whose message SQS moved after its delete was lost: its effect is done', () => {
    const kit = oneReceiveKit(['event-1']);
    const [message] = receiveAll(kit.queue);
    kit.ledger.onInvocation('Stack/Mapping', {
      messages: [message!],
      outcome: { kind: 'returned', response: { batchItemFailures: [] } },
      failedMessageIds: [],
      output: [],
    });
    kit.ledger.onFault('lost-delete', kit.queue.model.key, { messageId: message!.messageId });
    kit.clock.advanceBy(31_000);
    kit.queue.receive(10);

    expect(kit.deadLetterQueue.counts().total).toBe(1);
    expect(checkUnappliedEvents(outcome(kit), () => false)).toEqual([]);
  });

  test('a blocked message says whether the scenario has an operator for the subscriber', () => {
    const kit = subscriberKit();
    kit.deliver('event-1');
    kit.deadLetterByRuntime(receiveAll(kit.queue)[0]!, 'event-1');

    expect(checkUnappliedEvents(outcome(kit, 'none'), () => false)).toEqual([
      expect.objectContaining({ detail: expect.stringMatching(/sent away by: MessageBlockedError: blocked for an operator \(blocked for an operator, and the scenario has none for Billing: give one in its 'operator'/) }),
    ]);
    expect(checkUnappliedEvents(outcome(kit, 'acted'), () => false)).toEqual([expect.objectContaining({ detail: expect.stringMatching(/still blocked after the scenario's operator acted\)$/) })]);
  });

  test("one violation per mistake: the per-delivery data of a reason (the event, the lease's owner token, its expiry time) do not split the events", () => {
    // GIVEN three events each moved after a live lease of its own (owner and expiry differ per delivery), or found blocked
    const kit = oneReceiveKit(['event-1', 'event-2', 'event-3']);
    const [one, two, three] = receiveAll(kit.queue);
    kit.ledger.lastFailure.set(one!.messageId, "the runtime reported: MessageInProgressError: event 'event-1' is being processed by another delivery (lease until 2026-11-29T01:00:00.000Z, plus 5 s allowed for clock skew); retried later");
    kit.ledger.lastFailure.set(two!.messageId, "the runtime reported: MessageInProgressError: event 'event-2' is being processed by another delivery (lease until 2026-11-29T01:03:00.000Z, plus 5 s allowed for clock skew); retried later");
    kit.ledger.lastFailure.set(three!.messageId, "the runtime reported: MessageInProgressError: event 'event-3' is being processed by another delivery (lease until 2026-11-29T01:03:00.000Z, plus 5 s allowed for clock skew); retried later");
    kit.clock.advanceBy(31_000);
    kit.queue.receive(10);

    // THEN one violation lists the three, its reason without what differs per delivery
    const violations = checkUnappliedEvents(outcome(kit), () => false);
    expect(violations).toHaveLength(1);
    expect(violations[0]!.detail).toContain('(events event-1, event-2, event-3)');
    expect(violations[0]!.detail).toContain("MessageInProgressError: event <event> is being processed by another delivery (lease until <time>, plus 5 s allowed for clock skew)");
  });

  test('blocked messages whose reasons differ by owner token and expiry time: one violation', () => {
    const kit = subscriberKit();
    kit.deliver('event-1');
    kit.deliver('event-2');
    const [one, two] = receiveAll(kit.queue);
    const blocked = (owner: string, at: string) => `step 'effect' was PROCESSING under owner '${owner}', whose lease expired at ${at}: that delivery crashed or stalled, so the step may or may not have taken effect; it is not run again until an operator resolves it`;
    kit.deadLetterByRuntime(one!, 'event-1', true, blocked('28cc2efe-9bc7-49de-b64b-18673dc02825', '2026-11-29T00:00:30.000Z'));
    kit.deadLetterByRuntime(two!, 'event-2', true, blocked('9502b974-3c8b-4b47-a483-d109f8bc2f1d', '2026-11-29T00:06:30.000Z'));

    const violations = checkUnappliedEvents(outcome(kit), () => false);
    expect(violations).toHaveLength(1);
    expect(violations[0]!.detail).toContain("under owner <owner>, whose lease expired at <time>");
  });

  describe('a lease outlasting the redeliveries (an overridden IEF_LEASE_DURATION_SECONDS): named as the cause', () => {
    /** Two events of a lease subscriber whose every receive found the lease live: SQS moved them (visibility 180 s). */
    function inProgressKit() {
      const kit = subscriberKit({ maxReceiveCount: 1, visibilityTimeoutSeconds: 180 });
      kit.deliver('event-1');
      kit.deliver('event-2');
      for (const message of receiveAll(kit.queue)) {
        kit.ledger.lastFailure.set(message.messageId, "the runtime reported: MessageInProgressError: event 'x' is being processed by another delivery; retried later");
      }
      kit.clock.advanceBy(181_000);
      kit.queue.receive(10);
      return kit;
    }
    const lease = (mode: string, leaseSeconds: string) => ({ environment: { IEF_PROCESSING_MODE: mode, IEF_LEASE_DURATION_SECONDS: leaseSeconds }, visibilityTimeoutSeconds: 180 });

    test('an event with two dead letters (two copies), one last failed at a crash, one at the live lease: counted once, under the lease, with its cause (new-user trial NU18-7)', () => {
      const kit = subscriberKit({ maxReceiveCount: 1, visibilityTimeoutSeconds: 180 });
      kit.deliver('event-1');
      kit.deliver('event-1');
      kit.deliver('event-2');
      const [crashed, refused, other] = receiveAll(kit.queue);
      kit.ledger.lastFailure.set(crashed!.messageId, 'the function crashed at DynamoDB request 7 (after DynamoDB applied it)');
      for (const message of [refused!, other!]) {
        kit.ledger.lastFailure.set(message.messageId, "the runtime reported: MessageInProgressError: event 'x' is being processed by another delivery; retried later");
      }
      kit.clock.advanceBy(181_000);
      kit.queue.receive(10);

      const violations = checkUnappliedEvents({ ...outcome(kit), lease: lease('lease', '900') }, () => false);

      expect(violations.map((violation) => [violation.detail.match(/\(events [^)]*\)/)?.[0], violation.causes?.map((cause) => cause.kind)])).toEqual([
        ['(events event-1, event-2)', ['lease-outlasts-redelivery']],
      ]);
    });

    test('a lease of 3600 s under a visibility timeout of 180 s: the setting, its value, the most the run allowed (180 s less the 5 s allowance)', () => {
      const violations = checkUnappliedEvents({ ...outcome(inProgressKit()), lease: lease('lease', '3600') }, () => false);

      expect(violations).toEqual([
        {
          kind: 'unapplied-event',
          subscriber: 'Billing',
          detail: expect.stringMatching(/\(events event-1, event-2\): .*MessageInProgressError/),
          causes: [
            {
              kind: 'lease-outlasts-redelivery',
              subscriber: 'Billing',
              eventIds: ['event-1', 'event-2'],
              invocations: [],
              requests: [],
              setting: { name: 'IEF_LEASE_DURATION_SECONDS', value: 3600, needed: 175 },
              fix: fixFor('lease-outlasts-redelivery'),
            },
          ],
        },
      ]);
    });

    test('the same for a multi-step subscriber; a lease of 175 s (the most allowed) is no cause, nor is another mode, another failure or an unknown visibility timeout', () => {
      expect(checkUnappliedEvents({ ...outcome(inProgressKit()), lease: lease('multi-step', '176') }, () => false)[0]?.causes?.[0]?.setting).toEqual({ name: 'IEF_LEASE_DURATION_SECONDS', value: 176, needed: 175 });
      for (const facts of [lease('lease', '175'), lease('transactional', '3600'), { environment: lease('lease', '3600').environment }]) {
        const [violation] = checkUnappliedEvents({ ...outcome(inProgressKit()), lease: facts }, () => false);
        expect(violation).toBeDefined();
        expect(violation!.causes).toBeUndefined();
      }
      const kit = oneReceiveKit(['event-1']);
      for (const message of receiveAll(kit.queue)) kit.ledger.lastFailure.set(message.messageId, 'the invocation timed out');
      kit.clock.advanceBy(31_000);
      kit.queue.receive(10);
      expect(checkUnappliedEvents({ ...outcome(kit), lease: lease('lease', '3600') }, () => false)[0]!.causes).toBeUndefined();
    });
  });
});

describe('the unapplied-event rule: the lease read from what the runtime wrote', () => {
  /** Two events of a lease subscriber whose every receive found the lease live: SQS moved them (visibility 180 s). */
  function leaseKit() {
    const kit = subscriberKit({ maxReceiveCount: 1, visibilityTimeoutSeconds: 180 });
    kit.deliver('event-1');
    kit.deliver('event-2');
    for (const message of receiveAll(kit.queue)) {
      kit.ledger.lastFailure.set(message.messageId, "the runtime reported: MessageInProgressError: event 'x' is being processed by another delivery; retried later");
    }
    kit.clock.advanceBy(181_000);
    kit.queue.receive(10);
    return kit;
  }

  function ruleFindings(kit: ReturnType<typeof subscriberKit>, environment: Readonly<Record<string, string>>) {
    const view = { ...kit.subscriber, function: { key: 'Stack/Notifications' }, environment };
    return unappliedEventsRule.check({ ...outcome(kit), view, effectProbe: undefined, applyCause: () => undefined, applyCauses: () => [], shortCause: () => undefined, shortCauses: () => [], appliedBetween: () => [], ownClientCause: () => undefined }, {
      ledger: kit.ledger,
      subscribers: [],
      committed: { eventsById: new Map() },
      isMalformed: () => false,
    });
  }

  test('a lease set to 900 s in code (the environment says 30 s): the cause names leaseDurationSeconds and the lease the runtime wrote on its processing records', () => {
    // GIVEN the environment's lease is the construct's 30 s, and the runtime wrote leases of 900 s (createLeaseConsumer's config)
    const kit = leaseKit();
    kit.ledger.leaseSecondsWritten.set('Stack/Notifications', 900);

    // WHEN the rule judges the events SQS moved after the live lease refused every receive
    const [violation] = ruleFindings(kit, { IEF_PROCESSING_MODE: 'lease', IEF_LEASE_DURATION_SECONDS: '30' });

    // THEN the lease the runtime used is the cause, named as the setting in code
    expect(violation!.causes).toEqual([
      {
        kind: 'lease-outlasts-redelivery',
        subscriber: 'Billing',
        eventIds: ['event-1', 'event-2'],
        invocations: [],
        requests: [],
        setting: { name: 'leaseDurationSeconds', value: 900, needed: 175 },
        fix: fixFor('lease-outlasts-redelivery'),
      },
    ]);
  });

  test("a run that heard no processing record's lease (verify's) reads the environment's", () => {
    const kit = leaseKit();
    expect(ruleFindings(kit, { IEF_PROCESSING_MODE: 'multi-step', IEF_LEASE_DURATION_SECONDS: '3600' })[0]!.causes?.[0]?.setting).toEqual({ name: 'IEF_LEASE_DURATION_SECONDS', value: 3600, needed: 175 });
    expect(ruleFindings(kit, { IEF_PROCESSING_MODE: 'multi-step', IEF_LEASE_DURATION_SECONDS: '30' })[0]!.causes).toBeUndefined();
  });
});

describe('the unapplied-event rule: a maxReceiveCount below 5 named as the cause when injected faults alone used up the receives', () => {
  /** How one receive of the batch fails: an injected crash, a record failed at an injected throttle, or at the app's own error. */
  type Failure = 'crash' | 'throttle' | 'app-error';

  /**
   * Two events whose messages fail every one of `maxReceiveCount` receives (the `failures` in order, one per receive),
   * each receive reported to the ledger as the mapping and the function runner report it, then moved by SQS.
   */
  function failingKit(maxReceiveCount: number, failures: readonly Failure[]) {
    const kit = subscriberKit({ maxReceiveCount });
    kit.deliver('event-1');
    kit.deliver('event-2');
    for (const failure of failures) {
      const batch = receiveAll(kit.queue);
      const invocationKey = `Stack/Mapping|${batch[0]!.messageId}|${batch[0]!.receiveCount}`;
      const messages = batch.map(({ messageId, receiveCount, origin }) => ({ messageId, receiveCount, origin }));
      const ids = batch.map((message) => message.messageId);
      if (failure === 'crash') {
        kit.ledger.onFault('crash', 'Stack/Billing', { invocationKey });
        kit.ledger.onInvocation('Stack/Mapping', { messages, outcome: { kind: 'crashed', atRequest: 2, afterCommit: false }, failedMessageIds: ids, output: [] });
      } else {
        if (failure === 'throttle') kit.ledger.onFault('throttle', 'Stack/Billing', { invocationKey });
        const error = failure === 'throttle' ? { name: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' } : { name: 'TypeError', message: "Cannot read properties of undefined (reading 'refund')" };
        const output = ids.map((sqsMessageId) => JSON.stringify({ level: 'WARN', message: 'failed', sqsMessageId, outcome: 'failed', error }));
        kit.ledger.onInvocation('Stack/Mapping', { messages, outcome: { kind: 'returned', response: { batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })) } }, failedMessageIds: ids, output });
      }
      kit.clock.advanceBy(31_000);
    }
    expect(kit.queue.receive(10)).toEqual([]);
    expect(kit.deadLetterQueue.counts().total).toBe(2);
    return kit;
  }

  function ruleFindings(kit: ReturnType<typeof subscriberKit>) {
    const view = { ...kit.subscriber, function: { key: 'Stack/Billing' }, environment: { IEF_PROCESSING_MODE: 'transactional' } };
    return unappliedEventsRule.check({ ...outcome(kit), view, effectProbe: undefined, applyCause: () => undefined, applyCauses: () => [], shortCause: () => undefined, shortCauses: () => [], appliedBetween: () => [], ownClientCause: () => undefined }, {
      ledger: kit.ledger,
      subscribers: [],
      committed: { eventsById: new Map() },
      isMalformed: () => false,
    });
  }

  test('maxReceiveCount 3, every receive failed at an injected crash or throttle: the violation stays, naming the setting, the least AWS recommends and the fix', () => {
    // GIVEN receives failed by an injected crash, a throttle the runtime's retries could not outlast, and a crash
    const kit = failingKit(3, ['crash', 'throttle', 'crash']);

    // WHEN the rule judges the events SQS moved
    const violations = ruleFindings(kit);

    // THEN the events are unapplied (AWS would lose them too), and the cause is the queue's maxReceiveCount
    expect(violations).toEqual([
      {
        kind: 'unapplied-event',
        subscriber: 'Billing',
        detail: expect.stringContaining(
          `sent away by: moved by SQS after maxReceiveCount receives; last failure: the function crashed at DynamoDB request 2 (before DynamoDB applied it); ` +
            `maxReceiveCount 3 is below 5, the least AWS recommends for a queue Lambda reads (${RECEIVE_COUNT_SOURCE}): every receive of these events failed at a fault the run injected, ` +
            `as transient failures can in AWS: ${fixFor('few-receives')}`,
        ),
        causes: [
          {
            kind: 'few-receives',
            subscriber: 'Billing',
            eventIds: ['event-1', 'event-2'],
            invocations: [],
            requests: [],
            setting: { name: 'maxReceiveCount', value: 3, least: 5 },
            fix: fixFor('few-receives'),
          },
        ],
      },
    ]);
    expect(fixFor('few-receives')).toMatch(/^raise maxReceiveCount to 5 or more/);
  });

  test("no such cause when one receive failed at the app's own error: the app's error is to fix", () => {
    const [violation] = ruleFindings(failingKit(3, ['crash', 'app-error', 'crash']));

    expect(violation).toMatchObject({ kind: 'unapplied-event', subscriber: 'Billing' });
    expect(violation!.causes).toBeUndefined();
    expect(violation!.detail).not.toContain('is below 5');
  });

  test('no such cause at maxReceiveCount 5, whatever failed the receives', () => {
    const [violation] = ruleFindings(failingKit(5, ['crash', 'crash', 'throttle', 'crash', 'crash']));

    expect(violation).toMatchObject({ kind: 'unapplied-event', subscriber: 'Billing' });
    expect(violation!.causes).toBeUndefined();
  });

  test('a throttling error the run did not inject in that invocation is not counted as injected', () => {
    // GIVEN the second receive's records failed with ThrottlingException, and no fault was injected into that invocation
    const kit = subscriberKit({ maxReceiveCount: 2 });
    kit.deliver('event-1');
    const [first] = receiveAll(kit.queue);
    kit.ledger.onInvocation('Stack/Mapping', { messages: [first!], outcome: { kind: 'crashed', atRequest: 1, afterCommit: true }, failedMessageIds: [first!.messageId], output: [] });
    kit.clock.advanceBy(31_000);
    const [second] = receiveAll(kit.queue);
    kit.ledger.onFault('throttle', 'Stack/Billing', { invocationKey: `Stack/Mapping|${first!.messageId}|1` });
    const line = JSON.stringify({ sqsMessageId: second!.messageId, outcome: 'failed', error: { name: 'ThrottlingException', message: 'Rate exceeded' } });
    kit.ledger.onInvocation('Stack/Mapping', { messages: [second!], outcome: { kind: 'returned', response: { batchItemFailures: [{ itemIdentifier: second!.messageId }] } }, failedMessageIds: [second!.messageId], output: [line] });
    kit.clock.advanceBy(31_000);
    kit.queue.receive(10);

    expect(ruleFindings(kit)[0]!.causes).toBeUndefined();
  });
});
