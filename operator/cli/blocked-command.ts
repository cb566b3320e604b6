/**
 * `idempotent-event-flow blocked list|show|resolve`: the operator's commands for messages blocked in lease and
 * multi-step modes, on top of the `BlockedMessages` API.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { BlockedMessages, stepsRemainAfter, type BlockedMessage } from '../blocked/blocked-messages';
import type { ProcessingRecordView } from '../../lambda/processing/processing-record';
import { truncate } from '../../lambda/processing/blocked-attributes';
import { STEP_STATUS } from '../../lambda/contract/wire-format';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { blockedCopyText, deadLetterExpiresBy, expiryWarning } from './blocked-copy';
import { copyWaitOf, SQS_MAX_RETENTION_SECONDS, type CopyWait } from './dead-letters/copy-wait';
import { terminalText } from './terminal-text';

const USAGE = `Usage:
  idempotent-event-flow blocked list --table <inbox table> [--subscriber <name>] [--limit <n>]
      [--dead-letter-queue <url>] [--json]
  idempotent-event-flow blocked show --table <inbox table> --subscriber <name> --event-id <id>
      [--dead-letter-queue <url>] [--json]
  idempotent-event-flow blocked resolve --table <inbox table> --subscriber <name> --event-id <id> --step <name>
      --status SUCCESS|TRY_AGAIN [--context '<json object>'] [--reason <text>] [--resolved-by <name>]
      [--expected-version <n>] [--queue <subscriber queue url>] [--json]
  idempotent-event-flow blocked requeue --table <inbox table> --subscriber <name> --event-id <id>
      --queue <subscriber queue url> [--json]

Lists, shows and resolves messages that lease and multi-step consumers blocked because a step's outcome is unknown.
Resolve a blocked step as SUCCESS (it took effect: never run it again; --context stores what later steps need) or
TRY_AGAIN (it did not: run it again). Then redrive the message from the subscriber's dead-letter queue
('idempotent-event-flow dlq redrive'); the next delivery resumes where the record says.

A subscriber with keepBlockedMessageBody keeps the message on the record, and that may be its only copy (its
dead-letter send failed, or its dead letter expired): a resolution that leaves a step to run then needs --queue, and
sends the kept message back to the subscriber's queue once the record is resolved (without --queue it is refused,
exit code 3, and nothing changes). The record keeps the body until a delivery completes it; should the send fail,
'blocked requeue' sends it again. A second copy (the dead letter, redriven) is acknowledged as a duplicate.

Unless the record keeps the body, the message's only copy is its dead letter, which SQS deletes once it is as old as
the dead-letter queue's retention (14 days at most), while the record waits: list and show say by when (the block's
time plus the retention, read from --dead-letter-queue, else the SQS maximum), and list warns on stderr 2 days before.

Options:
  --table <name>            the subscriber's inbox table
  --subscriber <name>       the subscriber (list: only its messages)
  --event-id <id>           the event's id
  --step <name>             the blocked step ('effect' in lease mode)
  --status <status>         SUCCESS or TRY_AGAIN
  --context <json>          a JSON object merged into the record's context (SUCCESS: what the step would have returned)
  --reason <text>           why, for the audit entry
  --resolved-by <name>      who, for the audit entry (default: the OS user)
  --expected-version <n>    refuse unless the record is at this version (as listed)
  --queue <url>             the subscriber's queue, where a message kept on the record is sent back
  --limit <n>               list at most n messages (default 100)
  --dead-letter-queue <url> the subscriber's dead-letter queue, whose retention says when a dead letter is deleted
  --json                    print JSON instead of a table
  --region, --endpoint      see idempotent-event-flow --help
`;

type Action = 'list' | 'show' | 'resolve' | 'requeue';

/** Which options each action takes, besides --table, --json and the global ones. */
const ACTION_OPTIONS: Readonly<Record<Action, { readonly required: readonly string[]; readonly optional: readonly string[] }>> = {
  list: { required: [], optional: ['subscriber', 'limit', 'dead-letter-queue'] },
  show: { required: ['subscriber', 'event-id'], optional: ['dead-letter-queue'] },
  resolve: { required: ['subscriber', 'event-id', 'step', 'status'], optional: ['context', 'reason', 'resolved-by', 'expected-version', 'queue'] },
  requeue: { required: ['subscriber', 'event-id', 'queue'], optional: [] },
};

const ALWAYS_ALLOWED = new Set(['table', 'json', 'region', 'endpoint', 'sqs-endpoint', 'help']);

/** Formats rows as an aligned text table with a header line; every cell is {@link terminalText}, one line. */
export function formatTable(headers: readonly string[], textRows: ReadonlyArray<readonly string[]>): string {
  const rows = textRows.map((row) => row.map(terminalText));
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] as number)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

/** `text` on one line, cut to `length` characters. */
function shorten(text: string, length: number): string {
  return truncate(text.replace(/\s+/g, ' '), length);
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function listOutput(messages: readonly BlockedMessage[], retention: CopyWait): string {
  if (messages.length === 0) return 'no blocked messages\n';
  return formatTable(
    ['SUBSCRIBER', 'EVENT ID', 'STEP', 'BLOCKED AT', 'VERSION', 'DEAD LETTER UNTIL', 'REASON'],
    messages.map((message) => [
      message.subscriber,
      message.eventId,
      message.step ?? '-',
      message.blockedAt,
      String(message.version),
      deadLetterExpiresBy(message.blockedAt, retention) ?? '-',
      shorten(message.reason, 100),
    ]),
  );
}

/** The dead-letter queue's retention: read from --dead-letter-queue (a note when it can not be), else the SQS maximum. */
async function deadLetterRetention(parsed: ParsedArguments, context: CommandContext): Promise<CopyWait> {
  const queueUrl = parsed.values['dead-letter-queue'];
  if (typeof queueUrl !== 'string') return { queueUrl: '(not given)', retentionSeconds: SQS_MAX_RETENTION_SECONDS, known: false };
  const { wait, note } = await copyWaitOf(context.sqsClient(), queueUrl);
  if (note !== undefined) context.io.stderr(`note: ${note}\n`);
  return wait;
}

function showOutput(record: ProcessingRecordView, retention: CopyWait): string {
  const time = (epochMilliseconds: number | undefined) => (epochMilliseconds === undefined || epochMilliseconds <= 0 ? '-' : new Date(epochMilliseconds).toISOString());
  const fields: Array<[string, string]> = [
    ['record', record.key],
    ['event', `${record.eventId}${record.eventType === undefined ? '' : ` (${record.eventType})`}`],
    ['subscriber', record.subscriber],
    ['mode', record.mode ?? '-'],
    ['status', record.status],
    ['version', String(record.version)],
    ['active step', record.activeStep ?? '-'],
    ['owner', record.owner ?? '-'],
    ['lease until', time(record.leaseExpiresAtEpochMilliseconds)],
    ['expires at', record.expiresAtEpochSeconds === undefined ? '- (no TTL while blocked)' : time(record.expiresAtEpochSeconds * 1000)],
    ['created at', record.createdAt ?? '-'],
    ['updated at', record.updatedAt ?? '-'],
  ];
  if (record.blocked !== undefined) fields.push(['blocked at', record.blocked.at], ['reason', record.blocked.reason], ['only copy', blockedCopyText(record, retention)]);
  // its dead letter carries the same id as iefSourceMessageId; other copies of the message were acknowledged without one
  if (record.blocked?.sqsMessageId !== undefined) fields.push(['blocked by', `SQS message ${record.blocked.sqsMessageId} (iefSourceMessageId of its dead letter)`]);
  const width = Math.max(...fields.map(([name]) => name.length));
  const sections = [fields.map(([name, value]) => `${name.padEnd(width)}  ${terminalText(value)}`).join('\n') + '\n'];
  sections.push(
    formatTable(
      ['STEP', 'STATUS', 'ATTEMPTS', 'UPDATED AT'],
      record.stepOrder.map((name) => {
        const step = record.steps[name];
        return [name === record.activeStep ? `${name} *` : name, step?.status ?? STEP_STATUS.PENDING, String(step?.attempts ?? 0), step?.updatedAt ?? '-'];
      }),
    ),
  );
  sections.push(`context\n${JSON.stringify(record.context, null, 2)}\n`);
  if (record.resolutions.length > 0) {
    sections.push(
      `resolutions\n${formatTable(
        ['AT', 'BY', 'STEP', 'STATUS', 'REASON'],
        record.resolutions.map((entry) => [entry.at, entry.by, entry.step, entry.status, entry.reason ?? '']),
      )}`,
    );
  }
  if (record.blocked?.body !== undefined) sections.push(`blocked message body\n${terminalText(shorten(record.blocked.body, 2000))}\n`);
  else if (record.blocked !== undefined) {
    sections.push(
      'blocked message body\nnot kept on the record (keepBlockedMessageBody is off): the message is in the subscriber\'s ' +
        `dead-letter queue, with iefEventId = ${terminalText(record.eventId)}\n`,
    );
  }
  return sections.join('\n');
}

function resolveOutput(record: ProcessingRecordView, step: string, status: string, requeued?: { queue: string; messageId: string }): string {
  const next = record.stepOrder.find((name) => record.steps[name]?.status !== STEP_STATUS.SUCCESS);
  const after =
    record.status === 'COMPLETED'
      ? 'Redrive the message from the dead-letter queue (or delete it there): its redelivery is acknowledged as a duplicate.'
      : requeued !== undefined
        ? `sent the message kept on the record to ${requeued.queue} (message id ${requeued.messageId}): its delivery resumes at step '${next ?? step}'. ` +
          'A dead letter of it, if any, is a second copy: its redrive is acknowledged as a duplicate.'
        : `Redrive the message from the dead-letter queue: the next delivery resumes at step '${next ?? step}'.`;
  return `resolved step '${step}' of event '${record.eventId}' (subscriber '${record.subscriber}') as ${status}: the record is now ${record.status} at version ${record.version}.\n${after}\n`;
}

function requireString(parsed: ParsedArguments, name: string): string {
  return parsed.values[name] as string;
}

function positiveInteger(value: string, name: string): number | string {
  const parsed = Number(value);
  return /^\d+$/.test(value) && Number.isSafeInteger(parsed) ? parsed : `--${name} must be a whole number, but '${value}' was given`;
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const [action, ...extra] = parsed.positionals;
  if (action === undefined) return context.usageError('missing action: list, show, resolve or requeue');
  if (action !== 'list' && action !== 'show' && action !== 'resolve' && action !== 'requeue') return context.usageError(`unknown action '${action}'; expected list, show, resolve or requeue`);
  if (extra.length > 0) return context.usageError(`unexpected argument '${extra[0]}'`);
  const allowed = ACTION_OPTIONS[action];
  for (const name of Object.keys(parsed.values)) {
    if (!ALWAYS_ALLOWED.has(name) && !allowed.required.includes(name) && !allowed.optional.includes(name)) {
      return context.usageError(`option --${name} does not apply to 'blocked ${action}'`);
    }
  }
  for (const name of ['table', ...allowed.required]) {
    const value = parsed.values[name];
    if (typeof value !== 'string' || value.trim() === '') return context.usageError(`'blocked ${action}' needs --${name}`);
  }
  for (const [name, value] of Object.entries(parsed.values)) {
    // an empty --subscriber would list nothing (or fail in DynamoDB), an empty --resolved-by would sign the audit entry with nothing
    if (typeof value === 'string' && value.trim() === '') return context.usageError(`--${name} must not be empty`);
  }
  const asJson = parsed.values.json === true;
  // created only once the arguments are known to be valid, so a usage error never touches AWS
  const blockedMessages = () => new BlockedMessages({ client: context.client(), tableName: requireString(parsed, 'table'), now: () => context.now() });

  if (action === 'list') {
    let limit: number | undefined;
    if (typeof parsed.values.limit === 'string') {
      const value = positiveInteger(parsed.values.limit, 'limit');
      if (typeof value === 'string' || value === 0) return context.usageError(typeof value === 'string' ? value : '--limit must be at least 1');
      limit = value;
    }
    const subscriber = parsed.values.subscriber as string | undefined;
    const messages = await blockedMessages().list({ ...(subscriber !== undefined ? { subscriber } : {}), ...(limit !== undefined ? { limit } : {}) });
    const retention = await deadLetterRetention(parsed, context);
    context.io.stdout(asJson ? json(messages.map((message) => ({ ...message, deadLetterExpiresBy: deadLetterExpiresBy(message.blockedAt, retention) }))) : listOutput(messages, retention));
    for (const message of messages) {
      const warning = expiryWarning(message, retention, context.now().getTime());
      // the listing does not say whether the record keeps the body (the index does not project it): read those few
      if (warning !== undefined && (await blockedMessages().get(message.subscriber, message.eventId))?.blocked?.body === undefined) context.io.stderr(`warning: ${warning}\n`);
    }
    return 0;
  }

  const subscriber = requireString(parsed, 'subscriber');
  const eventId = requireString(parsed, 'event-id');
  if (action === 'show') {
    const record = await blockedMessages().get(subscriber, eventId);
    if (record === undefined) return context.fail(`event '${eventId}' of subscriber '${subscriber}' has no processing record in table '${requireString(parsed, 'table')}'`);
    const retention = await deadLetterRetention(parsed, context);
    const expiresBy = record.blocked !== undefined && record.blocked.body === undefined ? deadLetterExpiresBy(record.blocked.at, retention) : undefined;
    context.io.stdout(asJson ? json(expiresBy === undefined ? record : { ...record, deadLetterExpiresBy: expiresBy }) : showOutput(record, retention));
    return 0;
  }

  const queue = parsed.values.queue as string | undefined;
  if (action === 'requeue') {
    const record = await blockedMessages().get(subscriber, eventId);
    const what = `event '${eventId}' of subscriber '${subscriber}'`;
    if (record?.keptMessageBody === undefined || record.status !== 'IN_PROGRESS') {
      context.io.stderr(
        `refused: ${what} ${record === undefined ? 'has no processing record' : `is ${record.status}${record.keptMessageBody === undefined ? ' and keeps no message body' : ''}`}: ` +
          'only a resolved record that keeps its message, with steps left to run, is requeued\n',
      );
      return EXIT_CODE.REFUSED;
    }
    const messageId = await sendKeptBody(context, record.keptMessageBody, requireString(parsed, 'queue'));
    context.io.stdout(asJson ? json({ eventId, subscriber, queue, messageId }) : `sent the message kept on the record of ${what} to ${queue as string} (message id ${messageId ?? '?'})\n`);
    return EXIT_CODE.OK;
  }

  const status = requireString(parsed, 'status');
  if (status !== 'SUCCESS' && status !== 'TRY_AGAIN') return context.usageError(`--status must be SUCCESS or TRY_AGAIN, but '${status}' was given`);
  let stepContext: Record<string, unknown> | undefined;
  if (typeof parsed.values.context === 'string') {
    let value: unknown;
    try {
      value = JSON.parse(parsed.values.context);
    } catch (error) {
      return context.usageError(`--context must be a JSON object: ${(error as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return context.usageError('--context must be a JSON object, e.g. \'{"invoiceId":"inv-1"}\'');
    stepContext = value as Record<string, unknown>;
  }
  let expectedVersion: number | undefined;
  if (typeof parsed.values['expected-version'] === 'string') {
    const value = positiveInteger(parsed.values['expected-version'], 'expected-version');
    if (typeof value === 'string') return context.usageError(value);
    expectedVersion = value;
  }
  const step = requireString(parsed, 'step');
  const before = await blockedMessages().get(subscriber, eventId);
  // the body kept on the record may be the message's only copy: a resolution that leaves a step to run sends it back
  const sendsKeptBody = before?.status === 'BLOCKED' && before.blocked?.body !== undefined && stepsRemainAfter(before, step, status);
  if (sendsKeptBody && queue === undefined) {
    context.io.stderr(
      `refused: event '${eventId}' of subscriber '${subscriber}' keeps the message body on its record, and it may be the message's only copy ` +
        `(${before.blocked?.deadLetterSqsMessageId === undefined ? 'no dead letter of it was recorded' : 'its dead letter may expire before it is redriven'}); ` +
        `resolving it as ${status} leaves a step to run, so the message must go back to the subscriber's queue: pass --queue <the subscriber's queue URL>\n`,
    );
    return EXIT_CODE.REFUSED;
  }
  const record = await blockedMessages().resolve({
    subscriber,
    eventId,
    step,
    status,
    resolvedBy: (parsed.values['resolved-by'] as string | undefined) ?? context.user,
    ...(stepContext !== undefined ? { context: stepContext } : {}),
    ...(typeof parsed.values.reason === 'string' ? { reason: parsed.values.reason } : {}),
    ...(expectedVersion !== undefined ? { expectedVersion } : {}),
  });
  let sent: string | undefined;
  // the copy read before resolving: the record keeps it too, unless keeping it would have exceeded the item limit
  const keptBody = before?.blocked?.body;
  if (sendsKeptBody && keptBody !== undefined && queue !== undefined) {
    try {
      sent = (await sendKeptBody(context, keptBody, queue)) ?? '?';
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      const requeue = `idempotent-event-flow blocked requeue --table ${requireString(parsed, 'table')} --subscriber ${subscriber} --event-id ${eventId} --queue ${queue}`;
      return context.fail(
        `resolved event '${eventId}' of subscriber '${subscriber}', but sending the message kept on its record to ${queue} failed (${why}); ` +
          (record.keptMessageBody !== undefined
            ? `the record keeps it: send it with '${requeue}'`
            : `the record could not keep it (DynamoDB's item limit), so here it is, to send to ${queue} as it is:\n${keptBody}`),
      );
    }
  }
  context.io.stdout(asJson ? json(sent === undefined ? record : { ...record, requeued: { queue, messageId: sent } }) : resolveOutput(record, step, status, sent === undefined ? undefined : { queue: queue as string, messageId: sent }));
  return 0;
}

/** Sends a message body kept on a processing record to the subscriber's queue; resolves with SQS's message id. */
async function sendKeptBody(context: CommandContext, body: string, queue: string): Promise<string | undefined> {
  return (await context.sqsClient().send(new SendMessageCommand({ QueueUrl: queue, MessageBody: body }))).MessageId;
}

/** The `blocked` command. */
export const blockedCommand: Command = {
  name: 'blocked',
  summary: 'list, show and resolve messages blocked for an operator (lease and multi-step modes)',
  usage: USAGE,
  options: {
    table: { type: 'string' },
    subscriber: { type: 'string' },
    'event-id': { type: 'string' },
    step: { type: 'string' },
    status: { type: 'string' },
    context: { type: 'string' },
    reason: { type: 'string' },
    'resolved-by': { type: 'string' },
    'expected-version': { type: 'string' },
    queue: { type: 'string' },
    limit: { type: 'string' },
    'dead-letter-queue': { type: 'string' },
    json: { type: 'boolean' },
  },
  run,
};
