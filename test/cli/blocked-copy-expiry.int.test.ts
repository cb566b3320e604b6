/**
 * A blocked message whose only copy is its dead letter: the dead-letter queue's retention ends that copy while the
 * record waits for an operator indefinitely (issue 28, finding 9). The simulator's queue keeps a message its
 * MessageRetentionPeriod (14 days here) on the virtual clock. `blocked list` and `blocked show` say by when the copy
 * is gone, and warn when that is near or past; with `keepBlockedMessageBody` the record keeps the message, and no
 * warning is given.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { envelopeObject } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { blockingConsumer, cli, deliverOnce, startOperatorServices, type OperatorServices } from './operator-services';

const SUBSCRIBER = 'billing';
const DAY_MS = 86_400_000;

let inboxTable: string;
let services: OperatorServices | undefined;

beforeEach(async () => {
  inboxTable = uniqueTableName('cli-copy-expiry');
  await createInboxTable(localClient(), inboxTable);
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

/** Blocks `id` at its one step (an unknown outcome); the runtime sends its dead letter. Returns when it was blocked. */
async function blocked(s: OperatorServices, id: string, keepBlockedMessageBody: boolean): Promise<number> {
  const handler = blockingConsumer(s, { subscriberName: SUBSCRIBER, inboxTableName: inboxTable, keepBlockedMessageBody });
  s.queue.send({ body: JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString() })), origin: { via: 'sns' } });
  const at = s.clock.now();
  await deliverOnce(s.queue, handler);
  expect(s.deadLetterQueue.counts().total).toBeGreaterThan(0);
  return at;
}

const blockedArgs = (s: OperatorServices, action: string) => ['blocked', action, '--table', inboxTable, '--subscriber', SUBSCRIBER, '--dead-letter-queue', s.deadLetterQueue.address.url];

describe('blocked: when a blocked message\'s only copy, its dead letter, expires', () => {
  test('show and list say by when the dead letter is gone; list warns when that is 2 days away or past; the copy does expire while the record stays BLOCKED', async () => {
    const s = (services = await startOperatorServices('CopyExpiry'));
    const blockedAt = await blocked(s, 'evt-1', false);
    const expiresBy = new Date(blockedAt + 14 * DAY_MS).toISOString();

    const show = await cli(s, ...blockedArgs(s, 'show'), '--event-id', 'evt-1');
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`only copy +the dead letter in the subscriber's dead-letter queue, deleted by SQS by ${expiresBy} at the latest \\(its MessageRetentionPeriod of 14 days\\)`));
    const listJson = JSON.parse((await cli(s, ...blockedArgs(s, 'list'), '--json')).stdout) as Array<Record<string, unknown>>;
    expect(listJson[0]).toMatchObject({ eventId: 'evt-1', deadLetterExpiresBy: expiresBy });
    const early = await cli(s, ...blockedArgs(s, 'list'));
    expect(early.stdout).toMatch(new RegExp(`evt-1 .* ${expiresBy.replace(/\./g, '\\.')}`));
    expect(early.stderr).toBe('');

    s.clock.advanceBy(12 * DAY_MS + 3_600_000);
    const near = await cli(s, ...blockedArgs(s, 'list'));
    expect(near.stderr).toContain(
      `warning: event 'evt-1' of subscriber '${SUBSCRIBER}': its dead letter, the message's only copy, is deleted by SQS by ${expiresBy} at the latest (in 1 day 23 hours): ` +
        'resolve the record and redrive it before then',
    );

    s.clock.advanceBy(2 * DAY_MS);
    expect(s.deadLetterQueue.counts().total).toBe(0); // SQS's retention ended the only copy
    const past = await cli(s, ...blockedArgs(s, 'list'));
    expect(past.stdout).toContain('evt-1');
    expect(past.stderr).toContain(`warning: event 'evt-1' of subscriber '${SUBSCRIBER}': its dead letter, the message's only copy, was deleted by SQS by ${expiresBy} at the latest`);
  });

  test('with keepBlockedMessageBody the record keeps the message: no warning, and after the dead letter expired, resolve sends the kept body back', async () => {
    const s = (services = await startOperatorServices('CopyKept'));
    await blocked(s, 'evt-1', true);

    const show = await cli(s, ...blockedArgs(s, 'show'), '--event-id', 'evt-1');
    expect(show.stdout).toMatch(/only copy +kept on the record \(keepBlockedMessageBody\): it does not expire while the record is blocked/);

    s.clock.advanceBy(15 * DAY_MS);
    expect(s.deadLetterQueue.counts().total).toBe(0);
    const list = await cli(s, ...blockedArgs(s, 'list'));
    expect(list.stderr).toBe('');
    const resolved = await cli(s, 'blocked', 'resolve', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', 'evt-1', '--step', 'email-invoice', '--status', 'TRY_AGAIN', '--queue', s.queue.address.url);
    expect(resolved.code).toBe(0);
    expect(s.queue.messages().map((message) => JSON.parse(message.body).id)).toEqual(['evt-1']);
  });

  test('without --dead-letter-queue the SQS maximum of 14 days is assumed, and said', async () => {
    const s = (services = await startOperatorServices('CopyAssumed'));
    const blockedAt = await blocked(s, 'evt-1', false);

    const show = await cli(s, 'blocked', 'show', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', 'evt-1');

    expect(show.stdout).toContain(`deleted by SQS by ${new Date(blockedAt + 14 * DAY_MS).toISOString()} at the latest (assumed: the SQS maximum retention of 14 days; pass --dead-letter-queue to read it)`);
  });
});
