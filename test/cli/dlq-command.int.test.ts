import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { createTable, localClient, uniqueTableName } from '../support/dynamodb-client';
import { envelopeObject, recordingLogger } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { frozenClock } from '../simulator/aws/queue-test-kit';
import { cli, cliAt, countingConsumer, deliverOnce, startOperatorServices, type OperatorServices } from './operator-services';

const SUBSCRIBER = 'billing';
const DAY_MS = 86_400_000;

let tableName: string;
/** The consumer's business table, where its effect (a counter per event) is written. */
let effectsTable: string;
let services: OperatorServices | undefined;

// each test its own tables: they use the same event ids
beforeEach(async () => {
  tableName = uniqueTableName('cli-dlq-inbox');
  await createInboxTable(localClient(), tableName);
  effectsTable = uniqueTableName('cli-dlq-effects');
  await createTable(localClient(), effectsTable, { partitionKey: 'pk' });
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

/** An event that happened `daysAgo` before the services' clock. */
function event(s: OperatorServices, id: string, daysAgo = 0): string {
  return JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(s.clock.now() - daysAgo * DAY_MS).toISOString(), data: { order: id } }));
}

/** The billing subscriber's counting consumer (operator-services.ts), failing permanently for the ids in `poison`. */
function billingConsumer(s: OperatorServices, poison: Set<string> = new Set()) {
  return countingConsumer(s, { subscriber: SUBSCRIBER, inboxTable: tableName, effectsTable }, poison);
}

/** Dead-letters each event (its id, and its age in days) through the billing consumer, as the runtime does a poison message. */
async function deadLettered(s: OperatorServices, ...events: readonly (readonly [id: string, daysAgo?: number])[]): Promise<void> {
  const { handler } = billingConsumer(s, new Set(events.map(([id]) => id)));
  for (const [id, daysAgo] of events) {
    s.queue.send({ body: event(s, id, daysAgo), origin: { via: 'sns' } });
    await deliverOnce(s.queue, handler);
  }
}

/** Receives the message 3 times without deleting it (applied each time it commits, or not): SQS then moves it to the DLQ. */
async function exhaustReceives(s: OperatorServices): Promise<void> {
  for (let receive = 0; receive < 3; receive++) {
    expect(s.queue.receive(10)).toHaveLength(1);
    s.clock.advanceBy(31_000);
  }
  expect(s.queue.receive(10)).toEqual([]); // the 4th receive moves it
}

const dlqArgs = (s: OperatorServices) => ['--dead-letter-queue', s.deadLetterQueue.address.url];
const redriveArgs = (s: OperatorServices, processingMode = 'transactional') => [
  'dlq',
  'redrive',
  ...dlqArgs(s),
  '--queue',
  s.queue.address.url,
  '--subscriber',
  SUBSCRIBER,
  '--processing-mode',
  processingMode,
  '--table',
  tableName,
  '--deduplication-window',
  '30d',
];

describe('idempotent-event-flow dlq, against the simulator\'s SQS and DynamoDB Local', () => {
  test('list counts dead letters by reason per queue, with the oldest age and the event ids; show prints the envelope, every reason attribute and the inbox record', async () => {
    const s = (services = await startOperatorServices('List'));
    const { handler } = billingConsumer(s, new Set(['evt-poison']));
    // a poison event the runtime dead-letters with its reason
    s.queue.send({ body: event(s, 'evt-poison', 2), origin: { via: 'sns' } });
    await deliverOnce(s.queue, handler);
    // an applied event whose acknowledgement kept failing: SQS moved it after maxReceiveCount
    s.queue.send({ body: event(s, 'evt-applied', 1), origin: { via: 'sns' } });
    await handler({ Records: [{ messageId: 'first-delivery', body: event(s, 'evt-applied', 1) }] });
    await exhaustReceives(s);
    // one SNS could not deliver, one batch the relay gave up on
    s.subscriptionDeadLetterQueue.send({ body: event(s, 'evt-undelivered'), origin: { via: 'sns-dead-letter' } });
    s.relayDeadLetterQueue.send({
      body: JSON.stringify({
        requestContext: { condition: 'RetryAttemptsExhausted' },
        DDBStreamBatchInfo: { shardId: 'shard-1', approximateArrivalOfFirstRecord: '2023-11-14T20:00:00.000Z', approximateArrivalOfLastRecord: '2023-11-14T20:00:05.000Z', batchSize: 2 },
      }),
      origin: { via: 'pipe-dead-letter' },
    });

    const list = await cli(
      s,
      'dlq',
      'list',
      ...dlqArgs(s),
      '--subscription-dead-letter-queue',
      s.subscriptionDeadLetterQueue.address.url,
      '--relay-dead-letter-queue',
      s.relayDeadLetterQueue.address.url,
      '--json',
    );

    expect(list).toMatchObject({ code: 0, stderr: '' });
    const summaries = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    expect(summaries[0]).toMatchObject({
      queueKind: 'queue',
      messages: 2,
      byReason: { PermanentError: 1, MaxReceiveCountExceeded: 1 },
      oldestAgeSeconds: 2 * 86_400 + 3 * 31,
      truncated: false,
    });
    expect([...(summaries[0]?.eventIds as string[])].sort()).toEqual(['evt-applied', 'evt-poison']);
    expect(summaries[1]).toMatchObject({ queueKind: 'subscription', messages: 1, byReason: { SnsDeliveryFailed: 1 }, eventIds: ['evt-undelivered'] });
    expect(summaries[2]).toMatchObject({ queueKind: 'relay', messages: 1, byReason: { RetryAttemptsExhausted: 1 }, relayBatches: [expect.objectContaining({ shardId: 'shard-1', batchSize: 2 })] });
    // listing consumed nothing: every message is visible again
    expect(s.deadLetterQueue.counts()).toEqual({ visible: 2, inFlight: 0, total: 2 });

    const text = await cli(s, 'dlq', 'list', '--relay-dead-letter-queue', s.relayDeadLetterQueue.address.url);
    // widened by 5 minutes each side: an event's time is set before its commit, and arrival times are whole seconds
    expect(text.stdout).toContain("replay with 'npx idempotent-event-flow replay --since 2023-11-14T19:55:00.000Z --until 2023-11-14T20:05:05.000Z ...' for each subscriber");

    const show = await cli(s, 'dlq', 'show', 'evt-poison', ...dlqArgs(s), '--table', tableName, '--subscriber', SUBSCRIBER);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/reason +PermanentError/);
    expect(show.stdout).toMatch(/iefErrorMessage +order evt-poison has no customer/);
    expect(show.stdout).toMatch(/iefSubscriber +billing/);
    expect(show.stdout).toContain('"id": "evt-poison"');
    expect(show.stdout).toContain('none: the subscriber has no inbox or processing record of this event');

    const applied = JSON.parse((await cli(s, 'dlq', 'show', 'evt-applied', ...dlqArgs(s), '--table', tableName, '--subscriber', SUBSCRIBER, '--json')).stdout) as Array<Record<string, unknown>>;
    expect(applied[0]).toMatchObject({ reason: 'MaxReceiveCountExceeded', eventId: 'evt-applied', record: expect.objectContaining({ pk: `${SUBSCRIBER}#evt-applied` }) });
  });

  test('show of an offloaded event (claim-check, issue 42) gives its reference, size and SHA-256, and says it does not fetch the data and how to check it', async () => {
    const s = (services = await startOperatorServices('ShowOffloaded'));
    const sha256 = 'a'.repeat(64);
    const dataref = `s3://orders-payloads/event-data/${'b'.repeat(64)}/${sha256}`;
    const { data: _inline, ...withoutData } = envelopeObject({ id: 'evt-large', type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString() });
    // the dead letter the runtime sends for an altered object: the body unchanged, the reason in the attributes
    const attribute = (value: string) => ({ DataType: 'String', StringValue: value });
    s.deadLetterQueue.send({
      body: JSON.stringify({ ...withoutData, dataref, iefdatasha256: sha256, iefdatasize: 6_291_500 }),
      messageAttributes: {
        iefErrorName: attribute('PayloadUnavailableError'),
        iefErrorMessage: attribute(`offloaded data altered after the event was written: its size 6291499 differs from iefdatasize 6291500: event 'evt-large' (OrderPlaced), ${dataref}`),
        iefSubscriber: attribute(SUBSCRIBER),
        iefEventId: attribute('evt-large'),
      },
      origin: { via: 'send-message' },
    });

    const show = await cli(s, 'dlq', 'show', 'evt-large', ...dlqArgs(s));
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/reason +PayloadUnavailableError/);
    expect(show.stdout).toContain(
      `data\noffloaded (claim-check): ${dataref}, 6,291,500 bytes, SHA-256 ${sha256}\n` +
        'not fetched: dlq show reads no S3 unless --fetch is given (it needs only SQS and DynamoDB); to see and check it: ' +
        `aws s3 cp ${dataref} - | sha256sum (the digest must be ${sha256}; a redriven copy is fetched and verified by the subscriber)`,
    );
    const json = JSON.parse((await cli(s, 'dlq', 'show', 'evt-large', ...dlqArgs(s), '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json[0]).toMatchObject({ offloadedData: { dataref, sha256, bytes: 6_291_500, fetched: false } });
  });

  test('show of an offloaded event SQS moved after maxReceiveCount (no reason of its own: the 403 path) explains the likely cause and what to check', async () => {
    const s = (services = await startOperatorServices('ShowOffloadedMoved'));
    const sha256 = 'c'.repeat(64);
    const dataref = `s3://orders-payloads/event-data/${'d'.repeat(64)}/2026-11-29-${sha256}`;
    const { data: _inline, ...withoutData } = envelopeObject({ id: 'evt-denied', type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString() });
    // no ief* attributes: the runtime retried PayloadAccessDeniedError (S3 403) until the queue's redrive moved it
    s.deadLetterQueue.send({ body: JSON.stringify({ ...withoutData, dataref, iefdatasha256: sha256, iefdatasize: 300_000 }), origin: { via: 'send-message' } });
    const show = await cli(s, 'dlq', 'show', 'evt-denied', ...dlqArgs(s));
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/reason +MaxReceiveCountExceeded/);
    expect(show.stdout).toContain(
      'why: SQS moved it after maxReceiveCount receives, so it carries no reason of its own. For an offloaded event the likely cause is ' +
        'its data read: S3 answered 403 (PayloadAccessDeniedError in the subscriber\'s log names the case',
    );
    expect(show.stdout).toContain('check s3:ListBucket on the payload bucket (prefix condition), s3:GetObject on the key and kms:Decrypt on the bucket\'s key for the subscriber\'s role, then redrive');
    const json = JSON.parse((await cli(s, 'dlq', 'show', 'evt-denied', ...dlqArgs(s), '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json[0]).toMatchObject({ reason: 'MaxReceiveCountExceeded', offloadedData: { dataref, likelyCause: expect.stringContaining('PayloadAccessDeniedError') } });
  });

  test('redrive is a dry run by default; with --yes it redrives what is within the deduplication window (nothing applied twice) and refuses the rest (exit 3)', async () => {
    const s = (services = await startOperatorServices('Redrive'));
    const poison = new Set(['evt-poison', 'evt-old']);
    const { handler, applied } = billingConsumer(s, poison);
    for (const [id, daysAgo] of [['evt-poison', 1], ['evt-old', 40]] as const) {
      s.queue.send({ body: event(s, id, daysAgo), origin: { via: 'sns' } });
      await deliverOnce(s.queue, handler);
    }
    s.queue.send({ body: event(s, 'evt-applied', 1), origin: { via: 'sns' } });
    await handler({ Records: [{ messageId: 'first-delivery', body: event(s, 'evt-applied', 1) }] });
    await exhaustReceives(s);
    expect(await applied('evt-applied', 'evt-poison', 'evt-old')).toEqual({ 'evt-applied': 1, 'evt-poison': 0, 'evt-old': 0 });

    const dryRun = await cli(s, ...redriveArgs(s));

    expect(dryRun.code).toBe(3);
    expect(dryRun.stdout).toMatch(/evt-old +PermanentError +refused +its event is 40 days 1 minute old \(from .*\); .* passes the deduplication window of 30 days: .* could apply it twice; --allow-expired redrives it anyway/);
    expect(dryRun.stdout).toContain('dry run: would redrive 2 and refuse 1; run again with --yes to move them');
    expect(s.deadLetterQueue.counts()).toEqual({ visible: 3, inFlight: 0, total: 3 });

    poison.delete('evt-poison'); // the bug is fixed
    const moved = await cli(s, ...redriveArgs(s), '--yes', '--json');

    expect(moved.code).toBe(3);
    const result = JSON.parse(moved.stdout) as { dryRun: boolean; method: string; decisions: Array<{ eventId: string; redrive: boolean }> };
    expect(result).toMatchObject({ dryRun: false, method: 'send-and-delete' });
    expect(Object.fromEntries(result.decisions.map((decision) => [decision.eventId, decision.redrive]))).toEqual({ 'evt-poison': true, 'evt-applied': true, 'evt-old': false });
    expect(s.deadLetterQueue.messages().map((message) => JSON.parse(message.body).id)).toEqual(['evt-old']);
    while ((await deliverOnce(s.queue, handler)) > 0);
    // the fixed event applied once, the one already applied was recognised by the inbox
    expect(await applied('evt-applied', 'evt-poison', 'evt-old')).toEqual({ 'evt-applied': 1, 'evt-poison': 1, 'evt-old': 0 });
    expect(s.deadLetterQueue.counts().total).toBe(1);
  });

  test('redrive refuses a dead letter whose redriven copy could still wait in the queue when the window ends: its age plus the queue\'s retention, with the figures', async () => {
    const s = (services = await startOperatorServices('CopyWait'));
    // the queue keeps a message 4 days (its MessageRetentionPeriod): 27 days + 4 days passes the 30-day window, 25 + 4 (+ 1 hour) does not
    await deadLettered(s, ['evt-25-days', 25], ['evt-27-days', 27]);

    const result = await cli(s, ...redriveArgs(s), '--json');

    expect(result.code).toBe(3);
    const output = JSON.parse(result.stdout) as { destination: unknown; decisions: Array<{ eventId: string; redrive: boolean; refusal?: string }> };
    expect(output.destination).toEqual({ queueUrl: s.queue.address.url, retentionSeconds: 4 * 86_400, known: true });
    const decisions = output.decisions;
    expect(Object.fromEntries(decisions.map((decision) => [decision.eventId, decision.redrive]))).toEqual({ 'evt-25-days': true, 'evt-27-days': false });
    const refusal = decisions.find((decision) => decision.eventId === 'evt-27-days')?.refusal;
    expect(refusal).toMatch(/^its event is 27 days old \(from .*\); a redriven copy can wait up to 4 days in .*CopyWaitQueue before it is consumed \(the queue's MessageRetentionPeriod\), and 27 days \+ 4 days \(\+ 1 hour to spare\) passes the deduplication window of 30 days: /);
    expect(refusal).toContain('could apply it twice; --allow-expired redrives it anyway');
  });

  test('redrive assumes the SQS maximum retention of 14 days when the queue\'s MessageRetentionPeriod can not be read, and says so', async () => {
    const denied = 'User: arn:aws:iam::000000000000:user/operator is not authorized to perform: sqs:getqueueattributes';
    const s = (services = await startOperatorServices('NoRetention', frozenClock(), async ({ action }) => (action === 'GetQueueAttributes' ? denied : undefined)));
    await deadLettered(s, ['evt-10-days', 10], ['evt-16-days', 16]);

    const result = await cli(s, ...redriveArgs(s));

    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/evt-10-days +PermanentError +redrive\n/);
    expect(result.stdout).toMatch(/evt-16-days +PermanentError +refused +its event is 16 days old .*a redriven copy can wait up to 14 days \(assumed: the SQS maximum\) in /);
    expect(result.stderr).toContain(`note: could not read the MessageRetentionPeriod of ${s.queue.address.url} (AccessDenied: ${denied}): assuming the SQS maximum of 14 days`);
  });

  test('redrive at a terminal without --yes shows the plan and asks; no moves nothing, yes moves', async () => {
    const s = (services = await startOperatorServices('Prompt'));
    await deadLettered(s, ['evt-1']);
    const questions: string[] = [];

    const declined = await cliAt(s, { confirm: async (question) => (questions.push(question), false) }, ...redriveArgs(s));
    expect(declined.code).toBe(0);
    expect(declined.stdout).toContain('dry run: would redrive 1');
    expect(questions).toEqual([`Redrive 1 message(s) to ${s.queue.address.url}?`]);
    expect(s.queue.counts().total).toBe(0);

    const accepted = await cliAt(s, { confirm: async () => true }, ...redriveArgs(s));
    expect(accepted.code).toBe(0);
    expect(s.queue.counts().total).toBe(1);
  });

  test('redrive --limit reads and moves at most that many, and says so', async () => {
    const s = (services = await startOperatorServices('Limit'));
    await deadLettered(s, ['evt-1'], ['evt-2']);

    const result = await cli(s, ...redriveArgs(s), '--limit', '1', '--yes');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('read the first 1 message(s) only (--limit): run again for the rest');
    expect([s.queue.counts().total, s.deadLetterQueue.counts().total]).toEqual([1, 1]);
  });

  test('redrive --allow-expired redrives a dead letter past the window with a warning', async () => {
    const s = (services = await startOperatorServices('Expired'));
    await deadLettered(s, ['evt-old', 40]);

    const result = await cli(s, ...redriveArgs(s), '--yes', '--allow-expired');

    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^warning: event 'evt-old': its event is 40 days old .* could apply it twice\n$/);
    expect(s.queue.counts().total).toBe(1);
  });

  test('redrive with nothing refused and no filter sends each dead letter it checked (new message ids, attributes kept), never an SQS message move task', async () => {
    const s = (services = await startOperatorServices('WholeQueue'));
    await deadLettered(s, ['evt-1'], ['evt-2']);
    const deadLetterIds = s.deadLetterQueue.messages().map((message) => message.messageId);
    const requests: string[] = [];

    const result = await cliAt(s, { afterSqsRequest: (name) => void requests.push(name) }, ...redriveArgs(s), '--yes');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`redrove 2 to ${s.queue.address.url}; refused 0`);
    expect(requests).not.toContain('StartMessageMoveTaskCommand');
    const redriven = s.queue.messages();
    expect(redriven.map((message) => JSON.parse(message.body).id).sort()).toEqual(['evt-1', 'evt-2']);
    expect(redriven.filter((message) => deadLetterIds.includes(message.messageId))).toEqual([]);
    expect(redriven.every((message) => message.messageAttributes.iefErrorName?.StringValue === 'PermanentError')).toBe(true);
    expect(s.deadLetterQueue.counts().total).toBe(0);
  });

  test('redrive --reason and --event-id move only the matching dead letters; another subscriber\'s stay', async () => {
    const s = (services = await startOperatorServices('Filters'));
    await deadLettered(s, ['evt-1'], ['evt-2']);
    await s.deadLetterPublisher.publish({ body: event(s, 'evt-shipping'), errorName: 'PermanentError', errorMessage: 'x', subscriber: 'shipping', sourceMessageId: 'm-1', eventId: 'evt-shipping' });

    const byId = await cli(s, ...redriveArgs(s), '--event-id', 'evt-2', '--yes');
    expect(byId.code).toBe(0);
    expect(byId.stdout).toContain('2 dead letter(s) of other subscribers or not matching the filters left where they are');
    expect(s.queue.messages().map((message) => JSON.parse(message.body).id)).toEqual(['evt-2']);

    const byReason = await cli(s, ...redriveArgs(s), '--reason', 'SchemaValidationError', '--yes');
    expect(byReason).toMatchObject({ code: 0 });
    expect(byReason.stdout).toContain('no dead letters match');
    expect(s.deadLetterQueue.messages().map((message) => JSON.parse(message.body).id).sort()).toEqual(['evt-1', 'evt-shipping']);
  });

  test('redrive refuses a blocked message until it is resolved, then its redelivery resumes and completes it', async () => {
    const s = (services = await startOperatorServices('Blocked'));
    let emailFails = true;
    const emails: string[] = [];
    const handler = createMultiStepConsumer({
      steps: [
        {
          name: 'email-invoice',
          run: (envelope) => {
            if (emailFails) throw new Error('SMTP timeout after DATA');
            emails.push(envelope.id);
            return {};
          },
        },
      ],
      client: localClient(),
      config: { subscriberName: SUBSCRIBER, inboxTableName: tableName, deduplicationWindowSeconds: 30 * 86_400, leaseDurationSeconds: 60 },
      deadLetter: s.deadLetterPublisher,
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
      now: () => new Date(s.clock.now()),
    });
    s.queue.send({ body: event(s, 'evt-blocked'), origin: { via: 'sns' } });
    await deliverOnce(s.queue, handler);
    expect(s.deadLetterQueue.messages()[0]?.messageAttributes.iefErrorName?.StringValue).toBe('MessageBlockedError');

    const refused = await cli(s, ...redriveArgs(s, 'multi-step'), '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stdout).toMatch(/evt-blocked +MessageBlockedError +refused +it is still blocked: resolve it first \(idempotent-event-flow blocked resolve\)/);
    const withoutTable = await cli(s, 'dlq', 'redrive', ...dlqArgs(s), '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'multi-step', '--deduplication-window', '30d');
    expect(withoutTable.stdout).toContain('pass --table (the inbox table) so the redrive can check the block was resolved');

    const resolved = await cli(s, 'blocked', 'resolve', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', 'evt-blocked', '--step', 'email-invoice', '--status', 'TRY_AGAIN');
    expect(resolved.code).toBe(0);
    emailFails = false;
    const redriven = await cli(s, ...redriveArgs(s, 'multi-step'), '--yes');
    expect(redriven.code).toBe(0);
    while ((await deliverOnce(s.queue, handler)) > 0);
    expect(emails).toEqual(['evt-blocked']);
  });

  test('redrives a subscription dead-letter queue (what SNS could not deliver) to the queue by send and delete', async () => {
    const s = (services = await startOperatorServices('Subscription'));
    const { handler, applied } = billingConsumer(s);
    s.subscriptionDeadLetterQueue.send({ body: event(s, 'evt-undelivered'), origin: { via: 'sns-dead-letter' } });

    const result = await cli(s, 'dlq', 'redrive', '--subscription-dead-letter-queue', s.subscriptionDeadLetterQueue.address.url, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '30d', '--yes');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('redrove 1 to');
    await deliverOnce(s.queue, handler);
    expect(await applied('evt-undelivered')).toEqual({ 'evt-undelivered': 1 });
  });

  // nu7 finding 6: --subscriber-output alone read only the queue's dead-letter queue, and said 'no dead letters match'
  // while SNS's undelivered messages sat in the subscription dead-letter queue the same output names
  test('redrive --subscriber-output alone reads every dead-letter queue the output names: the queue\'s and the subscription\'s', async () => {
    const s = (services = await startOperatorServices('BothQueues'));
    const { handler, applied } = billingConsumer(s);
    s.subscriptionDeadLetterQueue.send({ body: event(s, 'evt-undelivered'), origin: { via: 'sns-dead-letter' } });
    await deadLettered(s, ['evt-poison']);
    const output = JSON.stringify({
      format: 1,
      subscriberName: SUBSCRIBER,
      processingMode: 'transactional',
      deduplicationWindowSeconds: 30 * 86_400,
      keepBlockedMessageBody: false,
      inboxTable: tableName,
      queueUrl: s.queue.address.url,
      deadLetterQueueUrl: s.deadLetterQueue.address.url,
      subscriptionDeadLetterQueueUrl: s.subscriptionDeadLetterQueue.address.url,
    });

    const dryRun = await cli(s, 'dlq', 'redrive', '--subscriber-output', output);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toContain('evt-undelivered');
    expect(dryRun.stdout).toContain('evt-poison');
    expect(dryRun.stdout).toContain('would redrive 2 and refuse 0');
    expect(dryRun.stdout).toContain(s.subscriptionDeadLetterQueue.address.url);
    expect(dryRun.stdout).toContain(s.deadLetterQueue.address.url);

    const moved = await cli(s, 'dlq', 'redrive', '--subscriber-output', output, '--event-id', 'evt-undelivered', '--yes');
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain('redrove 1 to');
    await deliverOnce(s.queue, handler);
    expect(await applied('evt-undelivered')).toEqual({ 'evt-undelivered': 1 });
  });

  test('a dry run that would move nothing does not ask to run again with --yes', async () => {
    const s = (services = await startOperatorServices('NothingToMove'));
    const result = await cli(s, ...redriveArgs(s));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('no dead letters match');
    expect(result.stdout).not.toContain('--yes');
  });

  test('usage errors (exit 2): a relay dead-letter queue to redrive, a missing deduplication window, --yes with --dry-run', async () => {
    const s = (services = await startOperatorServices('Usage'));
    const relay = await cli(s, 'dlq', 'redrive', '--relay-dead-letter-queue', s.relayDeadLetterQueue.address.url, '--queue', 'q', '--subscriber', SUBSCRIBER, '--deduplication-window', '30d');
    expect(relay.code).toBe(2);
    expect(relay.stderr).toContain("replay them with 'idempotent-event-flow replay'");
    const noWindow = await cli(s, 'dlq', 'redrive', ...dlqArgs(s), '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional');
    expect(noWindow).toMatchObject({ code: 2, stderr: expect.stringContaining("'dlq redrive' needs --deduplication-window for a subscriber in transactional mode (or --subscriber-output)") });
    const noMode = await cli(s, 'dlq', 'redrive', ...dlqArgs(s), '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--deduplication-window', '30d');
    expect(noMode).toMatchObject({ code: 2, stderr: expect.stringContaining("'dlq redrive' needs --subscriber-output (the subscriber's Operator stack output), or --processing-mode") });
    const badWindow = await cli(s, ...redriveArgs(s).slice(0, -1), '30 days');
    expect(badWindow.stderr).toContain("--deduplication-window must be a positive duration such as 30d, 12h, 90m or 3600s, but '30 days' was given");
    const both = await cli(s, ...redriveArgs(s), '--yes', '--dry-run');
    expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('--yes and --dry-run contradict each other') });
  });
});
