/**
 * `idempotent-event-flow dlq list|show|redrive`: the dead letters of a flow, by reason, and their safe redrive.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { listOption, parsePositiveInteger } from './arguments';
import { formatTable } from './blocked-command';
import { DEAD_LETTER_REASON, deadLetterView, earliestApplicationEpochMilliseconds, type DeadLetterQueueKind, type DeadLetterView } from './dead-letters/dead-letter-view';
import { copyWaitOf } from './dead-letters/copy-wait';
import { groupRelayBatches } from './dead-letters/relay-batch-groups';
import { moveMessage, queueCounts, receiveMessages, releaseMessages, type QueueCounts, type QueueMessage } from './dead-letters/queue-messages';
import { decideSubscriberRedrive, DEFAULT_SAFETY_MARGIN_SECONDS, type RecordLookup, type RedriveDecision } from './dead-letters/redrive-decision';
import { lookUpInboxRecord } from './dead-letters/record-lookup';
import { deadLetterSourceMismatch, DEPLOYED_SUBSCRIBER_HELP, DEPLOYED_SUBSCRIBER_OPTIONS, resolveSubscriber } from './deployed-subscriber';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { isFifoQueueUrl } from './dead-letters/ordered-sends';
import { orderedRedriveOptionRefusal, redriveOrderedDeadLetters } from './ordered-dlq-redrive';
import { terminalText } from './terminal-text';
import type { PayloadReader } from '../../lambda/claim-check/payload-store';
import { resolvePayload } from '../../lambda/claim-check/resolve-payload';
import type { EventEnvelope } from '../../lambda/envelope';
import { PayloadUnavailableError } from '../../lambda/errors';

const USAGE = `Usage:
  idempotent-event-flow dlq list [--dead-letter-queue <url>]... [--subscription-dead-letter-queue <url>]...
      [--relay-dead-letter-queue <url>]... [--limit <n>] [--json]
  idempotent-event-flow dlq show <event-id> [--dead-letter-queue <url>]... [--subscription-dead-letter-queue <url>]...
      [--table <inbox table> --subscriber <name>] [--fetch] [--json]
  idempotent-event-flow dlq redrive --subscriber-output <json|@file> [--subscription-dead-letter-queue <url>]
      [--reason <name>]... [--event-id <id>]... [--allow-expired] [--allow-reapply] [--yes] [--json]
  idempotent-event-flow dlq redrive (--dead-letter-queue <url> | --subscription-dead-letter-queue <url>) --queue <url>
      --subscriber <name> --processing-mode <mode> --deduplication-window <duration> [--table <inbox table>] ...

Lists a flow's dead letters by reason (with the oldest age and the event ids), and what it could not read as the
queue's counts show it (messages in flight, held by another reader for its visibility timeout; on a FIFO queue,
messages behind their group's messages read), shows one with every reason attribute
and its inbox or processing record, and redrives them to the subscriber's queue. For an offloaded event (claim-check,
docs/LARGE-EVENTS.md) show gives the data's S3 reference, size and SHA-256; with --fetch it reads the data from S3 and
shows it once its size and SHA-256 match the envelope's, and refuses (exit code 3), naming why, when the object is gone
or altered. A redrive is a dry run unless --yes
is given (at a terminal it asks): it says what it would move and what it refuses, and why.

A redrive acts on one subscriber, best named by its <subscriber>/Operator stack output (--subscriber-output): the
queues, the inbox table, the processing mode and the deduplication window come from what was deployed, and a flag
that disagrees with it is refused (exit code 2). With the output alone, it reads every dead-letter queue the output
names: the queue's and the subscription's (what SNS could not deliver); --dead-letter-queue or
--subscription-dead-letter-queue reads only that one (an ordered subscriber's redrive reads the queue's only and names
the other). Without it, --processing-mode and the other flags say it, and
--queue must be the queue whose RedrivePolicy names --dead-letter-queue (else refused, exit code 3).

A redrive refuses (exit code 3):
  - a dead letter whose redriven copy could be consumed after the subscriber's deduplication window ends: its age
    (from its event's time, or when it was first sent if earlier) plus how long the copy can wait in --queue (the
    queue's MessageRetentionPeriod; 14 days, the SQS maximum, when it can not be read) plus an hour to spare reaches
    the window. The inbox record of an earlier application may then be gone, so it could be applied twice
    (--allow-expired: redrive with a warning);
  - a message blocked for an operator that is still blocked (resolve it with 'blocked resolve' first; needs --table);
  - every dead letter of a subscriber in aggregate mode: it keeps no inbox, only the ids of the last events applied
    to each aggregate, so an event an earlier copy applied whose id has left that list would be applied again
    (--allow-reapply: redrive with a warning);
  - a body that is not an event envelope, and every relay dead letter (they hold stream batch metadata, not events:
    use 'idempotent-event-flow replay').
Another subscriber's dead letter in a shared queue (iefSubscriber) stays where it is.

An ordered subscriber (its output says ordered, or --queue is a FIFO queue; docs/ORDERED-DELIVERY.md) is redriven as
its sequence fences admit: by aggregate and sequence, the aggregate as the message group, the dead letter's message
id as the deduplication id, and only the run of sequences right after each fence (needs its inbox table: --table or
the output). Left in the dead-letter queue, and the exit code 3: a dead letter behind a gap (a sequence after the fence
no dead letter holds: in flight, left out by the filters, or lost; sent now it would only hold up its aggregate, so
fill the gap with 'fence replay' or pass it with 'fence skip', then redrive again; 'fence redrive' sends it anyway),
and one at or below the fence that an operator's 'fence skip' dropped. With --yes it reads the FIFO dead-letter queue
whole: it deletes the proven duplicates (at or below the fence with the fence or the subscriber's inbox record holding
the event, a second copy of one sent, a copy of one left), sends what the fences admit and reads again (SQS returns
no letter of an aggregate while another of it is held, so letters in front hide later ones); when a read changes
nothing while letters are unread, it moves the letters it keeps to the back of their groups (sent again, then
deleted) and reads on; what it still could not read is counted (exit code 3; a gap may then be among those letters:
skip nothing); a dry run reads once and counts the same. One at or below the fence with neither was never applied (another event took its sequence after a restored or
replaced outbox table): write it again through OrderedOutbox as a new event. --allow-expired and --allow-reapply are
refused (exit code 2): the fences admit a dead letter whatever its age, and answer one at or below them however sent.
A redrive moves exactly the dead letters it read and checked, one at a time: each is sent to the queue (a new message
id, its attributes kept), then deleted from the dead-letter queue. Never an SQS message move task (nor the console's
"Start DLQ redrive"): a move task moves whatever the queue holds when it runs, dead letters that arrived after the
check included, and one of those may be past the deduplication window.

Options:
  --dead-letter-queue <url>               a subscriber queue's dead-letter queue (repeatable for list and show)
  --subscription-dead-letter-queue <url>  a subscription's dead-letter queue (repeatable for list and show)
  --relay-dead-letter-queue <url>         the relay's (pipe's) dead-letter queue (list only)
  --queue <url>                           the subscriber's queue, where a redrive sends the messages
  --subscriber <name>                     the subscriber (its name in inbox keys and in iefSubscriber)
  --table <name>                          the subscriber's inbox table (records shown; blocked messages checked)
  --fetch                                 show: read an offloaded event's data from S3 and verify it (s3:GetObject,
                                          kms:Decrypt on the payload bucket's key)
  --deduplication-window <duration>       the subscriber's deduplicationWindow, e.g. 30d (the constructs' default)
  --reason <name>                         redrive only dead letters of this reason (repeatable), e.g. PermanentError
  --event-id <id>                         redrive only this event (repeatable)
  --allow-expired                         redrive dead letters past the deduplication window, with a warning
  --allow-reapply                         redrive to a subscriber in aggregate mode, with a warning
${DEPLOYED_SUBSCRIBER_HELP}
  --yes                                   move the messages (default: a dry run)
  --dry-run                               say what a redrive would do (the default)
  --limit <n>                             read at most n messages per queue (default 1000)
  --json                                  print JSON instead of text
  --region, --endpoint, --sqs-endpoint    see idempotent-event-flow --help
`;

type Action = 'list' | 'show' | 'redrive';

const ACTION_OPTIONS: Readonly<Record<Action, readonly string[]>> = {
  list: ['dead-letter-queue', 'subscription-dead-letter-queue', 'relay-dead-letter-queue', 'limit'],
  show: ['dead-letter-queue', 'subscription-dead-letter-queue', 'table', 'subscriber', 'limit', 'fetch'],
  redrive: [
    'dead-letter-queue',
    'subscription-dead-letter-queue',
    'relay-dead-letter-queue',
    'queue',
    'subscriber',
    'table',
    'deduplication-window',
    'reason',
    'event-id',
    'allow-expired',
    'allow-reapply',
    'subscriber-output',
    'processing-mode',
    'yes',
    'dry-run',
    'limit',
  ],
};

const ALWAYS_ALLOWED = new Set(['json', 'region', 'endpoint', 'sqs-endpoint', 'help']);

interface SourceQueue {
  readonly kind: DeadLetterQueueKind;
  readonly url: string;
}

function sourceQueues(values: ParsedArguments['values']): SourceQueue[] {
  return [
    ...listOption(values, 'dead-letter-queue').map((url) => ({ kind: 'queue' as const, url })),
    ...listOption(values, 'subscription-dead-letter-queue').map((url) => ({ kind: 'subscription' as const, url })),
    ...listOption(values, 'relay-dead-letter-queue').map((url) => ({ kind: 'relay' as const, url })),
  ];
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Reads every message of `queue` (released again by the caller) with its view. */
async function readQueue(client: SQSClient, queue: SourceQueue, limit: number): Promise<{ messages: QueueMessage[]; views: DeadLetterView[] }> {
  const messages = await receiveMessages(client, queue.url, limit);
  return { messages, views: messages.map((message) => deadLetterView(message, queue.kind)) };
}

/** What `dlq list` says of one queue. */
export interface DeadLetterQueueSummary {
  readonly queueKind: DeadLetterQueueKind;
  readonly queueUrl: string;
  readonly messages: number;
  /** How many per reason. */
  readonly byReason: Readonly<Record<string, number>>;
  /** When the oldest message's event happened (or it was sent), ISO-8601; absent for an empty queue. */
  readonly oldest?: string;
  readonly oldestAgeSeconds?: number;
  readonly eventIds: readonly string[];
  /** Relay dead letters: the stream batches given up on (replay their time range from the outbox). */
  readonly relayBatches?: ReadonlyArray<NonNullable<DeadLetterView['relayBatch']>>;
  /** True when the queue held more than `--limit` messages: the figures cover the first ones read. */
  readonly truncated: boolean;
  /**
   * The messages on the queue the list did not read, as the queue's counts said while it held what it read: in flight
   * (another reader holds them: a consumer, a `dlq show`, a verify run; visible again when its visibility timeout
   * ends), visible (past `--limit`; on a FIFO queue, behind the messages of their group read here), delayed.
   * @default every message was read
   */
  readonly notRead?: QueueCounts;
}

/** What the queue's `counts` (read while the list held its messages) show it did not read, or undefined. */
function notReadOf(counts: QueueCounts | undefined, read: number): QueueCounts | undefined {
  if (counts === undefined) return undefined;
  // what the list received is in flight too
  const notRead = { inFlight: Math.max(0, counts.inFlight - read), visible: counts.visible, delayed: counts.delayed };
  return notRead.inFlight + notRead.visible + notRead.delayed > 0 ? notRead : undefined;
}

function summarize(queue: SourceQueue, views: readonly DeadLetterView[], now: number, limit: number, counts?: QueueCounts): DeadLetterQueueSummary {
  const notRead = notReadOf(counts, views.length);
  const byReason: Record<string, number> = {};
  for (const view of views) byReason[view.reason] = (byReason[view.reason] ?? 0) + 1;
  const times = views.flatMap((view) => {
    const time = earliestApplicationEpochMilliseconds(view);
    return time === undefined ? [] : [time];
  });
  const oldest = times.length === 0 ? undefined : Math.min(...times);
  const relayBatches = views.flatMap((view) => (view.relayBatch === undefined ? [] : [view.relayBatch]));
  return {
    queueKind: queue.kind,
    queueUrl: queue.url,
    messages: views.length,
    byReason,
    ...(oldest !== undefined ? { oldest: new Date(oldest).toISOString(), oldestAgeSeconds: Math.max(0, Math.floor((now - oldest) / 1000)) } : {}),
    eventIds: [...new Set(views.flatMap((view) => (view.eventId === undefined ? [] : [view.eventId])))],
    ...(queue.kind === 'relay' ? { relayBatches } : {}),
    truncated: views.length >= limit,
    ...(notRead === undefined ? {} : { notRead }),
  };
}

/** The line saying what the list could not read of a queue, and why. */
function notReadLine(summary: DeadLetterQueueSummary): string | undefined {
  const notRead = summary.notRead;
  if (notRead === undefined) return undefined;
  const fifo = summary.queueUrl.endsWith('.fifo');
  const parts = [
    ...(notRead.inFlight > 0
      ? [`${notRead.inFlight} in flight (received by another reader: its consumer, a dlq show or list, a verify run; visible again when that reader's visibility timeout ends: run dlq list again then)`]
      : []),
    ...(notRead.visible > 0
      ? [fifo && !summary.truncated ? `${notRead.visible} behind the FIFO message group(s) read here (SQS returns no message of a group while another of it is in flight: readable once those are redriven)` : `${notRead.visible} visible, not read (--limit, or SQS returned them to no receive)`]
      : []),
    ...(notRead.delayed > 0 ? [`${notRead.delayed} delayed`] : []),
  ];
  return `${summary.messages} message(s) read; ${notRead.inFlight + notRead.visible + notRead.delayed} more not read: ${parts.join(', ')}`;
}

export { REPLAY_RANGE_MARGIN_MILLISECONDS, replayRange } from './dead-letters/relay-batch-groups';

function listText(summaries: readonly DeadLetterQueueSummary[]): string {
  const sections = summaries.map((summary) => {
    const lines = [`${summary.queueKind} dead-letter queue ${summary.queueUrl}: ${summary.messages}${summary.truncated || summary.notRead !== undefined ? '+' : ''} message(s)`];
    const notRead = notReadLine(summary);
    if (notRead !== undefined) lines.push(notRead);
    if (summary.messages === 0) return `${lines.join('\n')}\n`;
    lines.push(`oldest: ${summary.oldest ?? '-'}${summary.oldestAgeSeconds === undefined ? '' : ` (${summary.oldestAgeSeconds} s ago)`}`);
    const table = formatTable(
      ['REASON', 'MESSAGES'],
      Object.entries(summary.byReason).map(([reason, count]) => [reason, String(count)]),
    );
    lines.push(table.trimEnd());
    if (summary.eventIds.length > 0) lines.push(`event ids: ${summary.eventIds.map(terminalText).join(' ')}`);
    for (const group of groupRelayBatches(summary.relayBatches ?? [])) {
      const batches = group.batches === 1 ? 'stream batch' : `${group.batches} stream batches`;
      const records = group.records === undefined ? '?' : String(group.records);
      lines.push(
        `${batches} of ${records} record(s)${group.batches === 1 ? '' : ' in all'} on shard ${terminalText(group.shardId ?? '?')} (${terminalText(group.condition ?? 'given up')}), committed ` +
          `${terminalText(group.first ?? '?')} to ${terminalText(group.last ?? '?')}: replay with ` +
          `'npx idempotent-event-flow replay --since ${group.range?.since ?? '<time>'} --until ${group.range?.until ?? '<time>'} ...' for each subscriber`,
      );
    }
    return `${lines.join('\n')}\n`;
  });
  return sections.join('\n');
}

function lookUpRecord(context: CommandContext, table: string | undefined, subscriber: string | undefined, eventId: string | undefined): Promise<RecordLookup> {
  return lookUpInboxRecord(toDocumentClient(context.client()), table, subscriber, eventId);
}

/**
 * Where an offloaded event's data is (claim-check, docs/LARGE-EVENTS.md): its reference, SHA-256 and size. `dlq show`
 * fetches it only with `--fetch` (`fetched: true` and `data` once verified; `refusal` when the object is gone or altered).
 */
interface OffloadedData {
  readonly dataref: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly fetched: boolean;
  /** The event's data, fetched with `--fetch` and verified against the envelope's size and SHA-256. */
  readonly data?: unknown;
  /** Why `--fetch` shows no data: the object is gone, altered, or the reference is not valid. */
  readonly refusal?: string;
  /** For a letter SQS moved after maxReceiveCount (no reason of its own): the likely cause and what to check. */
  readonly likelyCause?: string;
}

/**
 * Why an offloaded event reaches the DLQ with no reason of its own: the runtime retries a read S3 refused (403,
 * `PayloadAccessDeniedError`, lambda/claim-check/payload-store.ts) because a grant can cure it, so the queue's redrive
 * moves it after maxReceiveCount and keeps no reason (SQS sets no attributes). Every permanent claim-check failure is
 * dead-lettered by the runtime with its reason, so this is the one claim-check cause of such a letter; other retried
 * failures (a handler's error, a timeout) remain possible, and the subscriber's log tells them apart.
 */
const OFFLOADED_MOVED_CAUSE =
  "SQS moved it after maxReceiveCount receives, so it carries no reason of its own. For an offloaded event the likely cause is its data read: S3 answered 403 (PayloadAccessDeniedError in the subscriber's log names the case: " +
  "the object is missing and the role may not list the key, or the role may not read it), which the runtime retries because a grant can cure it; " +
  "check s3:ListBucket on the payload bucket (prefix condition), s3:GetObject on the key and kms:Decrypt on the bucket's key for the subscriber's role, then redrive (other retried failures, a handler error, a timeout or a failed dead-letter send of a missing or altered object, show in the same log; --fetch tells a missing or altered object)";

function offloadedData(view: DeadLetterView): OffloadedData | undefined {
  const envelope = view.envelope;
  if (envelope?.dataref === undefined) return undefined;
  const moved = view.reason === DEAD_LETTER_REASON.MAX_RECEIVE_COUNT;
  return {
    dataref: envelope.dataref,
    sha256: envelope.iefdatasha256 ?? '-',
    bytes: envelope.iefdatasize ?? Number.NaN,
    fetched: false,
    ...(moved ? { likelyCause: OFFLOADED_MOVED_CAUSE } : {}),
  };
}

/** What `--fetch` found of an offloaded event's data: the data, verified, or why it is not shown. */
type Fetched = { readonly data: unknown } | { readonly refusal: string };

/**
 * Fetches an offloaded event's data with the runtime's own reader and checks (size, SHA-256, JSON, fingerprint). A
 * missing or altered object, or a reference that is not valid, is a refusal; a failing read (S3 unreachable, access
 * denied) throws.
 */
async function fetchOffloaded(view: DeadLetterView, reader: PayloadReader): Promise<Fetched> {
  try {
    return { data: (await resolvePayload(view.envelope as EventEnvelope<unknown>, reader)).envelope.data };
  } catch (error) {
    if (error instanceof PayloadUnavailableError) return { refusal: error.message };
    throw error;
  }
}

function withOffloaded(view: DeadLetterView, fetched?: Fetched): { offloadedData?: OffloadedData } {
  const offloaded = offloadedData(view);
  if (offloaded === undefined) return {};
  return { offloadedData: fetched === undefined ? offloaded : { ...offloaded, fetched: 'data' in fetched, ...fetched } };
}

function fetchedText(offloaded: OffloadedData, fetched: Fetched | undefined): string {
  if (fetched === undefined) {
    return (
      'not fetched: dlq show reads no S3 unless --fetch is given (it needs only SQS and DynamoDB); to see and check it: ' +
      `aws s3 cp ${terminalText(offloaded.dataref)} - | sha256sum (the digest must be ${terminalText(offloaded.sha256)}; a redriven copy is fetched and verified by the subscriber)\n`
    );
  }
  if ('refusal' in fetched) return `not shown: ${terminalText(fetched.refusal)}\n`;
  // each line made safe for the terminal (the data is the producer's: control characters are shown escaped)
  const lines = JSON.stringify(fetched.data, null, 2).split('\n').map(terminalText);
  return `fetched and verified (its size and SHA-256 match the envelope's):\n${lines.join('\n')}\n`;
}

function showText(view: DeadLetterView, record: RecordLookup, fetched?: Fetched): string {
  const fields: Array<[string, string]> = [
    ['queue', `${view.queueKind} dead-letter queue ${view.queueUrl}`],
    ['message id', view.messageId],
    ['reason', view.reason],
    ['error message', view.errorMessage ?? '-'],
    ...(view.previousReason === undefined ? [] : [['previous reason', `${view.previousReason}: ${view.previousErrorMessage ?? '-'} (before an earlier redrive)`] as [string, string]]),
    ['subscriber', view.subscriber ?? '-'],
    ['event', `${view.eventId ?? '-'}${view.eventType === undefined ? '' : ` (${view.eventType})`}`],
    ['event time', view.eventTime ?? '-'],
    ['sent at', view.sentAtEpochMilliseconds === undefined ? '-' : new Date(view.sentAtEpochMilliseconds).toISOString()],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  const sections = [fields.map(([name, value]) => `${name.padEnd(width)}  ${terminalText(value)}`).join('\n') + '\n'];
  sections.push(`attributes\n${formatTable(['NAME', 'VALUE'], Object.entries(view.attributes).map(([name, value]) => [name, value.replace(/\s+/g, ' ')]))}`);
  sections.push(view.envelope === undefined ? `body (not an envelope: ${terminalText(view.envelopeError ?? '?')})\n${terminalText(view.body)}\n` : `envelope\n${JSON.stringify(view.envelope, null, 2)}\n`);
  const offloaded = offloadedData(view);
  if (offloaded !== undefined) {
    sections.push(
      `data\noffloaded (claim-check): ${terminalText(offloaded.dataref)}, ${offloaded.bytes.toLocaleString('en-US')} bytes, SHA-256 ${terminalText(offloaded.sha256)}\n` +
        fetchedText(offloaded, fetched) +
        (offloaded.likelyCause === undefined ? '' : `why: ${offloaded.likelyCause}\n`),
    );
  }
  if (record.kind === 'found') sections.push(`record\n${JSON.stringify(record.item, null, 2)}\n`);
  else if (record.kind === 'none') sections.push('record\nnone: the subscriber has no inbox or processing record of this event (not applied, or its record expired)\n');
  else sections.push('record\nnot looked up (pass --table and --subscriber)\n');
  return sections.join('\n');
}

/** One dead letter's place in a redrive. */
interface Planned {
  readonly view: DeadLetterView;
  readonly message: QueueMessage;
  readonly decision: RedriveDecision;
}

function redriveText(planned: readonly Planned[], skipped: number, outcome: string): string {
  const rows = planned.map(({ view, decision }) => [
    view.eventId ?? view.messageId,
    view.reason,
    decision.redrive ? (decision.warning === undefined ? 'redrive' : 'redrive (warning)') : 'refused',
    decision.refusal ?? decision.warning ?? '',
  ]);
  const table = rows.length === 0 ? 'no dead letters match\n' : formatTable(['EVENT ID', 'REASON', 'DECISION', 'WHY'], rows);
  const skippedLine = skipped === 0 ? '' : `${skipped} dead letter(s) of other subscribers or not matching the filters left where they are\n`;
  return `${table}${skippedLine}${outcome}\n`;
}

async function redrive(parsed: ParsedArguments, context: CommandContext, limit: number): Promise<number> {
  const values = parsed.values;
  const sources = sourceQueues(values);
  if (sources.some((source) => source.kind === 'relay')) {
    return context.usageError("a relay dead letter holds stream batch metadata, not events: replay them with 'idempotent-event-flow replay' (dlq list shows their time range)");
  }
  const resolved = resolveSubscriber(values, context.io.cwd ?? process.cwd());
  if (typeof resolved === 'string') return context.usageError(resolved.startsWith('needs') ? `'dlq redrive' ${resolved}` : resolved);
  const deployment = resolved.deployment;
  if (sources.length > 1) return context.usageError("'dlq redrive' needs exactly one --dead-letter-queue or --subscription-dead-letter-queue (or --subscriber-output alone)");
  if (deployment !== undefined && sources.length === 0) {
    // --subscriber-output alone: every dead-letter queue it names, the queue's and the subscription's (SNS's undelivered)
    sources.push({ kind: 'queue', url: deployment.deadLetterQueueUrl });
    if (deployment.subscriptionDeadLetterQueueUrl !== undefined) sources.push({ kind: 'subscription', url: deployment.subscriptionDeadLetterQueueUrl });
  }
  if (sources.length === 0) return context.usageError("'dlq redrive' needs exactly one --dead-letter-queue or --subscription-dead-letter-queue (or --subscriber-output alone)");
  const source = sources[0] as SourceQueue;
  if (deployment !== undefined && sources.length === 1) {
    const deployed = source.kind === 'queue' ? deployment.deadLetterQueueUrl : deployment.subscriptionDeadLetterQueueUrl;
    if (source.url !== deployed) {
      const option = source.kind === 'queue' ? '--dead-letter-queue' : '--subscription-dead-letter-queue';
      return context.usageError(`${option} ${source.url} disagrees with the deployed subscriber '${deployment.subscriberName}' (--subscriber-output says ${deployed ?? 'none'}); leave the flag out`);
    }
  }
  const window = resolved.deduplicationWindowSeconds;
  const destination = resolved.queueUrl;
  const subscriber = resolved.subscriberName;
  const table = resolved.inboxTable;
  const reasons = listOption(values, 'reason');
  const eventIds = listOption(values, 'event-id');
  if (values.yes === true && values['dry-run'] === true) return context.usageError('--yes and --dry-run contradict each other');
  let move = values.yes === true;
  const asJson = values.json === true;
  const client = context.sqsClient();
  const now = context.now().getTime();

  for (const source of sources.filter((candidate) => candidate.kind === 'queue')) {
    // a typo in --queue would send this subscriber's dead letters to another subscriber's queue
    const mismatch = await deadLetterSourceMismatch(client, source.url, destination);
    if (mismatch.note !== undefined) context.io.stderr(`note: ${mismatch.note}\n`);
    if (mismatch.refusal !== undefined) {
      context.io.stderr(`refused: ${mismatch.refusal}\n`);
      return EXIT_CODE.REFUSED;
    }
  }
  if (deployment?.ordered === true || isFifoQueueUrl(destination)) {
    for (const option of ['allow-expired', 'allow-reapply'] as const) {
      if (values[option] === true) return context.usageError(orderedRedriveOptionRefusal(option, subscriber));
    }
    const confirm = async (count: number, plan: string): Promise<boolean> => {
      if (context.io.confirm === undefined) return false;
      context.io.stdout(plan);
      return context.io.confirm(`Redrive ${count} message(s) to ${destination} in sequence?`);
    };
    // an ordered redrive reads one dead-letter queue: the other the output names is redriven by naming it
    for (const other of sources.slice(1)) context.io.stderr(`note: read ${source.url} only; redrive the subscription dead-letter queue with --subscription-dead-letter-queue ${other.url}\n`);
    return redriveOrderedDeadLetters(context, { subscriber: resolved, deadLetterQueueUrl: source.url, reasons, eventIds, limit, move, asJson }, confirm);
  }
  const { wait: destinationWait, note } = await copyWaitOf(client, destination);
  if (note !== undefined) context.io.stderr(`note: ${note}\n`);
  const messages: QueueMessage[] = [];
  const views: DeadLetterView[] = [];
  for (const queue of sources) {
    const read = await readQueue(client, queue, limit);
    messages.push(...read.messages);
    views.push(...read.views);
  }
  const truncated = sources.some((queue) => messages.filter((message) => message.queueUrl === queue.url).length >= limit);
  const readLine = sources.length > 1 ? `read ${sources.map((queue) => `${queue.url} (${queue.kind === 'queue' ? "the queue's dead-letter queue" : "the subscription's"})`).join(' and ')}\n` : '';
  const planned: Planned[] = [];
  let skipped = 0;
  try {
    for (const [index, view] of views.entries()) {
      const message = messages[index] as QueueMessage;
      if (view.subscriber !== undefined && view.subscriber !== subscriber) {
        skipped += 1;
        continue;
      }
      if ((reasons.length > 0 && !reasons.includes(view.reason)) || (eventIds.length > 0 && (view.eventId === undefined || !eventIds.includes(view.eventId)))) {
        skipped += 1;
        continue;
      }
      // an aggregate subscriber's record is not looked up: every dead letter of it is refused (or reapplied) alike
      const record = resolved.processingMode === 'aggregate' ? ({ kind: 'not-looked-up' } as const) : await lookUpRecord(context, table, subscriber, view.eventId);
      const decision = decideSubscriberRedrive(view, record, {
        subscriberName: subscriber,
        ...(resolved.processingMode === undefined ? {} : { processingMode: resolved.processingMode }),
        allowReapply: values['allow-reapply'] === true,
        deduplicationWindowSeconds: window as number,
        safetyMarginSeconds: DEFAULT_SAFETY_MARGIN_SECONDS,
        nowEpochMilliseconds: now,
        allowExpired: values['allow-expired'] === true,
        destination: destinationWait,
      });
      planned.push({ view, message, decision });
    }
    const toMove = planned.filter((item) => item.decision.redrive);
    const refused = planned.length - toMove.length;
    // One message at a time, and only the messages read and checked above: never an SQS message move task, which moves
    // whatever is in the queue when it runs, including dead letters that arrived after the check (issue 28, finding 5).
    let outcome: string;
    let moved: Array<{ eventId?: string; messageId?: string }> | undefined;
    // at a terminal without --yes: the plan first, then the question
    if (!move && toMove.length > 0 && !asJson && context.io.confirm !== undefined) {
      context.io.stdout(redriveText(planned, skipped, `would redrive ${toMove.length} and refuse ${refused}`));
      move = await context.io.confirm(`Redrive ${toMove.length} message(s) to ${destination}?`);
    }
    if (!move) {
      outcome = `dry run: would redrive ${toMove.length} and refuse ${refused}${toMove.length === 0 ? '' : '; run again with --yes to move them'}`;
    } else if (toMove.length === 0) {
      outcome = `nothing redriven; ${refused} refused`;
    } else {
      moved = [];
      for (const item of toMove) moved.push({ ...(item.view.eventId !== undefined ? { eventId: item.view.eventId } : {}), messageId: await moveMessage(client, item.message, destination) });
      outcome = `redrove ${moved.length} to ${destination}; refused ${refused}`;
    }
    if (asJson) {
      context.io.stdout(
        json({
          dryRun: !move,
          method: 'send-and-delete',
          // how long a redriven copy can wait in the queue: the deduplication window rule's figure
          destination: destinationWait,
          skipped,
          truncated,
          decisions: planned.map(({ view, decision }) => ({ eventId: view.eventId, messageId: view.messageId, reason: view.reason, ...decision })),
          ...(moved !== undefined ? { moved } : {}),
        }),
      );
    } else {
      const more = truncated ? `\nread the first ${limit} message(s)${sources.length > 1 ? ' of a queue' : ''} only (--limit): run again for the rest` : '';
      context.io.stdout(`${readLine}${redriveText(planned, skipped, `${outcome}${more}`)}`);
    }
    for (const item of planned) if (item.decision.warning !== undefined && move) context.io.stderr(`warning: event '${terminalText(item.view.eventId ?? item.view.messageId)}': ${item.decision.warning}\n`);
    return refused > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
  } finally {
    // what was not moved is visible again at once (deleted or moved messages are skipped)
    await releaseMessages(client, messages);
  }
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const [action, ...rest] = parsed.positionals;
  if (action === undefined) return context.usageError('missing action: list, show or redrive');
  if (action !== 'list' && action !== 'show' && action !== 'redrive') return context.usageError(`unknown action '${action}'; expected list, show or redrive`);
  const extra = action === 'show' ? rest.slice(1) : rest;
  if (extra.length > 0) return context.usageError(`unexpected argument '${extra[0]}'`);
  for (const name of Object.keys(parsed.values)) {
    if (!ALWAYS_ALLOWED.has(name) && !ACTION_OPTIONS[action].includes(name)) return context.usageError(`option --${name} does not apply to 'dlq ${action}'`);
  }
  let limit = 1000;
  if (typeof parsed.values.limit === 'string') {
    const value = parsePositiveInteger(parsed.values.limit, 'limit');
    if (typeof value === 'string') return context.usageError(value);
    limit = value;
  }
  if (action === 'redrive') return redrive(parsed, context, limit);

  const sources = sourceQueues(parsed.values);
  if (sources.length === 0) return context.usageError(`'dlq ${action}' needs at least one dead-letter queue (--dead-letter-queue, --subscription-dead-letter-queue${action === 'list' ? ', --relay-dead-letter-queue' : ''})`);
  const client = context.sqsClient();
  const asJson = parsed.values.json === true;
  const read: Array<{ source: SourceQueue; messages: QueueMessage[]; views: DeadLetterView[]; counts?: QueueCounts }> = [];
  try {
    for (const source of sources) {
      const queueRead: (typeof read)[number] = { source, ...(await readQueue(client, source, limit)) };
      read.push(queueRead);
      // while the list holds what it read: what else the queue holds was not read (in flight elsewhere, behind a FIFO group)
      if (action === 'list') queueRead.counts = await queueCounts(client, source.url);
    }
  } finally {
    for (const { messages } of read) await releaseMessages(client, messages);
  }
  const now = context.now().getTime();
  if (action === 'list') {
    const summaries = read.map(({ source, views, counts }) => summarize(source, views, now, limit, counts));
    context.io.stdout(asJson ? json(summaries) : listText(summaries));
    return EXIT_CODE.OK;
  }
  const eventId = rest[0];
  if (eventId === undefined) return context.usageError("'dlq show' needs the event id");
  const found = read.flatMap(({ views }) => views.filter((view) => view.eventId === eventId));
  if (found.length === 0) return context.fail(`no dead letter of event '${eventId}' in ${sources.map((source) => source.url).join(', ')}`);
  const outputs: Array<{ view: DeadLetterView; record: RecordLookup; fetched?: Fetched }> = [];
  const fetch = parsed.values.fetch === true;
  let refused = false;
  for (const view of found) {
    const subscriber = (parsed.values.subscriber as string | undefined) ?? view.subscriber;
    const record = await lookUpRecord(context, parsed.values.table as string | undefined, subscriber, view.eventId);
    if (!fetch || offloadedData(view) === undefined) {
      if (fetch) context.io.stderr(`note: event '${terminalText(eventId)}' carries its data inline: nothing to fetch\n`);
      outputs.push({ view, record });
      continue;
    }
    const fetched = await fetchOffloaded(view, context.payloadReader());
    if ('refusal' in fetched) {
      refused = true;
      context.io.stderr(`refused: the data of event '${terminalText(eventId)}' is not shown: ${terminalText(fetched.refusal)}\n`);
    }
    outputs.push({ view, record, fetched });
  }
  context.io.stdout(
    asJson
      ? json(outputs.map(({ view, record, fetched }) => ({ ...view, ...withOffloaded(view, fetched), record: record.kind === 'found' ? record.item : record.kind })))
      : outputs.map(({ view, record, fetched }) => showText(view, record, fetched)).join('\n'),
  );
  return refused ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
}

/** The `dlq` command. */
export const dlqCommand: Command = {
  name: 'dlq',
  summary: 'list dead letters by reason, show one, and redrive them safely (refused past the deduplication window)',
  usage: USAGE,
  options: {
    'dead-letter-queue': { type: 'string', multiple: true },
    'subscription-dead-letter-queue': { type: 'string', multiple: true },
    'relay-dead-letter-queue': { type: 'string', multiple: true },
    queue: { type: 'string' },
    subscriber: { type: 'string' },
    table: { type: 'string' },
    'deduplication-window': { type: 'string' },
    reason: { type: 'string', multiple: true },
    'event-id': { type: 'string', multiple: true },
    'allow-expired': { type: 'boolean' },
    'allow-reapply': { type: 'boolean' },
    ...DEPLOYED_SUBSCRIBER_OPTIONS,
    yes: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    limit: { type: 'string' },
    fetch: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run,
};
