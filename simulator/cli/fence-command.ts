/**
 * `idempotent-event-flow fence show|list|skip|redrive|replay`: an ordered subscriber's sequence fences
 * (docs/ORDERED-DELIVERY.md): where it stands in an aggregate, every aggregate it is held up in, the deliberate skip of a gap that can never be filled, and the redrive of its
 * dead letters in the order the fence admits them.
 */
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { planOrderedRedrive, type OrderedDeadLetter, type OrderedRedrivePlan } from '../../lambda/ordered/redrive-plan';
import { OrderedEventRecords } from '../../lambda/ordered/ordered-event-records';
import { SequenceFences } from '../../lambda/ordered/sequence-fences';
import { releaseMessages, type QueueMessage } from './dead-letters/queue-messages';
import { provenDuplicates, readOrderedDeadLetters, unreadLine } from './dead-letters/ordered-queue-read';
import { appliedWhy, copiesNote, gapLines, sendOrdered } from './dead-letters/ordered-sends';
import { blockedAggregates, committedSequences } from './blocked-aggregates';
import { formatTable } from './blocked-command';
import { scanItems } from './scan-items';
import { skip } from './fence-skip';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { terminalText } from './terminal-text';
import { parseDurationSeconds } from './arguments';

const USAGE = `Usage:
  idempotent-event-flow fence show <subscriber> <aggregate-id> --table <inbox table> [--json]
  idempotent-event-flow fence list <subscriber> --table <inbox table> [--dead-letter-queue <url>] [--outbox-table <name>] [--deduplication-window <duration>] [--json]
  idempotent-event-flow fence skip <subscriber> <aggregate-id> --table <inbox table> --outbox-table <name> --from <n> --to <m> --reason <text> [--yes] [--json]
  idempotent-event-flow fence redrive <subscriber> --table <inbox table> --dead-letter-queue <url> --queue <url> [--deduplication-window <duration>] [--yes] [--json]
  idempotent-event-flow fence replay <subscriber> <aggregate-id> --table <inbox table> --outbox-table <name> --queue <url> [--yes] [--json]

An ordered subscriber applies each aggregate's events in sequence; its fence holds the last sequence applied.
  show     where the subscriber stands in the aggregate (0: nothing applied yet)
  list     every aggregate the subscriber is held up in, with what to do: its next event is in the dead-letter queue
           (dead-lettered), a later one is but not the next (gap), or, with --outbox-table, the outbox committed more
           than the fence shows applied and no dead letter explains it (behind: in flight, or lost). Needs
           --dead-letter-queue, --outbox-table or both; reads the dead-letter queue without consuming it, once: a
           FIFO queue returns at most 10 letters of an aggregate while they are held, so it counts the letters it did
           not read (exit code 3) and 'fence redrive --yes' reads on.
  skip     moves the fence from <n> (where you saw it) to <m>, so event m+1 applies next: for events that are lost for
           good (past every retention). Nothing of n+1..m is applied: it names them, by event id from the outbox
           history (or by sequence, when their history item expired). Refused (exit code 3, nothing changed) when <m>
           is past the last sequence the outbox committed for the aggregate (its head item: the events written later
           would be answered as duplicates), when the outbox has no head item of the aggregate, or when it can not be
           read; and, conditional, if the fence moved since. A dry run unless --yes; the reason stays on the fence,
           and an audit line (JSON, stderr) names what was dropped.
  redrive  reads the subscriber's FIFO dead-letter queue and sends its dead letters back to --queue by aggregate and
           sequence (one copy per sequence, the aggregate as the message group), leaving in the dead-letter queue
           those at or below the fence that the subscriber applied (the fence or its inbox record holds the event id;
           one with neither was never applied: written again as a new event, never deleted as applied) and anything
           that is not an ordered event. A letter with neither is called never applied only while it is younger, from
           its write time (iefwrittenat), than --deduplication-window (the subscriber's, less 5 minutes): a record of
           an application would still be live. Older, without a write time, or without the flag, it is 'unproven':
           left, neither redriven nor to be written again unless the subscriber's own state shows it never applied. It names the gaps:
           sequences after the fence that no dead letter holds (in flight, or lost: replay them from the outbox, or
           skip them). A dry run unless --yes. With --yes it reads the queue whole: it deletes the proven duplicates
           (applied as above, a second copy of one sent, a copy of one left), sends what the fence admits and reads
           again, planning every letter read in one plan; what it still could not read is counted (exit code 3).
  replay   sends the aggregate's events after the fence from the outbox's ordered history (its items live for the
           outbox's event retention) to --queue, in sequence, the aggregate as the message group and the event id as
           the deduplication id (a second replay within SQS's 5 minutes is dropped by SQS; later, the fence answers it).
           For a gap no dead letter holds. Refused (exit code 3) when the history misses a sequence after the fence
           (it expired): nothing is sent then. A dry run unless --yes.

Options:
  --table <name>               the subscriber's inbox table (where its fences are)
  --from <n>, --to <m>         skip: the fence as you saw it, and where it goes
  --reason <text>              skip: why (kept on the fence)
  --dead-letter-queue <url>    redrive, list: the subscriber queue's dead-letter queue (FIFO)
  --queue <url>                redrive, replay: the subscriber's queue (FIFO)
  --outbox-table <name>        replay: the outbox table (the ordered history items); list, skip: its head items
  --yes                        act (default: show what would be done)
  --json                       print JSON instead of text
  --region, --endpoint, --sqs-endpoint   see idempotent-event-flow --help
`;

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

function requiredString(parsed: ParsedArguments, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

async function show(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, aggregateId: string): Promise<number> {
  const state = await fences.get(aggregateId);
  context.io.stdout(
    parsed.values.json === true
      ? json(state)
      : `aggregate ${terminalText(aggregateId)}: applied up to ${state.appliedSequence}${state.appliedEventId === undefined ? '' : ` (event ${terminalText(state.appliedEventId)}, ${state.appliedAt ?? ''})`}; next: ${state.appliedSequence + 1}` +
          `${state.skippedReason === undefined ? '' : `\n  ${terminalText(state.skippedReason)}`}\n`,
  );
  return EXIT_CODE.OK;
}

/** A dead letter as the plan takes it: its body and the consumer's reason (`iefErrorName`). */
function deadLetterOf(message: QueueMessage): { id: string; body: string; errorName?: string } {
  const errorName = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue;
  return { id: message.messageId, body: message.body, ...(errorName === undefined ? {} : { errorName }) };
}

function describePlan(plan: OrderedRedrivePlan, acted: boolean): string {
  const waiting = new Set(plan.waiting);
  const removable = new Set(provenDuplicates(plan).map((letter) => letter.id));
  const gone = (id: string): string => (!removable.has(id) ? 'left in the dead-letter queue' : acted ? 'a proven duplicate: deleted' : 'a proven duplicate: deleted with --yes');
  const lines = plan.redrive.map((letter) => `  redrive  ${terminalText(letter.aggregateId)} #${letter.sequence}  (${terminalText(letter.id)})${waiting.has(letter) ? '  waits behind a gap' : ''}`);
  lines.push(...plan.alreadyApplied.map((letter) => `  applied  ${terminalText(letter.aggregateId)} #${letter.sequence}  (${appliedWhy(letter)}; ${gone(letter.id)})`));
  lines.push(
    ...plan.reused.map(
      (letter) =>
        `  reused   ${terminalText(letter.aggregateId)} #${letter.sequence}  (${terminalText(letter.id)}, event ${terminalText(letter.eventId ?? '?')}): never applied, another event holds this sequence; ` +
        'not redriven (the fence refuses it again): write it again through OrderedOutbox as a new event, then delete the dead letter (docs/ORDERED-DELIVERY.md, "Restoring the outbox table")' +
        terminalText(copiesNote(letter, plan, 'dead letter')),
    ),
  );
  lines.push(
    ...plan.copies.map(
      (letter) =>
        `  copy     ${terminalText(letter.aggregateId)} #${letter.sequence}  (${terminalText(letter.id)}, event ${terminalText(letter.eventId ?? '?')}): a copy of dead letter ${terminalText(letter.copyOf ?? '?')} (the same event at the same sequence), planned once there; ` +
        `never write it again (a second application) nor redrive it: ${acted ? 'deleted' : 'deleted with --yes'}`,
    ),
  );
  lines.push(
    ...plan.unproven.map(
      (letter) =>
        `  unproven ${terminalText(letter.aggregateId)} #${letter.sequence}  (${terminalText(letter.id)}, event ${terminalText(letter.eventId ?? '?')}): ${terminalText(letter.why ?? 'no inbox record of it')}; ` +
        'not redriven (the fence answers it), and not to be written again unless the subscriber\'s own state shows it was not applied (docs/ORDERED-DELIVERY.md, "Restoring the outbox table", step 5)',
    ),
  );
  lines.push(...plan.unordered.map((letter) => `  not an ordered event (${terminalText(letter.id)}): left in the dead-letter queue`));
  lines.push(...gapLines(plan, 'dead letter').map((line) => `  ${line.replace(/^gap: /, 'gap      ')}`));
  return `${lines.join('\n')}\n`;
}

async function redrive(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, records: OrderedEventRecords): Promise<number> {
  const deadLetterQueue = requiredString(parsed, 'dead-letter-queue');
  const queue = requiredString(parsed, 'queue');
  if (deadLetterQueue === undefined || queue === undefined) return context.usageError("'fence redrive' needs --dead-letter-queue and --queue");
  const sqs = context.sqsClient();
  const act = parsed.values.yes === true;
  // read whole when it acts: the proven duplicates in front of an aggregate deleted, what the fence admits sent, read again
  const read = await readOrderedDeadLetters({ sqs, deadLetterQueueUrl: deadLetterQueue, select: deadLetterOf, plan: (letters) => planOrderedRedrive(letters, fences, records), ...(act ? { sendTo: queue } : {}) });
  try {
    const { plan } = read;
    const unread = read.unread === 0 ? '' : `${unreadLine(read.unread)}\n`;
    if (!act) {
      const deletable = provenDuplicates(plan).length;
      context.io.stdout(
        parsed.values.json === true
          ? json({ dryRun: true, unread: read.unread, ...plan })
          : `dry run:\n${describePlan(plan, false)}${deletable === 0 ? '' : `${deletable} proven duplicate(s) (applied, or copies) would be deleted\n`}${unread}run again with --yes to redrive\n`,
      );
      return read.unread > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
    }
    context.io.stdout(
      parsed.values.json === true
        ? json({ redriven: [...read.sent], deleted: [...read.deleted], unread: read.unread, ...plan })
        : `redrove ${read.sent.length}; deleted ${read.deleted.length} proven duplicate(s) (applied, or copies):\n${describePlan(plan, true)}${unread}`,
    );
    return Object.keys(plan.gaps).length > 0 || read.unread > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
  } finally {
    await releaseMessages(sqs, read.held);
  }
}

/** The aggregate's ordered history items after `afterSequence`, by sequence: id, sequence and the envelope as written. */
async function historyAfter(context: CommandContext, outboxTable: string, aggregateId: string, afterSequence: number): Promise<Array<{ eventId: string; sequence: number; body: string }>> {
  const items = await scanItems(toDocumentClient(context.client()), {
    TableName: outboxTable,
    FilterExpression: '#type = :history AND #aggregate = :aggregate AND #sequence > :after',
    ExpressionAttributeNames: { '#type': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE, '#aggregate': ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE, '#sequence': ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE },
    ExpressionAttributeValues: { ':history': ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE, ':aggregate': aggregateId, ':after': afterSequence },
  });
  const events = items.map((item) => ({ eventId: String(item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]), sequence: Number(item[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]), body: String(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]) }));
  return events.sort((a, b) => a.sequence - b.sequence);
}

async function replay(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, aggregateId: string): Promise<number> {
  const outboxTable = requiredString(parsed, 'outbox-table');
  const queue = requiredString(parsed, 'queue');
  if (outboxTable === undefined || queue === undefined) return context.usageError("'fence replay' needs --outbox-table and --queue");
  const { appliedSequence } = await fences.get(aggregateId);
  const events = await historyAfter(context, outboxTable, aggregateId, appliedSequence);
  const missing = events.findIndex((event, index) => event.sequence !== appliedSequence + 1 + index);
  if (missing >= 0) {
    context.io.stderr(
      `refused: the outbox history of ${terminalText(aggregateId)} has no sequence ${appliedSequence + 1 + missing} (expired with the outbox's event retention, or never written); ` +
        "nothing sent: find the event elsewhere, or move the fence past it with 'fence skip'\n",
    );
    return EXIT_CODE.REFUSED;
  }
  const summary = { aggregateId, fenceAt: appliedSequence, sequences: events.map((event) => event.sequence) };
  if (parsed.values.yes !== true) {
    context.io.stdout(parsed.values.json === true ? json({ dryRun: true, ...summary }) : `dry run: would send ${events.length} event(s) of ${terminalText(aggregateId)} after sequence ${appliedSequence}: ${summary.sequences.join(', ') || 'none'}\nrun again with --yes\n`);
    return EXIT_CODE.OK;
  }
  const sqs = context.sqsClient();
  for (const event of events) {
    await sendOrdered(sqs, queue, { body: event.body, aggregateId, deduplicationId: event.eventId });
  }
  context.io.stdout(parsed.values.json === true ? json({ replayed: true, ...summary }) : `sent ${events.length} event(s) of ${terminalText(aggregateId)}: ${summary.sequences.join(', ') || 'none'}\n`);
  return EXIT_CODE.OK;
}

async function list(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, records: OrderedEventRecords): Promise<number> {
  const deadLetterQueue = requiredString(parsed, 'dead-letter-queue');
  const outboxTable = requiredString(parsed, 'outbox-table');
  if (deadLetterQueue === undefined && outboxTable === undefined) return context.usageError("'fence list' needs --dead-letter-queue, --outbox-table or both");
  const sqs = context.sqsClient();
  const planOf = (letters: readonly OrderedDeadLetter[]) => planOrderedRedrive(letters, fences, records);
  // read once, changing nothing: what it could not read is counted and said, never taken for nothing held
  const read = deadLetterQueue === undefined ? undefined : await readOrderedDeadLetters({ sqs, deadLetterQueueUrl: deadLetterQueue, select: deadLetterOf, plan: planOf });
  try {
    const plan = read?.plan ?? (await planOf([]));
    const unread = read?.unread ?? 0;
    const committed = outboxTable === undefined ? undefined : await committedSequences(toDocumentClient(context.client()), outboxTable);
    const aggregates = new Set([...plan.redrive.map((letter) => letter.aggregateId), ...(committed?.keys() ?? [])]);
    const applied = new Map(await Promise.all([...aggregates].map(async (aggregateId) => [aggregateId, (await fences.get(aggregateId)).appliedSequence] as const)));
    const blocked = blockedAggregates(plan, applied, committed);
    if (parsed.values.json === true) {
      context.io.stdout(json(blocked));
      if (unread > 0) context.io.stderr(`${unreadLine(unread)}\n`);
    } else {
      const rows = blocked.map((each) => [
        each.aggregateId,
        String(each.appliedSequence),
        each.committedSequence === undefined ? '-' : String(each.committedSequence),
        each.state,
        each.deadLetterSequences.join(', ') || '-',
        each.action,
      ]);
      const table = rows.length === 0 ? '' : formatTable(['AGGREGATE', 'APPLIED', 'COMMITTED', 'STATE', 'DEAD LETTERS', 'WHAT TO DO'], rows);
      const none = rows.length > 0 ? '' : unread === 0 ? `no aggregate is held up (${aggregates.size} looked at)\n` : `none of the letters read holds up an aggregate (${aggregates.size} looked at), but not every letter was read\n`;
      context.io.stdout(`${table}${none}${unread === 0 ? '' : `${unreadLine(unread)}\n`}`);
    }
    return unread > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
  } finally {
    if (read !== undefined) await releaseMessages(sqs, read.held);
  }
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const [action, subscriber, aggregateId, ...extra] = parsed.positionals;
  if (action !== 'show' && action !== 'list' && action !== 'skip' && action !== 'redrive' && action !== 'replay') {
    return context.usageError(action === undefined ? 'missing action: show, list, skip, redrive or replay' : `unknown action '${action}'; expected show, list, skip, redrive or replay`);
  }
  if (subscriber === undefined) return context.usageError(`'fence ${action}' needs the subscriber`);
  const table = requiredString(parsed, 'table');
  if (table === undefined) return context.usageError(`'fence ${action}' needs --table`);
  const fences = new SequenceFences({ client: context.client(), tableName: table, subscriberName: subscriber, now: () => context.now() });
  if (action === 'redrive' || action === 'list') {
    if (aggregateId !== undefined) return context.usageError(`unexpected argument '${aggregateId}'`);
    const typedWindow = typeof parsed.values['deduplication-window'] === 'string' ? parseDurationSeconds(parsed.values['deduplication-window'], 'deduplication-window') : undefined;
    if (typeof typedWindow === 'string') return context.usageError(typedWindow);
    // without the window, a letter below the fence with no inbox record is unproven (its record may have expired)
    const records = new OrderedEventRecords({ client: context.client(), tableName: table, subscriberName: subscriber, now: () => context.now(), ...(typedWindow === undefined ? {} : { deduplicationWindowSeconds: typedWindow }) });
    return action === 'redrive' ? redrive(parsed, context, fences, records) : list(parsed, context, fences, records);
  }
  if (aggregateId === undefined) return context.usageError(`'fence ${action}' needs the aggregate id`);
  if (extra.length > 0) return context.usageError(`unexpected argument '${extra[0]}'`);
  if (action === 'replay') return replay(parsed, context, fences, aggregateId);
  return action === 'show' ? show(parsed, context, fences, aggregateId) : skip(parsed, context, fences, subscriber, aggregateId);
}

/** The `fence` command. */
export const fenceCommand: Command = {
  name: 'fence',
  summary: "an ordered subscriber's sequence fences: show one, list the held-up aggregates, skip a lost gap, redrive or replay in sequence",
  usage: USAGE,
  options: {
    table: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    reason: { type: 'string' },
    'dead-letter-queue': { type: 'string' },
    'outbox-table': { type: 'string' },
    'deduplication-window': { type: 'string' },
    queue: { type: 'string' },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run,
};
