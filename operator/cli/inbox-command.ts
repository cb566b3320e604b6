/**
 * `idempotent-event-flow inbox forget`: removes one dedup record (an inbox record or a processing record), for the rare
 * case an operator must let an event apply again. Explicit (`--yes`, a reason), conditional (only the record as shown:
 * the delete fails if it changed since) and logged (one JSON audit line on stderr with who, when, why and what).
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../../lambda/transaction/cancellation';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { INBOX_ITEM, PROCESSING_RECORD, RECORD_STATUS, recordKey, SUBSCRIBER_NAME_PATTERN, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { DEDUPLICATION_WINDOW_RECORD, ORDERED_INBOX_ITEM, SEQUENCE_FENCE } from '../../lambda/contract/ordered-wire-format';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { readSubscriberOutput } from './deployed-subscriber';
import { terminalText } from './terminal-text';

const USAGE = `Usage:
  idempotent-event-flow inbox forget <subscriber> <event-id> --table <inbox table> --reason <text>
      [--subscriber-output <json|@file>] [--yes] [--json]

Removes the subscriber's dedup record of one event (its inbox record, or its processing record in lease and
multi-step modes), so that the next delivery of the event applies it again (on the standard path: see below for an
ordered subscriber). Without --yes it only shows the record.
The delete is conditional: it removes the record only as shown (it fails if the record changed since it was read),
and never a processing record that is IN_PROGRESS (a delivery may be running it) or BLOCKED (resolve it with
'blocked resolve' instead); with no record there is nothing to forget (refused, exit code 3). Every removal is logged as one JSON line on stderr (who, when, why, the record).

Only dedup records: <subscriber> must be a subscriber name (A-Z a-z 0-9 _ . -, as the constructs allow), so no key
of another kind can be spelt (an ordered subscriber's fence is '<subscriber>@sequence#<aggregate>': 'fence skip'
moves a fence, nothing deletes one; its deduplication window record is '<subscriber>@window'), and an item under the key that is not an inbox or processing record of that
subscriber and event is refused (exit code 3).

An ordered subscriber (OrderedSubscriber; docs/ORDERED-DELIVERY.md) applies an event once by its sequence fence,
which stays, and no command moves a fence back. Its inbox records are refused (exit code 3): with --subscriber-output
naming an ordered subscriber, and without it for every record the ordered consumer wrote (it names the event's
aggregate and sequence). Forgotten, the record of an event below the fence would not make it apply again: its next
delivery, within the deduplication window, would look like a NEW event under a passed sequence (SequenceReusedError,
dead-lettered), which the redrive plan could only call never applied.

Forgetting a record that was applied makes the next delivery apply the event a second time: use it only when the
effect is known to be gone (e.g. restored from a backup taken before it) and must happen again.

Options:
  --table <name>                     the subscriber's inbox table
  --reason <text>                    why, for the audit line (required)
  --subscriber-output <json|@file>   the subscriber's <subscriber>/Operator stack output: says whether it is ordered
                                     (its subscriberName and inboxTable must agree with the arguments)
  --yes                              remove it (default: show what would be removed)
  --json                             print JSON instead of text
  --region, --endpoint   see idempotent-event-flow --help
`;

const ALLOWED = new Set(['table', 'reason', 'subscriber-output', 'yes', 'json', 'region', 'endpoint', 'sqs-endpoint', 'help']);

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const [action, subscriber, eventId, ...extra] = parsed.positionals;
  if (action !== 'forget') return context.usageError(action === undefined ? 'missing action: forget' : `unknown action '${action}'; expected forget`);
  if (subscriber === undefined || eventId === undefined) return context.usageError("'inbox forget' needs the subscriber and the event id");
  if (extra.length > 0) return context.usageError(`unexpected argument '${extra[0]}'`);
  for (const name of Object.keys(parsed.values)) if (!ALLOWED.has(name)) return context.usageError(`option --${name} does not apply to 'inbox forget'`);
  const table = parsed.values.table;
  const reason = parsed.values.reason;
  if (typeof table !== 'string' || table.trim() === '') return context.usageError("'inbox forget' needs --table");
  if (typeof reason !== 'string' || reason.trim() === '') return context.usageError("'inbox forget' needs --reason (it goes into the audit line)");
  if (!SUBSCRIBER_NAME_PATTERN.test(subscriber)) {
    const fence = subscriber.endsWith(SEQUENCE_FENCE.KEY_SEPARATOR.slice(0, -1));
    const window = subscriber.endsWith(DEDUPLICATION_WINDOW_RECORD.KEY_SUFFIX);
    return context.usageError(
      `'${terminalText(subscriber)}' is not a subscriber name (1 to 64 of A-Z a-z 0-9 _ . -), so '${terminalText(recordKey(subscriber, eventId))}' is not the key of an inbox record` +
        (fence ? ": it is the key of an ordered subscriber's sequence fence, which 'inbox forget' never deletes (deleted, the aggregate would be applied again from its first event); 'fence skip' moves a fence forward" : '') +
        (window ? ": '<subscriber>@window' is an ordered subscriber's deduplication window record, which 'inbox forget' never deletes (deleted, the windows it was raised from are forgotten, and an applied event whose record expired by one of them would look never applied)" : ''),
    );
  }
  let ordered: boolean | undefined;
  if (parsed.values['subscriber-output'] !== undefined) {
    const deployment = readSubscriberOutput(String(parsed.values['subscriber-output']), context.io.cwd ?? process.cwd());
    if (typeof deployment === 'string') return context.usageError(deployment);
    if (deployment.subscriberName !== subscriber) return context.usageError(`the subscriber '${terminalText(subscriber)}' disagrees with --subscriber-output (its subscriberName is '${terminalText(deployment.subscriberName)}')`);
    if (deployment.inboxTable !== undefined && deployment.inboxTable !== table) return context.usageError(`--table ${terminalText(table)} disagrees with --subscriber-output (its inboxTable is ${terminalText(deployment.inboxTable)})`);
    ordered = deployment.ordered === true;
  }
  const documents = toDocumentClient(context.client());
  const key = { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) };
  const read = await documents.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
  const item = read.Item;
  const what = `event '${eventId}' of subscriber '${subscriber}'`;
  if (item === undefined) {
    // nothing to act on is a refusal, not a failure: the command did what it could and says why
    context.io.stderr(`refused: ${what} has no record in table '${table}': nothing to forget (it was never applied, or its record expired)\n`);
    return EXIT_CODE.REFUSED;
  }
  const recordType = item[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE];
  const isDedupRecord =
    (recordType === undefined || recordType === PROCESSING_RECORD.RECORD_TYPE_VALUE) && item[INBOX_ITEM.EVENT_ID_ATTRIBUTE] === eventId && item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE] === subscriber;
  if (!isDedupRecord) {
    context.io.stderr(
      `refused: the item under the key of ${what} is not an inbox record or a processing record of that subscriber and event (record type ${terminalText(String(recordType ?? 'none'))}, ` +
        `event id ${terminalText(String(item[INBOX_ITEM.EVENT_ID_ATTRIBUTE] ?? 'none'))}, subscriber ${terminalText(String(item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE] ?? 'none'))}): nothing forgotten\n`,
    );
    return EXIT_CODE.REFUSED;
  }
  const orderedRecord = typeof item[ORDERED_INBOX_ITEM.AGGREGATE_ATTRIBUTE] === 'string';
  if (ordered === true || orderedRecord) {
    const how = ordered === true ? '(--subscriber-output)' : `(its inbox record names aggregate '${terminalText(String(item[ORDERED_INBOX_ITEM.AGGREGATE_ATTRIBUTE]))}', sequence ${terminalText(String(item[ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE]))})`;
    context.io.stderr(
      `refused: '${terminalText(subscriber)}' is an ordered subscriber ${how}: forgetting the record of event '${terminalText(eventId)}' would not apply it again ` +
        '(its sequence fence stays, and no command moves a fence back); within the deduplication window its next delivery would look like a new event under a passed sequence ' +
        "(SequenceReusedError, dead-lettered, and called never applied by the redrive plan). The record expires on its own (its deduplication window); after that the fence answers a copy as a duplicate. " +
        "To make an aggregate's effects happen again, write new events for them; 'fence show' says where the subscriber stands\n",
    );
    return EXIT_CODE.REFUSED;
  }
  const status = item[PROCESSING_RECORD.STATUS_ATTRIBUTE];
  if (status === RECORD_STATUS.IN_PROGRESS || status === RECORD_STATUS.BLOCKED) {
    context.io.stderr(
      `refused: ${what} has a processing record that is ${String(status)}: ${status === RECORD_STATUS.BLOCKED ? "resolve it with 'blocked resolve'" : 'a delivery may be running it; wait for it to finish or block'}\n`,
    );
    return EXIT_CODE.REFUSED;
  }
  if (parsed.values.yes !== true) {
    context.io.stdout(parsed.values.json === true ? json({ dryRun: true, record: item }) : `dry run: would forget the record of ${what}:\n${JSON.stringify(item, null, 2)}\nrun again with --yes to remove it\n`);
    return EXIT_CODE.OK;
  }
  // only the record as read: every attribute it had (TTL, version, lastWrite) must still hold, or someone changed it
  const names: Record<string, string> = { '#pk': TABLE_SCHEMA.PARTITION_KEY };
  const values: Record<string, unknown> = {};
  const conditions = ['attribute_exists(#pk)'];
  for (const [index, attribute] of [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE, PROCESSING_RECORD.VERSION_ATTRIBUTE, PROCESSING_RECORD.LAST_WRITE_ATTRIBUTE, PROCESSING_RECORD.STATUS_ATTRIBUTE].entries()) {
    names[`#a${index}`] = attribute;
    if (item[attribute] === undefined) conditions.push(`attribute_not_exists(#a${index})`);
    else {
      values[`:v${index}`] = item[attribute];
      conditions.push(`#a${index} = :v${index}`);
    }
  }
  try {
    await documents.send(
      new DeleteCommand({
        TableName: table,
        Key: key,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    context.io.stderr(`refused: the record of ${what} changed since it was read (or is gone); look at it again\n`);
    return EXIT_CODE.REFUSED;
  }
  const audit = { audit: 'inbox-forget', at: context.now().toISOString(), by: context.user, table, subscriber, eventId, reason, record: item };
  context.io.stderr(`${JSON.stringify(audit)}\n`);
  const next =
    ordered === false
      ? 'its next delivery applies it again'
      : 'its next delivery applies it again (the record was not written by an ordered consumer; --subscriber-output says for sure)';
  context.io.stdout(parsed.values.json === true ? json({ forgotten: true, record: item, nextDelivery: next }) : `forgot the record of ${what}: ${next}\n`);
  return EXIT_CODE.OK;
}

/** The `inbox` command. */
export const inboxCommand: Command = {
  name: 'inbox',
  summary: 'forget one dedup record (conditional, logged), so an event may apply again',
  usage: USAGE,
  options: {
    table: { type: 'string' },
    reason: { type: 'string' },
    'subscriber-output': { type: 'string' },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run,
};
