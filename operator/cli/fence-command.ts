/**
 * `idempotent-event-flow fence show|list|skip|redrive|replay`: an ordered subscriber's sequence fences
 * (docs/ORDERED-DELIVERY.md): where it stands in an aggregate, every aggregate it is held up in, the deliberate skip of a gap that can never be filled, and the redrive of its
 * dead letters in the order the fence admits them.
 */
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { planOrderedRedrive, type OrderedDeadLetter, type OrderedRedrivePlan } from '../ordered/redrive-plan';
import { OrderedEventRecords } from '../ordered/ordered-event-records';
import { SequenceFences } from '../ordered/sequence-fences';
import { releaseMessages } from './dead-letters/queue-messages';
import { deadLetterOf, deadLetterQueueOf } from './fence-dead-letter-queue';
import { provenDuplicates, readOrderedDeadLetters, returnedLine, unreadLine } from './dead-letters/ordered-queue-read';
import { appliedWhy, copiesNote, gapLines, sendOrdered } from './dead-letters/ordered-sends';
import { blockedAggregates, committedSequences } from './blocked-aggregates';
import { formatTable } from './blocked-command';
import { skip } from './fence-skip';
import { proveOutbox } from './fence-outbox-proof';
import { carryFences } from './fence-carry';
import { ACCEPT_FENCES_OPTION, acceptanceRefusal, writeAcceptance } from './fence-accept';
import { proveCarrySource } from './fence-carry-proof';
import { notAnInboxTable } from './inbox-table-kind';
import { uncarriedRestore } from './uncarried-restore';
import { inboxRestoreRefusal } from './inbox-restore-check';
import { resolveFenceTarget, type FenceTarget } from './fence-target';
import { deadLetterSourceMismatch, readSubscriberOutput } from './deployed-subscriber';
import { replayDeduplicationIds } from './replay-deduplication';
import { replayNeedsOutputLine } from './replay-needs-output';
import type { SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { holdRestored, restoreRefusalLines } from './dead-letters/restore-hold';
import { PAST_RETENTION_TEXT, pastRetention } from './outbox-events';
import { OUTBOX_TTL_ATTRIBUTE_OPTION, outboxTimeToLive, outboxTtlAttributeHelp } from './outbox-ttl-attribute';
import { followedHistory, readAggregateHistory, type FencePoint, type FollowedHistory, type HistoryItem } from './ordered-history';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { terminalText } from './terminal-text';
import { parseDurationSeconds } from './arguments';

const USAGE = `Usage:
  idempotent-event-flow fence show <subscriber> <aggregate-id> --table <inbox table> [--json]
  idempotent-event-flow fence list <subscriber> --table <inbox table> [--dead-letter-queue <url>] [--outbox-table <name>] [--deduplication-window <duration>] [--json]
  idempotent-event-flow fence skip <subscriber> <aggregate-id> (--subscriber-output <json|@file> | --table <inbox table> --outbox-table <name> --queue <url> --dead-letter-queue <url>) --from <n> --to <m> --reason <text> [--drop-dead-letters] [--yes] [--json]
  idempotent-event-flow fence redrive <subscriber> (--subscriber-output <json|@file> | --table <inbox table> --dead-letter-queue <url> --queue <url>) [--deduplication-window <duration>] [--yes] [--json]
  idempotent-event-flow fence replay <subscriber> <aggregate-id> (--subscriber-output <json|@file> [--yes] | --table <inbox table> --outbox-table <name> --queue <url>) [--outbox-ttl-attribute <name|none>] [--subscriber-added-later] [--json]
  idempotent-event-flow fence carry <subscriber> --from-table <inbox table restored from> --table <restored inbox table> [--outbox-table <name>] [--from-subscriber-output <json|@file>] [--subscriber-output <json|@file>] [--yes] [--json]
  idempotent-event-flow fence carry <subscriber> --table <restored inbox table> --accept-fences-as-applied --reason <text> [--yes] [--json]

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
           read; when nothing proves the table is this subscriber's outbox (below); and, conditional, if the fence moved
           since. Then it reads the subscriber's FIFO dead-letter queue once, consuming nothing: refused while it holds
           a letter of the aggregate at a sequence the skip passes (that event is not lost: redrive it first, or pass
           it on purpose with --drop-dead-letters, which names the letters and leaves them there), and while letters
           were not read (hidden behind ten of their group, or in flight: one may be such an event; 'fence redrive
           --yes' reads the queue whole). A dry run unless --yes; the reason stays on the fence, and an audit line
           (JSON, stderr) names what was dropped.
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
           again, planning every letter read in one plan; when a read changes nothing while letters are unread, it
           moves the letters it keeps to the back of their groups (sent again, then deleted) and reads on; what it
           still could not read is counted (exit code 3: a gap may then be among those letters, skip nothing), and
           a letter dead-lettered again after it sent its event is left and named (exit code 3). Refused (exit code
           3) unless --queue's RedrivePolicy names --dead-letter-queue; a letter another subscriber's consumer
           dead-lettered (iefSubscriber) is left where it is.
  replay   sends the aggregate's events after the fence from the outbox's ordered history (its items live for the
           outbox's event retention) to --queue, in sequence, the aggregate as the message group and a deduplication
           id of the run and the event (SQS drops a retried send of the run; a replay run again sends again, and the
           fence or the inbox record answers a copy of an event already applied).
           For a gap no dead letter holds. Only the events the fence takes one after another are sent (a table whose
           head went back holds two generations: the other one's events are named, not sent). Refused (exit code 3),
           nothing sent, when the history misses a sequence after the fence (it expired), holds there only events the
           fence refuses, or two it would both take; and when nothing proves the table is this subscriber's outbox. A
           dry run unless --yes; it names each event by sequence, id and type.

  carry    after the subscriber's inbox table was restored (into a new table) or replaced: from the table it was
           restored from (or replaced), carries forward each fence that stands further there (never one back), and the
           live inbox records, skip records and window record the new table lacks; leaves a carry record. Run it
           before the subscriber consumes from the new table. A dry run unless --yes. Refused (exit code 3, nothing
           written) unless something proves --from-table is the table --table came from: DynamoDB's restore summary
           of --table (the whole ARN of --from-table); the live inbox records this subscriber had in --table when it
           was created, every one (up to 50 looked up) recorded in --from-table at the same aggregate and sequence,
           with each fence --from-table holds further naming an event the outbox history (--outbox-table, or
           --subscriber-output's) holds at that aggregate and sequence; or --from-subscriber-output
           (the subscriber's Operator output of the deployment that used --from-table) with --subscriber-output (the
           one that uses --table), naming the same outbox table in the same account and Region: another flow's inbox
           with a subscriber of this name would move its fences past events it never applied.
           With --accept-fences-as-applied and --reason, when the table restored from is gone: after you moved each
           fence with 'fence skip' to what the subscriber's own state shows applied, accepts the fences as they stand
           (the carry record names no table carried from and keeps the reason; an audit line). Refused (exit code 3)
           while the table's restore summary names a table restored from that still exists: carry from it.

replay refuses (exit code 3) while the inbox table may have been restored under the subscriber: a fence written before
its table was created, or, for a fence that applied nothing, events written before it (a subscriber added later says
so with --subscriber-added-later), unless 'fence carry' ran on the table. Sent, events the subscriber applied in the
table before would apply twice.

replay and skip act on an outbox table only once it is proven this subscriber's (an aggregate id like order-42 is
shared by flows; another flow's events would be applied): by --subscriber-output (its Operator stack output names the
outbox table), else by the table holding the event the fence applied, or an event the subscriber's inbox or skip
record names. Once those history items expired (or for a fence that applied nothing yet), only --subscriber-output
proves it.

Options:
  --table <name>               the subscriber's inbox table (where its fences are)
  --subscriber-output <json|@file>  the subscriber's <subscriber>/Operator stack output (its value, or @ and a file):
                               the inbox table, outbox table and queue come from it, and proves the outbox table
  --from-subscriber-output <json|@file>  carry: the subscriber's Operator output of the deployment that used
                               --from-table (with --subscriber-output of the deployment that uses --table, it
                               proves the table carried from when nothing else does)
  --from <n>, --to <m>         skip: the fence as you saw it, and where it goes
  --reason <text>              skip: why (kept on the fence); carry --accept-fences-as-applied: why (kept on the
                               carry record)
  --accept-fences-as-applied   carry: the table restored from is gone, and you moved each fence to what the
                               subscriber's own state shows applied: accept them as they stand (audited)
  --dead-letter-queue <url>    redrive, list, skip: the subscriber queue's dead-letter queue (FIFO)
  --drop-dead-letters          skip: also pass the sequences whose events the dead-letter queue holds (read, named;
                               left there). Never passes letters it could not read
  --queue <url>                redrive, replay, skip: the subscriber's queue (FIFO); its RedrivePolicy must name
                               --dead-letter-queue
  --outbox-table <name>        replay: the outbox table (the ordered history items); list, skip: its head items;
                               carry: its history, against which the fences carried forward are checked
${outboxTtlAttributeHelp(31)}
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

function describePlan(plan: OrderedRedrivePlan, acted: boolean, unread: number): string {
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
        `  copy     ${terminalText(letter.aggregateId)} #${letter.sequence}  (${terminalText(letter.id)}, event ${terminalText(letter.eventId ?? '?')}): a copy of dead letter ${terminalText(letter.copyOf ?? '?')} (the same event, at this or another sequence), planned once there; ` +
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
  lines.push(...gapLines(plan, 'dead letter', unread).map((line) => `  ${line.replace(/^gap: /, 'gap      ')}`));
  return `${lines.join('\n')}\n`;
}

async function redrive(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, records: OrderedEventRecords, target: FenceTarget): Promise<number> {
  const typedDeadLetterQueue = deadLetterQueueOf(parsed, target);
  if (typeof typedDeadLetterQueue === 'string') return context.usageError(`'fence redrive' ${typedDeadLetterQueue}`);
  const deadLetterQueue = typedDeadLetterQueue.url;
  const { queue } = target;
  if (deadLetterQueue === undefined || queue === undefined) return context.usageError("'fence redrive' needs --dead-letter-queue and --queue (or --subscriber-output)");
  const sqs = context.sqsClient();
  // review ro13 (RO13-1): another subscriber's dead-letter queue would be planned against this subscriber's fences
  const mismatch = await deadLetterSourceMismatch(sqs, deadLetterQueue, queue);
  if (mismatch.note !== undefined) context.io.stderr(`note: ${mismatch.note}\n`);
  if (mismatch.refusal !== undefined) {
    context.io.stderr(`refused: ${mismatch.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  const act = parsed.values.yes === true;
  // read whole when it acts: the proven duplicates in front of an aggregate deleted, what the fence admits sent, read again
  // review ro13 (RO13-10): after an inbox restore without 'fence carry', what is above a fence may have been applied
  const hold = holdRestored(context, target.inboxTable, target.subscriber, fences, (letters) => planOrderedRedrive(letters, fences, records));
  const read = await readOrderedDeadLetters({ sqs, deadLetterQueueUrl: deadLetterQueue, select: deadLetterOf(target.subscriber), plan: hold.plan, ...(act ? { sendTo: queue } : {}) });
  try {
    const { plan } = read;
    const refusals = restoreRefusalLines(hold.refused).map((line) => `  ${terminalText(line)}\n`).join('');
    const unread = `${refusals}${read.unread === 0 ? '' : `${unreadLine(read.unread)}\n`}${read.skipped === 0 ? '' : `${read.skipped} dead letter(s) of other subscribers left where they are\n`}`;
    const refused = hold.refused.size === 0 ? {} : { refused: Object.fromEntries(hold.refused) };
    if (!act) {
      const deletable = provenDuplicates(plan).length;
      context.io.stdout(
        parsed.values.json === true
          ? json({ dryRun: true, unread: read.unread, ...plan, ...refused })
          : `dry run:\n${describePlan(plan, false, read.unread)}${deletable === 0 ? '' : `${deletable} proven duplicate(s) (applied, or copies) would be deleted\n`}${unread}run again with --yes to redrive\n`,
      );
      return read.unread > 0 || hold.refused.size > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
    }
    const returned = read.returned.length === 0 ? '' : `${returnedLine(read.returned.length)}: ${read.returned.map((id) => terminalText(id)).join(', ')}\n`;
    context.io.stdout(
      parsed.values.json === true
        ? json({ redriven: [...read.sent], deleted: [...read.deleted], returned: [...read.returned], unread: read.unread, ...plan, ...refused })
        : `redrove ${read.sent.length}; deleted ${read.deleted.length} proven duplicate(s) (applied, or copies):\n${describePlan(plan, true, read.unread)}${returned}${unread}`,
    );
    return Object.keys(plan.gaps).length > 0 || read.unread > 0 || read.returned.length > 0 || hold.refused.size > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
  } finally {
    await releaseMessages(sqs, read.held);
  }
}

/** The text of one event of a replay or a refusal: sequence, id, type and (when not 0) generation. */
function eventText(item: HistoryItem): string {
  return `#${item.sequence} ${terminalText(item.eventId)} (${terminalText(item.type)}${item.generation === 0 ? '' : `, generation ${item.generation}`})`;
}

/** Why a replay sends nothing when the chain the fence follows stops before the history's end (review ro12, RO12-3). */
function stopRefusal(aggregateId: string, fence: FencePoint, stop: NonNullable<FollowedHistory['stop']>): string {
  const at = `the outbox history of ${terminalText(aggregateId)}`;
  if (stop.reason === 'missing') {
    return (
      `${at} has no sequence ${stop.sequence} (expired with the outbox's event retention, or never written); ` +
      "nothing sent: find the event elsewhere, or move the fence past it with 'fence skip'"
    );
  }
  const fenceText = `the fence stands at ${fence.appliedSequence}${(fence.appliedGeneration ?? 0) === 0 ? '' : ` in generation ${fence.appliedGeneration}`}`;
  if (stop.reason === 'two-events') {
    return (
      `${at} holds two events at sequence ${stop.sequence} that the fence would both take (${stop.items.map(eventText).join('; ')}): the outbox's head went back ` +
      'without the heads carried over (a restore), so two events took one sequence; nothing sent: carry the heads over and write again what was lost ' +
      '(docs/ORDERED-DELIVERY.md, "Restoring the outbox table")'
    );
  }
  return (
    `${fenceText}, and ${at} holds at sequence ${stop.sequence} only events it refuses (${stop.items.map(eventText).join('; ')}): the history of another generation ` +
    "(the heads went back, or were carried to a new table, while the old table's events were applied), which no replay can apply; nothing sent: " +
    "its dead letters are 'reused' in 'fence redrive' (write them again once the heads are carried from the fences: docs/ORDERED-DELIVERY.md, \"Restoring the outbox table\")"
  );
}

async function replay(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, target: FenceTarget, aggregateId: string): Promise<number> {
  const { outboxTable, queue } = target;
  if (outboxTable === undefined || queue === undefined) return context.usageError("'fence replay' needs --outbox-table and --queue (or --subscriber-output)");
  // review ro15 (RO15-4): only the Operator output ties the queue to this subscriber; a typed --queue must be its queue
  if (parsed.values.yes === true && target.deployment === undefined) return context.usageError(replayNeedsOutputLine('fence replay'));
  // review ro15b (RO15B-1): a restored outbox table's TTL is off; its items' expiry is read under the attribute named
  // review rx15b (RX15B-1): the attribute --outbox-ttl-attribute or the Operator output names, checked against the table's
  const typedTimeToLive = parsed.values['outbox-ttl-attribute'];
  const givenTimeToLive = typeof typedTimeToLive === 'string' && typedTimeToLive.trim() !== '' ? typedTimeToLive : target.deployment?.outboxTimeToLiveAttribute;
  const timeToLive = await outboxTimeToLive(context.client(), outboxTable, givenTimeToLive);
  if ('refusal' in timeToLive) {
    context.io.stderr(`refused: ${timeToLive.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  const fence = await fences.get(aggregateId);
  const history = await readAggregateHistory(context, outboxTable, aggregateId, timeToLive);
  // review ro12 (RO12-2): the events sent must be this subscriber's outbox's, not another flow's of the same aggregate id
  const proof = await proveOutbox(context, { subscriber: target.subscriber, inboxTable: target.inboxTable, outboxTable, aggregateId, fence, items: history.items, ...(target.deployment === undefined ? {} : { deployment: target.deployment }) });
  if ('refusal' in proof) {
    context.io.stderr(`refused: ${proof.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  if (proof.note !== undefined) context.io.stderr(`note: ${proof.note}\n`);
  // review ro12 (RO12-3): the events the fence takes one after another, whatever else the table holds at their sequences
  const followed = followedHistory(fence, history.items);
  if (followed.stop !== undefined) {
    context.io.stderr(`refused: ${stopRefusal(aggregateId, fence, followed.stop)}\n`);
    return EXIT_CODE.REFUSED;
  }
  const events = followed.chain;
  // review rx15 (RX15-1): past the outbox's TTL is past the retention the payload bucket's lifecycle counts on, as in
  // 'replay'; DynamoDB may not have deleted the items yet, so reading them proves nothing
  const now = context.now().getTime();
  const expired = events.filter((event) => pastRetention(event, now));
  if (expired.length > 0) {
    context.io.stderr(`refused: ${terminalText(aggregateId)}: ${expired.map((event) => `sequence ${event.sequence} (${terminalText(event.eventId)})`).join(', ')} ${PAST_RETENTION_TEXT}; nothing sent: the events after them wait behind them, so move the fence past them with 'fence skip'\n`);
    return EXIT_CODE.REFUSED;
  }
  // review ro12 (RO12-4): a restored or replaced inbox table holds fences behind what the subscriber applied
  const restored = await inboxRestoreRefusal(context, target.inboxTable, target.subscriber, aggregateId, fence, events, parsed.values['subscriber-added-later'] === true);
  if (restored !== undefined) {
    context.io.stderr(`refused: ${restored}\n`);
    return EXIT_CODE.REFUSED;
  }
  const summary = {
    aggregateId,
    fenceAt: fence.appliedSequence,
    sequences: events.map((event) => event.sequence),
    events: events.map((event) => ({ sequence: event.sequence, eventId: event.eventId, type: event.type, ...(event.generation === 0 ? {} : { generation: event.generation }) })),
    outboxTable,
    outboxProvenBy: proof.proven,
    ...(followed.notFollowed.length === 0 ? {} : { notFollowed: followed.notFollowed.map((event) => ({ sequence: event.sequence, eventId: event.eventId, type: event.type, generation: event.generation })) }),
  };
  const described = `${events.map((event) => `  ${eventText(event)}`).join('\n') || '  none'}\n` +
    `  (outbox table '${terminalText(outboxTable)}': ${proof.proven})\n` +
    followed.notFollowed.map((event) => `  not sent: ${eventText(event)}, another generation's event, which the fence refuses\n`).join('');
  if (parsed.values.yes !== true) {
    context.io.stdout(parsed.values.json === true ? json({ dryRun: true, ...summary }) : `dry run: would send ${events.length} event(s) of ${terminalText(aggregateId)} after sequence ${fence.appliedSequence}:\n${described}run again with --yes\n`);
    return EXIT_CODE.OK;
  }
  const sqs = context.sqsClient();
  // per run: a replay run again within 5 minutes is not dropped as a resend of the first (review ro15, RO15-3)
  const deduplication = replayDeduplicationIds();
  for (const event of events) {
    await sendOrdered(sqs, queue, { body: event.body, aggregateId, deduplicationId: deduplication.of(event.eventId) });
  }
  context.io.stdout(parsed.values.json === true ? json({ replayed: true, ...summary }) : `sent ${events.length} event(s) of ${terminalText(aggregateId)}:\n${described}`);
  return EXIT_CODE.OK;
}

/** Where an SQS queue URL's queue lives: its host (the Region's endpoint) and account. */
function queueHomeOf(queueUrl: string): string {
  try {
    const url = new URL(queueUrl);
    return `${url.host}/${url.pathname.split('/')[1] ?? ''}`;
  } catch {
    return queueUrl;
  }
}

/**
 * Why `from` (--from-subscriber-output) is not the Operator output of the same flow as `current` (--subscriber-output,
 * the deployment that uses `table`), or undefined when it is: the same subscriber, outbox table, account and Region.
 */
export function carryOutputMismatch(subscriber: string, table: string, from: SubscriberDeployment, current: SubscriberDeployment | undefined): string | undefined {
  if (current === undefined) {
    return "--from-subscriber-output proves nothing alone (it only restates --from-table): give --subscriber-output too, the subscriber's Operator output of the deployment that uses --table, so the two can be compared (the same outbox table, account and Region)";
  }
  if (current.subscriberName !== subscriber || current.inboxTable !== table) {
    return `--subscriber-output is the output of subscriber '${terminalText(current.subscriberName)}' with inbox table '${terminalText(current.inboxTable ?? 'none')}'; it must be '${terminalText(subscriber)}''s output naming --table '${terminalText(table)}'`;
  }
  if (from.outboxTable === undefined || from.outboxTable !== current.outboxTable || queueHomeOf(from.queueUrl) !== queueHomeOf(current.queueUrl)) {
    return (
      `--from-subscriber-output is of another flow than --subscriber-output (outbox table '${terminalText(from.outboxTable ?? 'none')}', queue ${terminalText(from.queueUrl)}; ` +
      `the deployment that uses --table: outbox table '${terminalText(current.outboxTable ?? 'none')}', queue ${terminalText(current.queueUrl)}): another flow's or environment's fences would pass events this subscriber never applied`
    );
  }
  return undefined;
}

/** `fence carry <subscriber> --from-table <old inbox> --table <restored inbox>`: see fence-carry.ts. */
async function carry(parsed: ParsedArguments, context: CommandContext, subscriber: string, table: string, outboxTable: string | undefined): Promise<number> {
  if (parsed.values[ACCEPT_FENCES_OPTION] === true) return acceptFences(parsed, context, subscriber, table);
  const fromTable = requiredString(parsed, 'from-table');
  if (fromTable === undefined) return context.usageError("'fence carry' needs --from-table (the inbox table the subscriber's table was restored from, or the one it replaced)");
  if (fromTable === table) return context.usageError("'fence carry' needs --from-table to be another table than --table");
  // review ro13 (RO13-5): the fences and records of another flow's inbox with a subscriber of this name must not be carried
  const fromOutput = requiredString(parsed, 'from-subscriber-output');
  const fromDeployment = fromOutput === undefined ? undefined : readSubscriberOutput(fromOutput, context.io.cwd ?? process.cwd());
  if (typeof fromDeployment === 'string') return context.usageError(`'fence carry' --from-subscriber-output: ${fromDeployment}`);
  if (fromDeployment !== undefined && (fromDeployment.subscriberName !== subscriber || fromDeployment.inboxTable !== fromTable)) {
    return context.usageError(
      `'fence carry' --from-subscriber-output is the output of subscriber '${terminalText(fromDeployment.subscriberName)}' with inbox table '${terminalText(fromDeployment.inboxTable ?? 'none')}'; ` +
        `it must be '${terminalText(subscriber)}''s output naming --from-table '${terminalText(fromTable)}' (the deployment that used it)`,
    );
  }
  // review ro14 (RO14-2): the output carried from must be this flow's: the same outbox, account and Region as the
  // Operator output of the deployment that uses --table; the operator's own arguments prove nothing
  if (fromDeployment !== undefined) {
    const currentOutput = requiredString(parsed, 'subscriber-output');
    const current = currentOutput === undefined ? undefined : readSubscriberOutput(currentOutput, context.io.cwd ?? process.cwd());
    if (typeof current === 'string') return context.usageError(`'fence carry' --subscriber-output: ${current}`);
    const mismatch = carryOutputMismatch(subscriber, table, fromDeployment, current);
    if (mismatch !== undefined) {
      context.io.stderr(`refused: ${mismatch}\n`);
      return EXIT_CODE.REFUSED;
    }
  }
  const wrongKind = (await notAnInboxTable(context, '--from-table', fromTable)) ?? (await notAnInboxTable(context, '--table', table));
  if (wrongKind !== undefined) {
    context.io.stderr(`refused: ${wrongKind}\n`);
    return EXIT_CODE.REFUSED;
  }
  const source = await proveCarrySource(context, subscriber, fromTable, table, fromDeployment?.inboxTable, outboxTable);
  if ('refusal' in source) {
    context.io.stderr(`refused: ${source.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  const apply = parsed.values.yes === true;
  const result = await carryFences(context, subscriber, fromTable, table, apply);
  if (apply) context.io.stderr(`${JSON.stringify({ audit: 'fence-carry', at: context.now().toISOString(), by: context.user, subscriber, fromTable, table, source: source.proven, fences: result.fences, records: result.records })}\n`);
  if (parsed.values.json === true) {
    context.io.stdout(json({ ...(apply ? {} : { dryRun: true }), source: source.proven, ...result }));
  } else {
    const rows = result.fences.map((each) => `  ${terminalText(each.aggregateId)}: ${each.current} -> ${each.from} ${each.decision === 'moved' ? (apply ? 'moved' : 'would move') : each.decision === 'kept' ? `kept (${each.current} here)` : 'moved meanwhile: run again'}`);
    context.io.stdout(
      `${apply ? 'carried' : 'dry run: would carry'} from '${terminalText(fromTable)}' into '${terminalText(table)}': ${result.fences.filter((each) => each.decision === 'moved').length} fence(s) forward, ` +
        `${result.records} inbox, skip or window record(s) (the table carried from: ${source.proven})\n${rows.join('\n')}${rows.length === 0 ? '' : '\n'}${apply ? '' : 'run again with --yes\n'}`,
    );
  }
  return result.fences.some((each) => each.decision === 'moved-since') ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
}

/**
 * `fence carry --accept-fences-as-applied --reason <text>` (review ro15b, RO15B-3): the table restored from is gone;
 * the operator moved each fence (`fence skip`) to what the subscriber's own state shows applied, and accepts the fences
 * as they stand. Writes the carry record, with the reason, and an audit line; a dry run unless --yes.
 */
async function acceptFences(parsed: ParsedArguments, context: CommandContext, subscriber: string, table: string): Promise<number> {
  if (requiredString(parsed, 'from-table') !== undefined || requiredString(parsed, 'from-subscriber-output') !== undefined) {
    return context.usageError(`'fence carry' --${ACCEPT_FENCES_OPTION} carries from no table: leave out --from-table and --from-subscriber-output (a table restored from that exists: carry from it instead)`);
  }
  const reason = requiredString(parsed, 'reason');
  if (reason === undefined) {
    return context.usageError(`'fence carry' --${ACCEPT_FENCES_OPTION} needs --reason (why the table restored from is gone, and how each fence was checked against the subscriber's own state; kept on the carry record)`);
  }
  const refusal = (await notAnInboxTable(context, '--table', table)) ?? (await acceptanceRefusal(context, table));
  if (refusal !== undefined) {
    context.io.stderr(`refused: ${refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  const apply = parsed.values.yes === true;
  if (apply) {
    await writeAcceptance(context, subscriber, table, reason);
    context.io.stderr(`${JSON.stringify({ audit: 'fence-carry-accepted', at: context.now().toISOString(), by: context.user, subscriber, table, acceptedFencesAsApplied: true, reason })}\n`);
  }
  if (parsed.values.json === true) {
    context.io.stdout(json({ ...(apply ? {} : { dryRun: true }), table, acceptedFencesAsApplied: true, reason }));
  } else {
    context.io.stdout(
      `${apply ? 'accepted' : 'dry run: would accept'} the fences of '${terminalText(subscriber)}' in '${terminalText(table)}' as what it applied (no table carried from): ` +
        `'fence replay' and the redrives then send what comes after them\n${apply ? '' : 'run again with --yes\n'}`,
    );
  }
  return EXIT_CODE.OK;
}

async function list(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, records: OrderedEventRecords, subscriber: string, table: string): Promise<number> {
  const deadLetterQueue = requiredString(parsed, 'dead-letter-queue');
  const outboxTable = requiredString(parsed, 'outbox-table');
  if (deadLetterQueue === undefined && outboxTable === undefined) return context.usageError("'fence list' needs --dead-letter-queue, --outbox-table or both");
  const sqs = context.sqsClient();
  const planOf = (letters: readonly OrderedDeadLetter[]) => planOrderedRedrive(letters, fences, records);
  // read once, changing nothing: what it could not read is counted and said, never taken for nothing held
  const read = deadLetterQueue === undefined ? undefined : await readOrderedDeadLetters({ sqs, deadLetterQueueUrl: deadLetterQueue, select: deadLetterOf(subscriber), plan: planOf });
  try {
    const plan = read?.plan ?? (await planOf([]));
    const unread = read?.unread ?? 0;
    const committed = outboxTable === undefined ? undefined : await committedSequences(toDocumentClient(context.client()), outboxTable);
    const aggregates = new Set([...plan.redrive.map((letter) => letter.aggregateId), ...(committed?.keys() ?? [])]);
    const states = new Map(await Promise.all([...aggregates].map(async (aggregateId) => [aggregateId, await fences.get(aggregateId)] as const)));
    const applied = new Map([...states].map(([aggregateId, state]) => [aggregateId, state.appliedSequence] as const));
    const uncarried = await uncarriedRestore(context, table, subscriber, [...states.values()]);
    const blocked = blockedAggregates(plan, applied, committed, unread, uncarried);
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
  if (action !== 'show' && action !== 'list' && action !== 'skip' && action !== 'redrive' && action !== 'replay' && action !== 'carry') {
    return context.usageError(action === undefined ? 'missing action: show, list, skip, redrive, replay or carry' : `unknown action '${action}'; expected show, list, skip, redrive, replay or carry`);
  }
  if (subscriber === undefined) return context.usageError(`'fence ${action}' needs the subscriber`);
  const target = resolveFenceTarget(parsed, subscriber, context.io.cwd ?? process.cwd());
  if (typeof target === 'string') return context.usageError(`'fence ${action}' ${target}`);
  const table = target.inboxTable;
  const fences = new SequenceFences({ client: context.client(), tableName: table, subscriberName: subscriber, now: () => context.now() });
  if (action === 'carry') {
    if (aggregateId !== undefined) return context.usageError(`unexpected argument '${aggregateId}'`);
    return carry(parsed, context, subscriber, table, target.outboxTable);
  }
  if (action === 'redrive' || action === 'list') {
    if (aggregateId !== undefined) return context.usageError(`unexpected argument '${aggregateId}'`);
    const typedWindow = typeof parsed.values['deduplication-window'] === 'string' ? parseDurationSeconds(parsed.values['deduplication-window'], 'deduplication-window') : undefined;
    if (typeof typedWindow === 'string') return context.usageError(typedWindow);
    // without the window, a letter below the fence with no inbox record is unproven (its record may have expired)
    const records = new OrderedEventRecords({ client: context.client(), tableName: table, subscriberName: subscriber, now: () => context.now(), ...(typedWindow === undefined ? {} : { deduplicationWindowSeconds: typedWindow }) });
    return action === 'redrive' ? redrive(parsed, context, fences, records, target) : list(parsed, context, fences, records, subscriber, table);
  }
  if (aggregateId === undefined) return context.usageError(`'fence ${action}' needs the aggregate id`);
  if (extra.length > 0) return context.usageError(`unexpected argument '${extra[0]}'`);
  if (action === 'replay') return replay(parsed, context, fences, target, aggregateId);
  return action === 'show' ? show(parsed, context, fences, aggregateId) : skip(parsed, context, fences, target, aggregateId);
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
    'drop-dead-letters': { type: 'boolean' },
    'outbox-table': { type: 'string' },
    ...OUTBOX_TTL_ATTRIBUTE_OPTION,
    'deduplication-window': { type: 'string' },
    'subscriber-output': { type: 'string' },
    'subscriber-added-later': { type: 'boolean' },
    'from-table': { type: 'string' },
    'from-subscriber-output': { type: 'string' },
    [ACCEPT_FENCES_OPTION]: { type: 'boolean' },
    queue: { type: 'string' },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run,
};
