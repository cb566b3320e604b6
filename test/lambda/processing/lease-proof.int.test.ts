/**
 * Proof of lease mode under at-least-once delivery: duplicates, concurrent duplicates, crashed invocations at every
 * point that matters, lost DynamoDB responses and throttling, leases that expire. The external effect is a ledger
 * outside DynamoDB. Claim: no effect ever runs twice; an effect whose outcome is unknown leaves its message BLOCKED;
 * no message is lost; after an operator resolves the blocked ones from the ledger's truth and redrives them, every
 * message is COMPLETED with its effect applied exactly once.
 */
import { describe, expect, test } from 'vitest';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { LeaseProof } from '../../support/proof/lease-proof';
import { newMessage, type TestMessage } from './fixtures';

const SUBSCRIBER = 'notifier';
const MESSAGES = 100;
const SEED = 20240501;

describe('lease mode under at-least-once delivery', () => {
  test('no effect runs twice, unknown outcomes block, nothing is lost; after the operator, every effect applied exactly once', async () => {
    const proof = await LeaseProof.start({ seed: SEED, subscriberName: SUBSCRIBER, effectFailures: { rejected: 0.05, failedBefore: 0.08, failedAfter: 0.11 }, faultsWithin: 300 });
    // the ledger is the external effect: how often each event's notification was sent
    const { ledger, clock, config } = proof;
    const messages: TestMessage[] = Array.from({ length: MESSAGES }, (_unused, index) => newMessage({ notification: index }));

    // phase 1: the hostile world (asserting that the run did exercise what it claims to)
    const run = await proof.deliver(messages, ({ client, deadLetter, logger }) =>
      createLeaseConsumer({ client, config, deadLetter, logger, now: clock.now, metricsSink: () => undefined, handle: (envelope) => ledger.apply(envelope.id) }),
    );
    expect(run.lines.some((line) => line.message === 'lease expired mid-step; blocked')).toBe(true);

    const statuses = await proof.expectNothingLost(run, messages);
    messages.forEach((message, index) => {
      // at most once, always
      expect(ledger.count(message.id), `effect of message ${index}`).toBeLessThanOrEqual(1);
      // a completed message's effect applied exactly once
      if (statuses[index] === 'COMPLETED') expect(ledger.count(message.id), `effect of completed message ${index}`).toBe(1);
    });
    for (const letter of run.deadLetters.published) expect(['MessageBlockedError', 'PermanentError']).toContain(letter.errorName);

    // phase 2: the operator resolves from the ledger's truth and redrives until everything completes
    await proof.finishAsOperator(run, messages, (entry) => ({ status: ledger.count(entry.eventId) > 0 ? 'SUCCESS' : 'TRY_AGAIN' }));

    const finalStatuses = await Promise.all(messages.map(proof.statusOf));
    expect(finalStatuses.filter((status) => status !== 'COMPLETED')).toEqual([]);
    expect(messages.map((message) => ledger.count(message.id))).toEqual(messages.map(() => 1));
  });
});
