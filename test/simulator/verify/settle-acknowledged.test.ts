/**
 * Trial nu12, item 3: a subscriber whose handler acknowledges every event (its inbox record committed) but does nothing
 * kept verify waiting its whole time limit, then "not quiet", blaming the relay or SNS ("none on Billing's queue
 * yet"). Once its queue is empty and its inbox holds every run event it took, the events are acknowledged: the wait
 * ends and the checks name the missing effect (`effect-count`); while only some are acknowledged, the wait says so.
 * Against DynamoDB Local (the inbox) and the simulator's SQS endpoint (the queues), on a virtual clock.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import type { EffectProbe } from '../../../simulator/run/scenario';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { ACKNOWLEDGED_WITHOUT_EFFECT, NotQuietError, waitUntilQuiet } from '../../../simulator/verify/settle';
import { checkVerifiedRun } from '../../../simulator/verify/verify-checks';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { runEvent, settleOptions, VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();

/** Billing's probe: a ledger entry per event, none of them written. */
const nothingWritten: EffectProbe = async ({ events }) => events.map((event) => ({ subject: `ledger entry of ${event.id}`, eventIds: [event.id], applied: 0 }));

async function billingFlow(acknowledged: readonly string[]): Promise<DeployedFlow> {
  const inboxTable = uniqueTableName('nu12-billing-inbox');
  await createTable(bed.dynamoDb, inboxTable, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
  for (const eventId of acknowledged) {
    await bed.documents.send(new PutCommand({ TableName: inboxTable, Item: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey('Billing', eventId), eventId, subscriber: 'Billing', processedAt: '2026-11-30T06:00:00.000Z' } }));
  }
  const queues = bed.subscriberQueues('Billing');
  return {
    stackNames: ['App'],
    flows: [],
    resources: [],
    subscribers: [
      {
        name: 'Billing',
        stackName: 'App',
        environment: {},
        deployment: { format: 1, subscriberName: 'Billing', processingMode: 'transactional', deduplicationWindowSeconds: 86400, inboxTable, queueUrl: queues.queue.address.url, deadLetterQueueUrl: queues.deadLetters.address.url },
      },
    ],
  };
}

describe('a subscriber that acknowledges without its effect (nu12 item 3)', () => {
  test('every run event in its inbox, its queue empty: the wait ends before its limit, and the checks say effect-count', async () => {
    const events = [runEvent('order-1'), runEvent('order-2')];
    const flow = await billingFlow(['order-1', 'order-2']);
    const options = settleOptions({ Billing: nothingWritten }, events, new Map());

    await expect(waitUntilQuiet(bed.clients(), flow, options)).resolves.toBeUndefined();

    const subscriber = flow.subscribers[0]!;
    const taken = new Set(['order-1', 'order-2']);
    const tallies = await nothingWritten({ client: bed.documents, environment: {}, events: events.map((item) => item.event), sentMessages: [] } as never);
    const violations = checkVerifiedRun([{ subscriber, taken, deadLetters: [], onQueue: 0, applied: taken, effectProbe: { tallies } }], new Map(events.map((item) => [item.event.id, item.event])), () => false);
    expect(violations.map((violation) => violation.kind)).toEqual(['effect-count', 'effect-count']);
  });

  test('only some in its inbox: it waits, and says how many are acknowledged without the effect, not only "none on the queue yet"', async () => {
    const flow = await billingFlow(['order-1']);
    const error = await waitUntilQuiet(bed.clients(), flow, settleOptions({ Billing: nothingWritten }, [runEvent('order-1'), runEvent('order-2')], new Map())).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(NotQuietError);
    expect((error as NotQuietError).waitingFor).toEqual([
      `Billing: 2 of 2 event(s) neither applied nor dead-lettered yet (order-1, order-2): 1 of them ${ACKNOWLEDGED_WITHOUT_EFFECT}; the rest none on Billing's queue yet (in the relay, the pipe's retries, or SNS's delivery)`,
    ]);
  });
});

describe('review r13, R13-7: an effect that lands after the inbox record (a probe reading a GSI, an effect written after)', () => {
  test('every run event in its inbox, the effect not seen yet: the wait holds a bounded grace, and ends once the effect is seen', async () => {
    const events = [runEvent('order-1'), runEvent('order-2')];
    const flow = await billingFlow(['order-1', 'order-2']);
    const progress: string[] = [];
    const options = settleOptions({}, events, new Map());
    // the ledger entries become visible 12 s (virtual) after the wait began
    const lateEffect: EffectProbe = async ({ events: taken }) => taken.map((event) => ({ subject: `ledger entry of ${event.id}`, eventIds: [event.id], applied: options.now!() >= 12_000 ? 1 : 0 }));

    await expect(waitUntilQuiet(bed.clients(), flow, { ...options, probes: { Billing: lateEffect }, onProgress: (line) => progress.push(line) })).resolves.toBeUndefined();

    // the checks that follow see the effect: the wait did not end at the first look that found every record
    expect(options.now!()).toBeGreaterThanOrEqual(12_000);
    expect(progress[0]).toContain(`2 of them ${ACKNOWLEDGED_WITHOUT_EFFECT}; waiting up to`);
  });

  test('an effect that never lands: past the grace the wait ends before its limit, and the checks name the effect missing', async () => {
    const flow = await billingFlow(['order-1', 'order-2']);
    const options = { ...settleOptions({ Billing: nothingWritten }, [runEvent('order-1'), runEvent('order-2')], new Map()), timeoutSeconds: 600 };
    await expect(waitUntilQuiet(bed.clients(), flow, options)).resolves.toBeUndefined();
    expect(options.now!()).toBeLessThan(600_000);
  });
});
