/**
 * `idempotent-event-flow fence skip`: moves an ordered subscriber's fence past events lost for good
 * (docs/ORDERED-DELIVERY.md, "Operating"). Checked against the outbox first (issue 38): the aggregate's head item says
 * the last sequence the outbox committed, and a skip past it is refused (the events written later would be answered
 * as duplicates: lost silently); its history items say, by event id, which events the skip drops. When the head can
 * not be read (no such item, a table that can not be read), the skip is refused with the reason: nothing proves it
 * safe. So is a skip on a table nothing proves is the subscriber's outbox (`fence-outbox-proof.ts`). Then checked
 * against the subscriber's FIFO dead-letter queue (`skip-dead-letters.ts`): an event of a skipped sequence that sits
 * there is not lost, so the skip is refused unless the operator passes it on purpose (`--drop-dead-letters`); and while
 * letters were not read (hidden behind ten of their group, or in flight), refused whatever the flags: one may be such an
 * event.
 */
import { isConditionalCheckFailed } from '../../lambda/transaction/cancellation';
import { OrderedEventRecords } from '../ordered/ordered-event-records';
import { planOrderedRedrive } from '../ordered/redrive-plan';
import type { SequenceFences } from '../ordered/sequence-fences';
import { skipDeadLetters, type SkippedDeadLetter } from './dead-letters/skip-dead-letters';
import { deadLetterOf, deadLetterQueueOf } from './fence-dead-letter-queue';
import { parsePositiveInteger } from './arguments';
import { EXIT_CODE, type CommandContext, type ParsedArguments } from './command';
import { proveOutbox } from './fence-outbox-proof';
import type { FenceTarget } from './fence-target';
import { SKIP_NEEDS_QUEUE_LINE, skipDeadLetterQueueRefusal } from './fence-skip-queue';
import { followedHistory, readAggregateHistory, type AggregateHistory, type FencePoint, type HistoryItem } from './ordered-history';
import { terminalText } from './terminal-text';

/** One event a skip drops: its sequence, and its id and type when the outbox history still holds it. */
export interface SkippedEvent {
  readonly sequence: number;
  readonly eventId?: string;
  readonly type?: string;
}

/** What the outbox says of a skip: the aggregate's last committed sequence and the events of (from, to]. */
export type SkipCheck =
  | {
      readonly committedSequence: number;
      readonly drops: readonly SkippedEvent[];
      /**
       * The generation of the event at --to: the head's, when --to is past the base of the head's generation; else that
       * of the item at --to the fence follows (absent: generation 0, or no history item: the fence keeps its own).
       */
      readonly generationAtTo?: number;
      /** The aggregate's history items in the table (for the proof that it is the subscriber's outbox). */
      readonly items: readonly HistoryItem[];
    }
  | { readonly refusal: string };

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

const dropOf = (item: HistoryItem): SkippedEvent => ({ sequence: item.sequence, eventId: item.eventId, type: item.type });

/**
 * The events a skip of (from, to] drops, and the generation the fence takes at --to (review ro12, RO12-3: a table whose
 * head went back holds two generations, or two events under one sequence). Per sequence: the item the fence would take
 * next (its chain from where it stands); past the chain's end, the item of the generation the fence takes at --to, else
 * every item there (each is dropped: the skip names them all).
 */
function dropsOf(history: AggregateHistory, fence: FencePoint, from: number, to: number): { drops: SkippedEvent[]; generationAtTo?: number } {
  const { head, items } = history;
  const chain = followedHistory(fence, items).chain;
  const inChain = (sequence: number): HistoryItem | undefined => chain.find((item) => item.sequence === sequence);
  const at = (sequence: number): HistoryItem[] => items.filter((item) => item.sequence === sequence);
  // review r38 (R38-1): a skip past the base of the head's generation puts the fence in that generation; to or below
  // that base, in the generation of the event at --to that the next one continues (the ordered model, seed 308844549,
  // path 6:0:7:7:9:11:11:10:9:9:9:9): the chain's, else one the item at --to + 1 continues, else the newest there
  const continued = (item: HistoryItem): boolean => at(to + 1).some((next) => next.generation === item.generation && next.generationBase !== to);
  const atTo = inChain(to) ?? at(to).find(continued) ?? at(to).reduce<HistoryItem | undefined>((newest, item) => (newest === undefined || item.generation > newest.generation ? item : newest), undefined);
  const generationAtTo =
    head !== undefined && head.generation > 0 && to > head.generationBase
      ? head.generation
      : atTo !== undefined && atTo.generation > 0
        ? atTo.generation
        : undefined;
  const drops = Array.from({ length: to - from }, (_, index): SkippedEvent[] => {
    const sequence = from + 1 + index;
    const followed = inChain(sequence);
    if (followed !== undefined) return [dropOf(followed)];
    const here = at(sequence);
    const ofTarget = here.filter((item) => item.generation === (generationAtTo ?? 0));
    const named = ofTarget.length > 0 ? ofTarget : here;
    return named.length === 0 ? [{ sequence }] : named.map(dropOf);
  }).flat();
  return { drops, ...(generationAtTo === undefined ? {} : { generationAtTo }) };
}

/**
 * Reads the aggregate's head item and history items from the outbox (one strongly consistent Scan, whatever the table's
 * key names), and says what the skip drops, or why it is refused.
 */
export async function checkSkip(context: CommandContext, outboxTable: string, aggregateId: string, fence: FencePoint, from: number, to: number): Promise<SkipCheck> {
  let history: AggregateHistory;
  try {
    history = await readAggregateHistory(context, outboxTable, aggregateId);
  } catch (error) {
    const { name, message } = error as Error;
    return { refusal: `could not read the head of ${terminalText(aggregateId)} in outbox table '${terminalText(outboxTable)}' (${name}: ${terminalText(message)}); nothing proves the skip safe, nothing changed` };
  }
  // a head an operator carried over to a restored or new table (`outbox heads`) says the committed sequence as well
  const committed = history.head?.sequence;
  if (committed === undefined) {
    return {
      refusal:
        `${terminalText(aggregateId)} has no head item in outbox table '${terminalText(outboxTable)}': the outbox committed nothing of it that a skip could pass ` +
        '(the wrong --outbox-table or aggregate id, or a restored or replaced outbox table whose heads were not carried over); nothing changed',
    };
  }
  if (to > committed) {
    return {
      refusal:
        `--to ${to} is past the last sequence the outbox committed for ${terminalText(aggregateId)} (${committed}): ` +
        `events ${committed + 1}..${to} are not written yet, and once written the fence would answer them as duplicates (lost silently); nothing changed`,
    };
  }
  // the fence as the operator saw it (--from): the chain the skip's range is named by starts there
  const { drops, generationAtTo } = dropsOf(history, fence.appliedSequence === from ? fence : { appliedSequence: from }, from, to);
  return { committedSequence: committed, drops, items: history.items, ...(generationAtTo === undefined ? {} : { generationAtTo }) };
}

function describeDrops(drops: readonly SkippedEvent[]): string {
  return drops
    .map((drop) => `  #${drop.sequence} ${drop.eventId === undefined ? "(no history item: past the outbox's event retention, or never written)" : `${terminalText(drop.eventId)} (${terminalText(drop.type ?? '?')}): still in the outbox history ('fence replay' can send it instead)`}`)
    .join('\n');
}

/**
 * The most dropped events a skip record names by id (review r38, R38-10): the record is one DynamoDB item (400 KB at
 * most). Sequences without an id (no history item) are not listed: the skip's range holds them, and an event arriving
 * under one is matched by its write time (`iefwrittenat`) before the skip's. Past the cap, named events are matched the
 * same way.
 */
export const MAX_NAMED_DROPS = 1000;

/** The dropped events the skip record names: those the history still holds, at most {@link MAX_NAMED_DROPS}. */
function namedDrops(drops: readonly SkippedEvent[]): Array<{ sequence: number; eventId: string }> {
  return drops.flatMap((drop) => (drop.eventId === undefined ? [] : [{ sequence: drop.sequence, eventId: drop.eventId }])).slice(0, MAX_NAMED_DROPS);
}

/** One letter of a skipped sequence, as the refusal and the result name it. */
function letterText(aggregateId: string, letter: SkippedDeadLetter): string {
  return letter.sequence === undefined
    ? `a letter of ${terminalText(aggregateId)} that is no ordered event (message ${terminalText(letter.messageId)}: its sequence can not be told)`
    : `the event of sequence ${letter.sequence} of ${terminalText(aggregateId)} (${terminalText(letter.eventId ?? '?')}, message ${terminalText(letter.messageId)})`;
}

/** Why a skip is refused while the dead-letter queue was not read whole. */
export function unreadSkipRefusal(unread: number): string {
  return (
    `${unread} letter(s) of the dead-letter queue not read: hidden behind ten letters of their aggregate (a FIFO queue returns at most 10 of a group while they are held), ` +
    'or in flight (another command or reader holds them now); one may be an event this skip would pass, which is not lost. ' +
    "Run 'fence redrive --yes' (it reads the queue whole, sending what the fences admit), let a command holding letters finish, then skip again; nothing changed"
  );
}

/** Why a skip is refused while the dead-letter queue holds events of the sequences it passes. */
export function deadLetteredSkipRefusal(aggregateId: string, letters: readonly SkippedDeadLetter[]): string {
  return (
    `the dead-letter queue holds ${letters.map((letter) => letterText(aggregateId, letter)).join('; ')}: not lost. Skipped, the aggregate would apply its later events, and the letter ` +
    "could then only be dropped or applied out of sequence. Redrive it first ('fence redrive --yes' sends it once the fence admits it; a gap before it: 'fence replay'). " +
    "To drop it on purpose (an event that can never be applied), keep its envelope ('dlq show <event-id>') and run again with --drop-dead-letters: the skip names the letters, " +
    'which stay in the dead-letter queue, left by every redrive as dropped by the skip; nothing changed'
  );
}

/** `fence skip <subscriber> <aggregate>`: returns the exit code. */
export async function skip(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, target: FenceTarget, aggregateId: string): Promise<number> {
  const { subscriber, inboxTable, deployment, outboxTable } = target;
  const reason = typeof parsed.values.reason === 'string' && parsed.values.reason.trim() !== '' ? parsed.values.reason : undefined;
  if (reason === undefined) return context.usageError("'fence skip' needs --reason (it stays on the fence)");
  if (outboxTable === undefined) return context.usageError("'fence skip' needs --outbox-table (its head items say how far the aggregate committed; a skip past that is refused), or --subscriber-output");
  const deadLetterQueue = deadLetterQueueOf(parsed, target);
  if (typeof deadLetterQueue === 'string') return context.usageError(`'fence skip' ${deadLetterQueue}`);
  if (deadLetterQueue.url === undefined) {
    return context.usageError("'fence skip' needs --dead-letter-queue (the subscriber's FIFO dead-letter queue: an event of a skipped sequence there is not lost, and the skip is refused), or --subscriber-output");
  }
  // review ro15b (RO15B-2): a typed dead-letter queue is the subscriber's only when its typed queue's RedrivePolicy names it
  if (deployment === undefined) {
    if (target.queue === undefined) return context.usageError(SKIP_NEEDS_QUEUE_LINE);
    const refusal = await skipDeadLetterQueueRefusal(context.sqsClient(), target.queue, deadLetterQueue.url);
    if (refusal !== undefined) {
      context.io.stderr(`refused: ${refusal}\n`);
      return EXIT_CODE.REFUSED;
    }
  }
  const from = parsed.values.from === '0' ? 0 : parsePositiveInteger(String(parsed.values.from ?? ''), 'from');
  const to = parsePositiveInteger(String(parsed.values.to ?? ''), 'to');
  if (typeof from === 'string') return context.usageError(from);
  if (typeof to === 'string') return context.usageError(to);
  if (to <= from) return context.usageError(`--to (${to}) must be greater than --from (${from})`);
  const fence = await fences.get(aggregateId);
  const check = await checkSkip(context, outboxTable, aggregateId, fence, from, to);
  if ('refusal' in check) {
    context.io.stderr(`refused: ${check.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  const { committedSequence, drops, generationAtTo } = check;
  // review r38 (R38-6) and ro12 (RO12-2): the outbox named must be the one whose history the fence applied (another
  // flow's outbox, whose aggregates share the ids, holds other events); proven, or refused with why
  const proof = await proveOutbox(context, { subscriber, inboxTable, outboxTable, aggregateId, fence, items: check.items, ...(deployment === undefined ? {} : { deployment }) });
  if ('refusal' in proof) {
    context.io.stderr(`refused: ${proof.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  if (proof.note !== undefined) context.io.stderr(`note: ${proof.note}\n`);
  // an event of a skipped sequence in the dead-letter queue (or in flight there) is not lost: refused unless passed on purpose
  const records = new OrderedEventRecords({ client: context.client(), tableName: inboxTable, subscriberName: subscriber, now: () => context.now() });
  const held = await skipDeadLetters({
    sqs: context.sqsClient(),
    deadLetterQueueUrl: deadLetterQueue.url,
    select: deadLetterOf(subscriber),
    plan: (letters) => planOrderedRedrive(letters, fences, records),
    aggregateId,
    from,
    to,
  });
  if (held.unread > 0) {
    context.io.stderr(`refused: ${unreadSkipRefusal(held.unread)}\n`);
    return EXIT_CODE.REFUSED;
  }
  if (held.letters.length > 0 && parsed.values['drop-dead-letters'] !== true) {
    context.io.stderr(`refused: ${deadLetteredSkipRefusal(aggregateId, held.letters)}\n`);
    return EXIT_CODE.REFUSED;
  }
  const deadLettersDropped = held.letters;
  const droppedLetters = deadLettersDropped.length === 0 ? '' : `dead letters passed on purpose (--drop-dead-letters; left in the dead-letter queue):\n${deadLettersDropped.map((letter) => `  ${letterText(aggregateId, letter)}`).join('\n')}\n`;
  if (parsed.values.yes !== true) {
    context.io.stdout(
      parsed.values.json === true
        ? json({ dryRun: true, aggregateId, from, to, committedSequence, drops, ...(generationAtTo === undefined ? {} : { generation: generationAtTo }), ...(deadLettersDropped.length === 0 ? {} : { deadLettersDropped }) })
        : `dry run: would move the fence of ${terminalText(subscriber)} in ${terminalText(aggregateId)} from ${from} to ${to} (the outbox committed up to ${committedSequence})${generationAtTo === undefined ? '' : `, into generation ${generationAtTo}`}; ` +
            `these events would never be applied:\n${describeDrops(drops)}\n${droppedLetters}run again with --yes\n`,
    );
    return EXIT_CODE.OK;
  }
  try {
    await fences.skipGap(aggregateId, from, to, `${reason} (by ${context.user})`, namedDrops(drops), generationAtTo);
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    context.io.stderr(`refused: the fence of ${terminalText(aggregateId)} is no longer at ${from}; look at it again ('fence show')\n`);
    return EXIT_CODE.REFUSED;
  }
  context.io.stderr(`${JSON.stringify({ audit: 'fence-skip', at: context.now().toISOString(), by: context.user, subscriber, aggregateId, from, to, reason, committedSequence, dropped: drops, ...(deadLettersDropped.length === 0 ? {} : { deadLettersDropped }) })}\n`);
  context.io.stdout(
    parsed.values.json === true
      ? json({ skipped: true, aggregateId, from, to, committedSequence, drops, ...(deadLettersDropped.length === 0 ? {} : { deadLettersDropped }) })
      : `moved the fence of ${terminalText(aggregateId)} to ${to}: event ${to + 1} applies next; never applied:\n${describeDrops(drops)}\n${droppedLetters}`,
  );
  return EXIT_CODE.OK;
}
