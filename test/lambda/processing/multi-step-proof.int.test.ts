/**
 * Proof of multi-step mode under at-least-once delivery: duplicates, concurrent duplicates, crashed invocations at
 * every point that matters (in any step), lost DynamoDB responses and throttling, leases that expire. Each step's
 * effect is recorded in a ledger outside DynamoDB. Claim: no step's effect ever runs twice; a completed message ran
 * every step exactly once, each step seeing what the earlier steps returned; nothing is lost; after an operator
 * resolves the blocked ones from the ledger's truth and redrives them, every message completes with every step's
 * effect exactly once.
 */
import { describe, expect, test } from 'vitest';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import type { ProcessingStep } from '../../../lambda/processing/types';
import { LeaseProof } from '../../support/proof/lease-proof';
import { newMessage, type TestMessage } from './fixtures';

const SUBSCRIBER = 'fulfilment';
const MESSAGES = 70;
const SEED = 20240502;
const STEP_NAMES = ['reserve', 'charge', 'notify'] as const;

/** What step `step` returns for event `eventId` (and what an operator stores when resolving it as SUCCESS). */
const outputOf = (step: string, eventId: string): Record<string, string> => ({ [`${step}Ref`]: `${step}-${eventId}` });

describe('multi-step mode under at-least-once delivery', () => {
  test('no step runs twice, unknown outcomes block, nothing is lost; after the operator, every step applied exactly once', async () => {
    const proof = await LeaseProof.start({ seed: SEED, subscriberName: SUBSCRIBER, effectFailures: { rejected: 0.04, failedBefore: 0.06, failedAfter: 0.08 }, faultsWithin: 400 });
    /** The external effects: how often each `<eventId>#<step>` was applied. */
    const applied = (eventId: string, step: string) => proof.ledger.count(`${eventId}#${step}`);
    /** Steps that ran without the context of every earlier step. */
    const contextViolations: string[] = [];

    const steps: ProcessingStep<unknown>[] = STEP_NAMES.map((name, position) => ({
      name,
      run: (envelope, context) => {
        const expected = Object.assign({}, ...STEP_NAMES.slice(0, position).map((earlier) => outputOf(earlier, envelope.id))) as Record<string, string>;
        if (JSON.stringify(context.stepContext) !== JSON.stringify(expected)) contextViolations.push(`${envelope.id}#${name}: ${JSON.stringify(context.stepContext)}`);
        proof.ledger.apply(`${envelope.id}#${name}`);
        return outputOf(name, envelope.id);
      },
    }));
    const messages: TestMessage[] = Array.from({ length: MESSAGES }, (_unused, index) => newMessage({ order: index }));

    // phase 1: the hostile world (asserting that the run did exercise what it claims to)
    const run = await proof.deliver(messages, ({ client, deadLetter, logger }) =>
      createMultiStepConsumer({ steps, client, config: proof.config, deadLetter, logger, now: proof.clock.now, metricsSink: () => undefined }),
    );

    const statuses = await proof.expectNothingLost(run, messages);
    expect(statuses.filter((status) => status === 'COMPLETED').length).toBeGreaterThan(MESSAGES / 2);
    messages.forEach((message, index) => {
      for (const step of STEP_NAMES) {
        expect(applied(message.id, step), `step ${step} of message ${index}`).toBeLessThanOrEqual(1);
        if (statuses[index] === 'COMPLETED') expect(applied(message.id, step), `step ${step} of completed message ${index}`).toBe(1);
      }
    });
    expect(contextViolations).toEqual([]);

    // phase 2: the operator resolves from the ledger's truth and redrives until everything completes
    let resolvedSuccess = 0;
    let resolvedTryAgain = 0;
    await proof.finishAsOperator(run, messages, (entry) => {
      const step = entry.step as string;
      if (applied(entry.eventId, step) > 0) {
        resolvedSuccess += 1;
        return { status: 'SUCCESS', context: outputOf(step, entry.eventId) };
      }
      resolvedTryAgain += 1;
      return { status: 'TRY_AGAIN' };
    });

    expect(resolvedSuccess + resolvedTryAgain).toBeGreaterThan(0);
    expect((await Promise.all(messages.map(proof.statusOf))).filter((status) => status !== 'COMPLETED')).toEqual([]);
    for (const message of messages) expect(STEP_NAMES.map((step) => applied(message.id, step)), message.id).toEqual([1, 1, 1]);
    expect(contextViolations).toEqual([]);
  });
});
