import { StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { deadLetterView } from '../../operator/cli/dead-letters/dead-letter-view';
import { decideRedrive } from '../../operator/cli/dead-letters/redrive-decision';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { PermanentError } from '../../lambda/errors';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { envelopeObject, recordingLogger } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { cli, deliverOnce, startOperatorServices, type OperatorServices } from './operator-services';

const SUBSCRIBER = 'billing';

let tableName: string;
let services: OperatorServices | undefined;

beforeEach(async () => {
  tableName = uniqueTableName('cli-dlq-reason');
  await createInboxTable(localClient(), tableName);
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

/** The runtime dead-letters `id` with PermanentError ("order <id> has no customer"). */
async function deadLetteredAsPermanent(s: OperatorServices, id: string): Promise<void> {
  const handler = createTransactionalConsumer({
    client: localClient(),
    config: { subscriberName: SUBSCRIBER, inboxTableName: tableName, deduplicationWindowSeconds: 30 * 86_400 },
    deadLetter: s.deadLetterPublisher,
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    now: () => new Date(s.clock.now()),
    handle: (envelope) => {
      throw new PermanentError(`order ${envelope.id} has no customer`);
    },
  });
  s.queue.send({ body: JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString(), data: {} })), origin: { via: 'sns' } });
  await deliverOnce(s.queue, handler);
  expect(s.deadLetterQueue.messages().map((message) => message.messageAttributes.iefErrorName?.StringValue)).toEqual(['PermanentError']);
}

/** The redriven message now fails for another reason (a timeout, say) on every receive: SQS moves it after its 3 receives. */
function failsUntilSqsMovesIt(s: OperatorServices): void {
  for (let receive = 0; receive < 3; receive++) {
    expect(s.queue.receive(10)).toHaveLength(1);
    s.clock.advanceBy(31_000);
  }
  expect(s.queue.receive(10)).toEqual([]);
  expect(s.deadLetterQueue.counts().total).toBe(1);
}

const dlqArgs = (s: OperatorServices) => ['--dead-letter-queue', s.deadLetterQueue.address.url];
const redriveArgs = (s: OperatorServices) => ['dlq', 'redrive', ...dlqArgs(s), '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '30d'];

/** What list, show and --reason say of the dead letter SQS moved after a redrive. */
async function expectCurrentReason(s: OperatorServices): Promise<void> {
  const list = JSON.parse((await cli(s, 'dlq', 'list', ...dlqArgs(s), '--json')).stdout) as Array<{ byReason: Record<string, number> }>;
  expect(list[0]?.byReason).toEqual({ MaxReceiveCountExceeded: 1 });

  const show = JSON.parse((await cli(s, 'dlq', 'show', 'evt-1', ...dlqArgs(s), '--json')).stdout) as Array<Record<string, unknown>>;
  expect(show[0]).toMatchObject({ reason: 'MaxReceiveCountExceeded', previousReason: 'PermanentError', previousErrorMessage: 'order evt-1 has no customer' });
  expect(show[0]).not.toHaveProperty('errorMessage');
  const text = await cli(s, 'dlq', 'show', 'evt-1', ...dlqArgs(s));
  expect(text.stdout).toMatch(/reason +MaxReceiveCountExceeded\n/);
  expect(text.stdout).toMatch(/previous reason +PermanentError: order evt-1 has no customer \(before an earlier redrive\)\n/);

  const byOldReason = await cli(s, ...redriveArgs(s), '--reason', 'PermanentError', '--yes');
  expect(byOldReason.stdout).toContain('no dead letters match');
  expect(s.deadLetterQueue.counts().total).toBe(1);
}

describe('a redriven dead letter that SQS moves again after maxReceiveCount', () => {
  test('redriven by send and delete: list, show and --reason say MaxReceiveCountExceeded, with the old reason as the previous one', async () => {
    const s = (services = await startOperatorServices('ReasonOwnLoop'));
    await deadLetteredAsPermanent(s, 'evt-1');
    // a filter makes the redrive send and delete, one message at a time
    expect((await cli(s, ...redriveArgs(s), '--event-id', 'evt-1', '--yes')).code).toBe(0);
    expect(s.queue.counts().total).toBe(1);

    failsUntilSqsMovesIt(s);

    await expectCurrentReason(s);
  });

  test('redriven by a message move task (the SQS console\'s "Start DLQ redrive"; it keeps every attribute): the same', async () => {
    const s = (services = await startOperatorServices('ReasonMoveTask'));
    await deadLetteredAsPermanent(s, 'evt-1');
    await s.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: s.deadLetterQueue.address.arn, DestinationArn: s.queue.address.arn }));
    s.clock.advanceBy(1000);
    expect(s.queue.messages().map((message) => message.messageAttributes.iefErrorName?.StringValue)).toEqual(['PermanentError']);

    failsUntilSqsMovesIt(s);

    await expectCurrentReason(s);
  });

  test('a dead letter the runtime sent keeps its own reason (it has no DeadLetterQueueSourceArn)', async () => {
    const s = (services = await startOperatorServices('ReasonOwn'));
    await deadLetteredAsPermanent(s, 'evt-1');

    const show = JSON.parse((await cli(s, 'dlq', 'show', 'evt-1', ...dlqArgs(s), '--json')).stdout) as Array<Record<string, unknown>>;

    expect(show[0]).toMatchObject({ reason: 'PermanentError', errorMessage: 'order evt-1 has no customer' });
    expect(show[0]).not.toHaveProperty('previousReason');
  });
});

test('a message once blocked that SQS moved after a redrive still gets its record checked: refused while the record is BLOCKED', () => {
  const now = Date.parse('2024-06-01T00:00:00.000Z');
  const view = deadLetterView(
    {
      queueUrl: 'http://dlq',
      messageId: 'm-1',
      receiptHandle: 'h',
      body: JSON.stringify(envelopeObject({ id: 'evt-1', type: 'OrderPlaced', time: new Date(now).toISOString(), data: {} })),
      attributes: { SentTimestamp: String(now), DeadLetterQueueSourceArn: 'arn:aws:sqs:us-east-1:000000000000:Queue' },
      messageAttributes: { iefErrorName: { DataType: 'String', StringValue: 'MessageBlockedError' } },
    },
    'queue',
  );
  expect(view).toMatchObject({ reason: 'MaxReceiveCountExceeded', previousReason: 'MessageBlockedError' });
  const rules = {
    deduplicationWindowSeconds: 30 * 86_400,
    safetyMarginSeconds: 3600,
    nowEpochMilliseconds: now,
    allowExpired: false,
    destination: { queueUrl: 'http://queue', retentionSeconds: 4 * 86_400, known: true },
  };
  expect(decideRedrive(view, { kind: 'found', item: { status: 'BLOCKED' } }, rules)).toMatchObject({ redrive: false, refusal: expect.stringContaining('it is still blocked') });
  expect(decideRedrive(view, { kind: 'not-looked-up' }, rules)).toMatchObject({ redrive: false, refusal: expect.stringContaining('pass --table') });
});
