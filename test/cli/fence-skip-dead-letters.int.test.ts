/**
 * `fence skip` reads the subscriber's FIFO dead-letter queue before it moves a fence: an event of a skipped sequence
 * that sits there (or is in flight there) is not lost, and skipped, the aggregate would apply its later events while
 * the letter could only be dropped or applied out of sequence. Refused unless every letter was read and none is of a
 * skipped sequence; `--drop-dead-letters` passes the letters read, named. DynamoDB Local, the simulator's FIFO SQS
 * behind its endpoint, the real CLI and @aws-sdk/client-sqs.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { expect, test } from 'vitest';
import { cli } from './operator-services';
import { clock, endpoint, sqs } from './ordered-dlq-kit';
import { deadLetter, fenceAt, fifoQueues, firstApplied, inboxConfig, outbox, output, skip, SUBSCRIBER, useFenceSkipWorld } from './fence-skip-kit';

useFenceSkipWorld();

test('refused while the dead-letter queue holds the event of a skipped sequence; --drop-dead-letters passes it, named, and leaves the letter', async () => {
  const id = `acct-dl-${Date.now()}`;
  const { queue, dlq } = fifoQueues();
  const events = await firstApplied(id, ['opened', 'credited', 'debited', 'closed']);
  deadLetter(dlq, events[1]!);
  // another aggregate's letter at a skipped sequence, and this one's past --to: neither stops the skip
  const other = await firstApplied(`${id}-other`, ['opened', 'credited']);
  deadLetter(dlq, other[1]!);
  const subscriberOutput = output(queue, dlq);

  for (const more of [[], ['--yes']]) {
    const refused = await skip(id, subscriberOutput, 3, ...more);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`the dead-letter queue holds the event of sequence 2 of ${id} (${events[1]!.id}, message`);
    expect(refused.stderr).toContain("'fence redrive --yes'");
    expect(refused.stderr).toContain('--drop-dead-letters');
  }
  expect(await fenceAt(id)).toBe(1);
  // the read consumed nothing
  expect(dlq.counts()).toMatchObject({ visible: 2, inFlight: 0 });

  const dropped = await skip(id, subscriberOutput, 3, '--drop-dead-letters', '--yes', '--json');
  expect(dropped.code).toBe(0);
  expect(JSON.parse(dropped.stdout)).toMatchObject({ skipped: true, deadLettersDropped: [{ sequence: 2, eventId: events[1]!.id }] });
  expect(await fenceAt(id)).toBe(3);
  expect(dlq.counts()).toMatchObject({ visible: 2, inFlight: 0 });
});

test('accepted when no letter of the aggregate is at a skipped sequence (only later ones, and other aggregates)', async () => {
  const id = `acct-later-${Date.now()}`;
  const { queue, dlq } = fifoQueues();
  const events = await firstApplied(id, ['opened', 'credited', 'debited']);
  deadLetter(dlq, events[2]!);
  const done = await skip(id, output(queue, dlq), 2, '--yes', '--json');
  expect(done.code).toBe(0);
  expect(await fenceAt(id)).toBe(2);
  expect(dlq.counts()).toMatchObject({ visible: 1, inFlight: 0 });
});

test('refused for a letter at any skipped sequence, not only the one after the fence', async () => {
  const id = `acct-third-${Date.now()}`;
  const { queue, dlq } = fifoQueues();
  const events = await firstApplied(id, ['opened', 'credited', 'debited', 'closed']);
  deadLetter(dlq, events[2]!);
  const refused = await skip(id, output(queue, dlq), 3, '--yes');
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain(`the dead-letter queue holds the event of sequence 3 of ${id} (${events[2]!.id}, message`);
  expect(await fenceAt(id)).toBe(1);
});

test('refused while letters were not read: hidden behind ten of their group, or in flight (read by another command now), even with --drop-dead-letters', async () => {
  const id = `acct-hidden-${Date.now()}`;
  const { queue, dlq } = fifoQueues();
  const events = await firstApplied(id, ['opened', 'credited', 'debited']);
  // ten copies of the applied #1 in front of #2: one read returns the ten, #2 is not read
  for (let copy = 0; copy < 10; copy++) deadLetter(dlq, events[0]!);
  deadLetter(dlq, events[1]!);
  for (const more of [[], ['--drop-dead-letters']]) {
    const refused = await skip(id, output(queue, dlq), 2, '--yes', ...more);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('1 letter(s) of the dead-letter queue not read');
    expect(refused.stderr).toContain("'fence redrive --yes'");
  }
  expect(await fenceAt(id)).toBe(1);

  const inFlight = `acct-flight-${Date.now()}`;
  const held = fifoQueues();
  const flightEvents = await firstApplied(inFlight, ['opened', 'credited', 'debited']);
  deadLetter(held.dlq, flightEvents[1]!);
  // another reader holds the letter (a redrive running, a console's poll)
  const taken = await sqs.send(new ReceiveMessageCommand({ QueueUrl: held.dlq.address.url, MaxNumberOfMessages: 10, VisibilityTimeout: 600 }));
  expect(taken.Messages).toHaveLength(1);
  const refused = await skip(inFlight, output(held.queue, held.dlq), 2, '--yes', '--drop-dead-letters');
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain('1 letter(s) of the dead-letter queue not read');
  expect(await fenceAt(inFlight)).toBe(1);
});

test('needs the dead-letter queue: --dead-letter-queue or --subscriber-output', async () => {
  const id = `acct-none-${Date.now()}`;
  await firstApplied(id, ['opened', 'credited']);
  const result = await cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, id, '--table', inboxConfig.inboxTableName, '--outbox-table', outbox.outboxTableName, '--from', '1', '--to', '2', '--reason', 'lost', '--yes');
  expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining("'fence skip' needs --dead-letter-queue") });
  expect(await fenceAt(id)).toBe(1);
});
