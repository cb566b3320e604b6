import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { main, type CliIo } from '../../simulator/cli/main';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../support/dynamodb-client';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../lambda/helpers';
import { createInboxTable, FakeClock, newMessage, type TestMessage } from '../lambda/processing/fixtures';

const SUBSCRIBER = 'billing';

let tableName: string;
let endpoint: string;

beforeAll(async () => {
  endpoint = inject('dynamoDbEndpoint');
  tableName = uniqueTableName('cli-inbox');
  await createInboxTable(localClient(), tableName);
});

/** Runs the CLI in-process with captured output; the client goes wherever --endpoint says. */
async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const endpoints: Array<string | undefined> = [];
  const regions: Array<string | undefined> = [];
  const io: CliIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    createClient: (options) => {
      endpoints.push(options.endpoint);
      regions.push(options.region);
      return new DynamoDBClient({ region: options.region ?? 'us-east-1', endpoint: options.endpoint ?? 'http://127.0.0.1:9', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    },
    now: new FakeClock(Date.parse('2024-05-02T08:00:00.000Z')).now,
    user: 'alice',
  };
  const code = await main(argv, io);
  return { code, stdout, stderr, endpoints, regions };
}

/** Blocks a message at its second step ('email-invoice'), as a multi-step consumer does on an unknown outcome. */
async function blockedMessage(subscriber = SUBSCRIBER, keepBlockedMessageBody = false): Promise<TestMessage> {
  const message = newMessage();
  const { logger } = recordingLogger();
  const handler = createMultiStepConsumer({
    steps: [
      { name: 'create-invoice', run: () => ({ createdInvoiceId: 'inv-1' }) },
      {
        name: 'email-invoice',
        run: () => {
          throw new Error('SMTP timeout after DATA');
        },
      },
    ],
    client: localClient(),
    config: { subscriberName: subscriber, inboxTableName: tableName, deduplicationWindowSeconds: 3600, leaseDurationSeconds: 60, keepBlockedMessageBody },
    deadLetter: new RecordingDeadLetterPublisher(),
    logger,
    now: new FakeClock().now,
    metricsSink: () => undefined,
  });
  await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-${message.id}` })] });
  return message;
}

describe('idempotent-event-flow blocked', () => {
  test('list prints an aligned table of the blocked messages', async () => {
    const message = await blockedMessage('cli-list');

    const result = await cli('blocked', 'list', '--table', tableName, '--subscriber', 'cli-list', '--endpoint', endpoint);

    expect(result).toMatchObject({ code: 0, stderr: '', endpoints: [endpoint] });
    const [header, row, ...rest] = result.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SUBSCRIBER +EVENT ID +STEP +BLOCKED AT +VERSION +DEAD LETTER UNTIL +REASON$/);
    // its dead letter is gone 14 days after the block at the latest (the SQS maximum retention, assumed without --dead-letter-queue)
    expect(row).toMatch(new RegExp(`^cli-list +${message.id} +email-invoice +2024-05-01T12:00:00.000Z +3 +2024-05-15T12:00:00.000Z +step 'email-invoice' failed with an unknown outcome`));
    expect(header?.indexOf('EVENT ID')).toBe(row?.indexOf(message.id));
    expect(rest).toEqual([]);
  });

  test('list --json prints the blocked messages as JSON; global options may come first', async () => {
    const message = await blockedMessage('cli-list-json');

    // DynamoDB Local keeps tables per region: the tables of these tests are in us-east-1
    const result = await cli('--endpoint', endpoint, '--region', 'us-east-1', 'blocked', 'list', '--table', tableName, '--subscriber', 'cli-list-json', '--json');

    expect(result).toMatchObject({ code: 0, endpoints: [endpoint], regions: ['us-east-1'] });
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({ subscriber: 'cli-list-json', eventId: message.id, step: 'email-invoice', version: 3, mode: 'multi-step' }),
    ]);
  });

  test('list says so when nothing is blocked', async () => {
    const result = await cli('blocked', 'list', '--table', tableName, '--subscriber', 'nobody-blocked', '--endpoint', endpoint);
    expect(result).toMatchObject({ code: 0, stdout: 'no blocked messages\n' });
  });

  test('show prints the record: fields, steps, context and where the body is (not kept by default: the dead-letter queue)', async () => {
    const message = await blockedMessage();

    const result = await cli('blocked', 'show', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id, '--endpoint', endpoint);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('status       BLOCKED');
    expect(result.stdout).toContain(`blocked by   SQS message sqs-${message.id} (iefSourceMessageId of its dead letter)`);
    expect(result.stdout).toContain('"createdInvoiceId": "inv-1"');
    expect(result.stdout).not.toContain(message.body);
    expect(result.stdout).toContain(
      `blocked message body\nnot kept on the record (keepBlockedMessageBody is off): the message is in the subscriber's dead-letter queue, with iefEventId = ${message.id}`,
    );
  });

  test('show prints the record: fields, steps, context and the blocked body, for a subscriber that keeps it', async () => {
    const message = await blockedMessage(SUBSCRIBER, true);

    const result = await cli('blocked', 'show', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id, '--endpoint', endpoint);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`record       ${SUBSCRIBER}#${message.id}`);
    expect(result.stdout).toContain('status       BLOCKED');
    expect(result.stdout).toContain('expires at   - (no TTL while blocked)');
    expect(result.stdout).toMatch(/STEP +STATUS +ATTEMPTS +UPDATED AT\ncreate-invoice +SUCCESS +1 +2024-05-01T12:00:00.000Z\nemail-invoice \* +PROCESSING +1 /);
    expect(result.stdout).toContain('"createdInvoiceId": "inv-1"');
    expect(result.stdout).toContain(`blocked message body\n${message.body}`);
  });

  test('show --json prints the record as JSON', async () => {
    const message = await blockedMessage();

    const result = await cli('blocked', 'show', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id, '--json', '--endpoint', endpoint);

    expect(JSON.parse(result.stdout)).toMatchObject({ eventId: message.id, status: 'BLOCKED', activeStep: 'email-invoice', context: { createdInvoiceId: 'inv-1' } });
  });

  test('show fails with exit code 1 when there is no record', async () => {
    const result = await cli('blocked', 'show', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', 'missing', '--endpoint', endpoint);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`error: event 'missing' of subscriber '${SUBSCRIBER}' has no processing record in table '${tableName}'\n`);
  });

  test('resolve SUCCESS completes the record and says what to do next, with the audit entry by the OS user', async () => {
    const message = await blockedMessage();

    const result = await cli(
      'blocked', 'resolve', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id,
      '--step', 'email-invoice', '--status', 'SUCCESS', '--context', '{"emailId":"smtp-1"}', '--reason', 'mail log shows it was sent',
      '--expected-version', '3', '--endpoint', endpoint,
    );

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      `resolved step 'email-invoice' of event '${message.id}' (subscriber '${SUBSCRIBER}') as SUCCESS: the record is now COMPLETED at version 4.\n` +
        'Redrive the message from the dead-letter queue (or delete it there): its redelivery is acknowledged as a duplicate.\n',
    );
    const shown = JSON.parse((await cli('blocked', 'show', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id, '--json', '--endpoint', endpoint)).stdout);
    expect(shown).toMatchObject({
      status: 'COMPLETED',
      context: { createdInvoiceId: 'inv-1', emailId: 'smtp-1' },
      resolutions: [{ at: '2024-05-02T08:00:00.000Z', by: 'alice', step: 'email-invoice', status: 'SUCCESS', reason: 'mail log shows it was sent' }],
    });
  });

  test('resolve TRY_AGAIN --json leaves the record IN_PROGRESS for the next delivery', async () => {
    const message = await blockedMessage();

    const result = await cli(
      'blocked', 'resolve', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id,
      '--step', 'email-invoice', '--status', 'TRY_AGAIN', '--resolved-by', 'bob', '--json', '--endpoint', endpoint,
    );

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'IN_PROGRESS', steps: { 'email-invoice': { status: 'TRY_AGAIN' } }, resolutions: [{ by: 'bob' }] });
  });

  test('resolve fails with exit code 1 when the message is not blocked', async () => {
    const message = await blockedMessage();
    const args = ['blocked', 'resolve', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id, '--step', 'email-invoice', '--status', 'TRY_AGAIN', '--endpoint', endpoint];
    await cli(...args);

    const again = await cli(...args);

    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toMatch(/^error: ResolveRefusedError: event '.+' of subscriber 'billing' is not blocked \(it is IN_PROGRESS\); only a blocked message can be resolved\n$/);
  });

  test('resolve fails with exit code 1 on a step that is not the blocked one', async () => {
    const message = await blockedMessage();
    const result = await cli('blocked', 'resolve', '--table', tableName, '--subscriber', SUBSCRIBER, '--event-id', message.id, '--step', 'create-invoice', '--status', 'SUCCESS', '--endpoint', endpoint);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/step 'create-invoice' is SUCCESS; the blocked step is 'email-invoice'/);
  });

  test('a missing table fails with exit code 1 and the service error', async () => {
    const result = await cli('blocked', 'list', '--table', 'no-such-table', '--subscriber', SUBSCRIBER, '--endpoint', endpoint);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: ResourceNotFoundException: /);
  });
});

describe('idempotent-event-flow usage', () => {
  test.each([
    [['blocked', 'resolve', '--table', 't', '--subscriber', 's', '--event-id', 'e', '--step', 'x'], /'blocked resolve' needs --status/],
    [['blocked', 'resolve', '--table', 't', '--subscriber', 's', '--event-id', 'e', '--step', 'x', '--status', 'DONE'], /--status must be SUCCESS or TRY_AGAIN, but 'DONE' was given/],
    [['blocked', 'resolve', '--table', 't', '--subscriber', 's', '--event-id', 'e', '--step', 'x', '--status', 'SUCCESS', '--context', '[1]'], /--context must be a JSON object/],
    [['blocked', 'resolve', '--table', 't', '--subscriber', 's', '--event-id', 'e', '--step', 'x', '--status', 'SUCCESS', '--context', '{oops'], /--context must be a JSON object: /],
    [['blocked', 'resolve', '--table', 't', '--subscriber', 's', '--event-id', 'e', '--step', 'x', '--status', 'SUCCESS', '--expected-version', 'v3'], /--expected-version must be a whole number, but 'v3' was given/],
    [['blocked', 'list'], /'blocked list' needs --table/],
    [['blocked', 'list', '--table', 't', '--subscriber', ''], /--subscriber must not be empty/],
    [['blocked', 'resolve', '--table', 't', '--subscriber', 's', '--event-id', 'e', '--step', 'x', '--status', 'SUCCESS', '--resolved-by', ' '], /--resolved-by must not be empty/],
    [['blocked', 'list', '--table', 't', '--step', 'x'], /option --step does not apply to 'blocked list'/],
    [['blocked', 'show', '--table', 't', '--subscriber', 's'], /'blocked show' needs --event-id/],
    [['blocked', 'list', '--table', 't', '--bogus'], /Unknown option '--bogus'/],
    [['blocked', 'purge', '--table', 't'], /unknown action 'purge'; expected list, show, resolve or requeue/],
    [['blocked'], /missing action: list, show, resolve or requeue/],
  ])('%j is a usage error (exit code 2)', async (argv, message) => {
    const result = await cli(...argv);
    expect(result).toMatchObject({ code: 2, stdout: '', endpoints: [] });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('Usage:\n  idempotent-event-flow blocked list');
  });

  test('an unknown command is a usage error that lists the commands', async () => {
    const result = await cli('frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: unknown command 'frobnicate'\n\nUsage: idempotent-event-flow <command> \[options\]\n\nCommands:\n  blocked  /);
  });

  test('no arguments print the program usage to stderr (exit code 2); --help prints it to stdout', async () => {
    expect(await cli()).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('Usage: idempotent-event-flow <command>') });
    expect(await cli('--help')).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining('--endpoint <url>') });
  });

  test('blocked --help prints the command usage', async () => {
    const result = await cli('blocked', 'resolve', '--help');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('--status SUCCESS|TRY_AGAIN');
  });
});
