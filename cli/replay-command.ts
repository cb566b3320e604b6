/**
 * `idempotent-event-flow replay`: sends committed events from the outbox to ONE subscriber's queue, with their original
 * ids, so the subscriber's inbox drops what it already applied (a replay twice applies once). For events the relay gave
 * up on (its dead letters hold stream batch metadata, not the events) and for a subscriber added later that needs
 * history within the outbox's retention.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { toDocumentClient } from '../lambda/transaction/document-client';
import { TABLE_SCHEMA } from '../lambda/wire-format';
import { listOption, parseDurationSeconds, parseTime } from './arguments';
import { formatTable } from './blocked-command';
import { copyWaitOf } from './dead-letters/copy-wait';
import { DEFAULT_SAFETY_MARGIN_SECONDS, windowRefusal } from './dead-letters/redrive-decision';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './main';
import { earliestApplication, outboxEventsById, outboxEventsInRange, type OutboxEvent } from './outbox-events';

const USAGE = `Usage:
  idempotent-event-flow replay --table <outbox table> --queue <subscriber queue url> --subscriber <name>
      --deduplication-window <duration> (--event-id <id>... | --since <time> [--until <time>] [--type <type>]...)
      [--partition-key <name>] [--sort-key <name> | --no-sort-key] [--allow-expired] [--yes] [--json]

Reads committed events from the outbox table and sends each, exactly as the relay publishes it (the same body, the
same event id), to one subscriber's queue. The subscriber's inbox drops an event it already applied, so a replay
applies only what is missing, and replaying twice applies once. A dry run unless --yes is given (at a terminal it
asks).

When to use it: the relay gave up on a batch (its dead-letter queue holds stream batch metadata; 'dlq list' shows
their time range), or a subscriber added later needs the events it missed. The outbox keeps events for its retention
(eventRetention, 7 days by default), then its TTL removes them: older events can not be replayed.

Refused (exit code 3): an event whose copy could be consumed after the subscriber's deduplication window ends: its
age (from its time, or from when its outbox item was written if that is earlier: a producer's date never makes an
event look younger than its item) plus how long the copy can wait in --queue (the queue's MessageRetentionPeriod; 14 days, the SQS maximum, when it
can not be read) plus an hour to spare reaches the window, as its inbox record of an earlier application may then be
gone (--allow-expired sends it with a warning). The replay sends what a
subscription's filter policy would not: pass --type for the types the subscriber takes.

Options:
  --table <name>                     the outbox table
  --queue <url>                      the subscriber's queue
  --subscriber <name>                the subscriber (for the output)
  --deduplication-window <duration>  the subscriber's deduplicationWindow, e.g. 30d
  --event-id <id>                    replay this event (repeatable)
  --since <time>, --until <time>     replay events whose time is in [since, until) (ISO-8601; until: now)
  --type <type>                      only events of this type (repeatable)
  --partition-key <name>             the outbox table's partition key (default pk, as OutboxTable)
  --sort-key <name>                  its sort key (default sk, as OutboxTable)
  --no-sort-key                      the table has no sort key (an outbox table of your own)
  --allow-expired                    send events past the deduplication window, with a warning
  --yes                              send them (default: a dry run)
  --json                             print JSON instead of text
  --region, --endpoint, --sqs-endpoint   see idempotent-event-flow --help
`;

const ALLOWED = new Set([
  'table', 'queue', 'subscriber', 'deduplication-window', 'event-id', 'since', 'until', 'type', 'partition-key', 'sort-key', 'no-sort-key', 'allow-expired', 'yes', 'json',
  'region', 'endpoint', 'sqs-endpoint', 'help',
]);

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const values = parsed.values;
  if (parsed.positionals.length > 0) return context.usageError(`unexpected argument '${parsed.positionals[0]}'`);
  for (const name of Object.keys(values)) if (!ALLOWED.has(name)) return context.usageError(`option --${name} does not apply to 'replay'`);
  for (const name of ['table', 'queue', 'subscriber', 'deduplication-window']) {
    if (typeof values[name] !== 'string' || (values[name] as string).trim() === '') return context.usageError(`'replay' needs --${name}`);
  }
  const window = parseDurationSeconds(values['deduplication-window'] as string, 'deduplication-window');
  if (typeof window === 'string') return context.usageError(window);
  const eventIds = listOption(values, 'event-id');
  const types = listOption(values, 'type');
  const since = typeof values.since === 'string' ? parseTime(values.since, 'since') : undefined;
  const until = typeof values.until === 'string' ? parseTime(values.until, 'until') : undefined;
  if (typeof since === 'string') return context.usageError(since);
  if (typeof until === 'string') return context.usageError(until);
  if (values['no-sort-key'] === true && typeof values['sort-key'] === 'string') return context.usageError('--sort-key and --no-sort-key contradict each other');
  if ((eventIds.length > 0) === (since !== undefined)) return context.usageError("'replay' needs either --event-id or --since, not both");
  if (eventIds.length > 0 && (until !== undefined || types.length > 0)) return context.usageError('--until and --type go with --since');
  const now = context.now().getTime();
  const location = {
    client: toDocumentClient(context.client()),
    tableName: values.table as string,
    ...(typeof values['partition-key'] === 'string' ? { partitionKeyName: values['partition-key'] } : {}),
    ...(values['no-sort-key'] === true ? {} : { sortKeyName: typeof values['sort-key'] === 'string' ? values['sort-key'] : TABLE_SCHEMA.SORT_KEY }),
  };
  let events: OutboxEvent[];
  let missing: string[] = [];
  if (since !== undefined) {
    events = await outboxEventsInRange(location, { sinceEpochMs: since, untilEpochMs: until ?? now, types });
  } else {
    ({ events, missing } = await outboxEventsById(location, eventIds));
  }
  const { wait: destination, note } = await copyWaitOf(context.sqsClient(), values.queue as string);
  if (note !== undefined) context.io.stderr(`note: ${note}\n`);
  const rules = { deduplicationWindowSeconds: window, safetyMarginSeconds: DEFAULT_SAFETY_MARGIN_SECONDS, nowEpochMilliseconds: now, destination };
  const decisions = events.map((event) => {
    const earliest = earliestApplication(event, now);
    const why = 'unknown' in earliest ? earliest.unknown : windowRefusal(earliest.epochMilliseconds, rules, 'replayed', earliest.what === 'its time' ? undefined : earliest.what);
    return { event, send: why === undefined || values['allow-expired'] === true, ...(why !== undefined ? { why } : {}) };
  });
  let send = values.yes === true;
  const sendable = decisions.filter((item) => item.send).length;
  if (!send && sendable > 0 && values.json !== true && context.io.confirm !== undefined) {
    send = await context.io.confirm(`Send ${sendable} event(s) to ${values.queue as string} for subscriber '${values.subscriber as string}'?`);
  }
  const sent: Array<{ eventId: string; messageId?: string }> = [];
  if (send) {
    for (const decision of decisions.filter((item) => item.send)) {
      const response = await context.sqsClient().send(new SendMessageCommand({ QueueUrl: values.queue as string, MessageBody: decision.event.body }));
      sent.push({ eventId: decision.event.envelope.id, ...(response.MessageId !== undefined ? { messageId: response.MessageId } : {}) });
      if (decision.why !== undefined) context.io.stderr(`warning: event '${decision.event.envelope.id}': ${decision.why}\n`);
    }
  }
  const refused = decisions.filter((item) => !item.send).length;
  if (values.json === true) {
    context.io.stdout(
      `${JSON.stringify(
        {
          dryRun: !send,
          subscriber: values.subscriber,
          destination,
          events: decisions.map((item) => ({ eventId: item.event.envelope.id, type: item.event.envelope.type, time: item.event.envelope.time, send: item.send, ...(item.why !== undefined ? { why: item.why } : {}) })),
          missing,
          ...(send ? { sent } : {}),
        },
        null,
        2,
      )}\n`,
    );
  } else {
    const rows = decisions.map((item) => [item.event.envelope.id, item.event.envelope.type, item.event.envelope.time ?? '-', item.send ? (item.why === undefined ? 'replay' : 'replay (warning)') : 'refused', item.why ?? '']);
    const table = rows.length === 0 ? 'no events match\n' : formatTable(['EVENT ID', 'TYPE', 'TIME', 'DECISION', 'WHY'], rows);
    const missingLine = missing.length === 0 ? '' : `not in the outbox (never written, or past its retention): ${missing.join(' ')}\n`;
    const outcome = send
      ? `sent ${sent.length} to ${values.queue as string} for subscriber '${values.subscriber as string}'; refused ${refused}`
      : `dry run: would send ${decisions.length - refused} and refuse ${refused}; run again with --yes to send them`;
    context.io.stdout(`${table}${missingLine}${outcome}\n`);
  }
  return refused > 0 || missing.length > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
}

/** The `replay` command. */
export const replayCommand: Command = {
  name: 'replay',
  summary: "send committed events from the outbox to one subscriber's queue, with their original ids",
  usage: USAGE,
  options: {
    table: { type: 'string' },
    queue: { type: 'string' },
    subscriber: { type: 'string' },
    'deduplication-window': { type: 'string' },
    'event-id': { type: 'string', multiple: true },
    since: { type: 'string' },
    until: { type: 'string' },
    type: { type: 'string', multiple: true },
    'partition-key': { type: 'string' },
    'sort-key': { type: 'string' },
    'no-sort-key': { type: 'boolean' },
    'allow-expired': { type: 'boolean' },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run,
};
