/**
 * `idempotent-event-flow fence skip`: moves an ordered subscriber's fence past events lost for good
 * (docs/ORDERED-DELIVERY.md, "Operating"). Checked against the outbox first (issue 38): the aggregate's head item says
 * the last sequence the outbox committed, and a skip past it is refused (the events written later would be answered
 * as duplicates: lost silently); its history items say, by event id, which events the skip drops. When the head can
 * not be read (no such item, a table that can not be read), the skip is refused with the reason: nothing proves it
 * safe.
 */
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { isConditionalCheckFailed } from '../../lambda/transaction/cancellation';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { SequenceFences } from '../../lambda/ordered/sequence-fences';
import { parsePositiveInteger } from './arguments';
import { EXIT_CODE, type CommandContext, type ParsedArguments } from './command';
import { scanItems } from './scan-items';
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
      /** The history's event at --from, when it holds it. */
      readonly eventIdAtFrom?: string;
      /**
       * The generation of the event at --to: the head's, when --to is past the base of the head's generation; else its
       * history item's, when it has one (absent: generation 0, or no history item: the fence keeps its own).
       */
      readonly generationAtTo?: number;
    }
  | { readonly refusal: string };

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * Reads the aggregate's head item and its history items of sequences (from, to] from the outbox (one strongly
 * consistent Scan, whatever the table's key names), and says what the skip drops, or why it is refused.
 */
export async function checkSkip(context: CommandContext, outboxTable: string, aggregateId: string, from: number, to: number): Promise<SkipCheck> {
  let items: Array<Record<string, unknown>>;
  try {
    items = await scanItems(toDocumentClient(context.client()), {
      TableName: outboxTable,
      FilterExpression: '#aggregate = :aggregate AND (#type IN (:head, :carried) OR (#type = :history AND #sequence >= :from AND #sequence <= :to))',
      ExpressionAttributeNames: { '#type': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE, '#aggregate': ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE, '#sequence': ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE },
      ExpressionAttributeValues: { ':head': ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE, ':carried': ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE, ':history': ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE, ':aggregate': aggregateId, ':from': from, ':to': to },
    });
  } catch (error) {
    const { name, message } = error as Error;
    return { refusal: `could not read the head of ${terminalText(aggregateId)} in outbox table '${terminalText(outboxTable)}' (${name}: ${terminalText(message)}); nothing proves the skip safe, nothing changed` };
  }
  // a head an operator carried over to a restored or new table (`outbox heads`) says the committed sequence as well
  const head = items.find((item) => item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] === ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE || item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] === ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE);
  const committed = head?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE];
  if (typeof committed !== 'number') {
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
  const bySequence = new Map(
    items
      .filter((item) => item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] === ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE)
      .map((item) => [Number(item[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]), item] as const),
  );
  const atFrom = bySequence.get(from);
  const drops = Array.from({ length: to - from }, (_, index): SkippedEvent => {
    const sequence = from + 1 + index;
    const item = bySequence.get(sequence);
    return item === undefined ? { sequence } : { sequence, eventId: String(item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]), type: String(item[OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]) };
  });
  // review r38 (R38-1): a skip past the base of the head's generation puts the fence in that generation
  const headGeneration = head?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE];
  const headBase = head?.[ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE];
  // and a skip to or below that base puts it in the generation of the event at --to (its history item's), which the
  // next event (of that history) continues: without it, the fence stood in generation 0 and that event, of a table that
  // had a carry before, was refused as another history (the ordered model, seed 308844549, path 6:0:7:7:9:11:11:10:9:9:9:9)
  const atTo = bySequence.get(to)?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE];
  const generationAtTo =
    typeof headGeneration === 'number' && headGeneration > 0 && typeof headBase === 'number' && to > headBase
      ? headGeneration
      : typeof atTo === 'number' && atTo > 0
        ? atTo
        : undefined;
  return {
    committedSequence: committed,
    drops,
    ...(atFrom === undefined ? {} : { eventIdAtFrom: String(atFrom[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]) }),
    ...(generationAtTo === undefined ? {} : { generationAtTo }),
  };
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

/** `fence skip <subscriber> <aggregate>`: returns the exit code. */
export async function skip(parsed: ParsedArguments, context: CommandContext, fences: SequenceFences, subscriber: string, aggregateId: string): Promise<number> {
  const reason = typeof parsed.values.reason === 'string' && parsed.values.reason.trim() !== '' ? parsed.values.reason : undefined;
  if (reason === undefined) return context.usageError("'fence skip' needs --reason (it stays on the fence)");
  const outboxTable = typeof parsed.values['outbox-table'] === 'string' && parsed.values['outbox-table'].trim() !== '' ? parsed.values['outbox-table'] : undefined;
  if (outboxTable === undefined) return context.usageError("'fence skip' needs --outbox-table (its head items say how far the aggregate committed; a skip past that is refused)");
  const from = parsed.values.from === '0' ? 0 : parsePositiveInteger(String(parsed.values.from ?? ''), 'from');
  const to = parsePositiveInteger(String(parsed.values.to ?? ''), 'to');
  if (typeof from === 'string') return context.usageError(from);
  if (typeof to === 'string') return context.usageError(to);
  if (to <= from) return context.usageError(`--to (${to}) must be greater than --from (${from})`);
  const check = await checkSkip(context, outboxTable, aggregateId, from, to);
  if ('refusal' in check) {
    context.io.stderr(`refused: ${check.refusal}\n`);
    return EXIT_CODE.REFUSED;
  }
  const { committedSequence, drops, eventIdAtFrom, generationAtTo } = check;
  // review r38 (R38-6): the outbox named must be the one whose history the fence applied: its event at --from is the
  // fence's applied event (another flow's outbox, whose aggregates share the ids, holds other events there)
  const fence = await fences.get(aggregateId);
  if (from > 0 && eventIdAtFrom !== undefined && fence.appliedSequence === from && fence.appliedEventId !== undefined && fence.appliedEventId !== eventIdAtFrom) {
    context.io.stderr(
      `refused: outbox table '${terminalText(outboxTable)}' holds event ${terminalText(eventIdAtFrom)} at sequence ${from} of ${terminalText(aggregateId)}, but the fence applied ` +
        `${terminalText(fence.appliedEventId)} there: not the outbox this subscriber applies (the wrong --outbox-table?); nothing changed\n`,
    );
    return EXIT_CODE.REFUSED;
  }
  if (parsed.values.yes !== true) {
    context.io.stdout(
      parsed.values.json === true
        ? json({ dryRun: true, aggregateId, from, to, committedSequence, drops, ...(generationAtTo === undefined ? {} : { generation: generationAtTo }) })
        : `dry run: would move the fence of ${terminalText(subscriber)} in ${terminalText(aggregateId)} from ${from} to ${to} (the outbox committed up to ${committedSequence})${generationAtTo === undefined ? '' : `, into generation ${generationAtTo}`}; ` +
            `these events would never be applied:\n${describeDrops(drops)}\nrun again with --yes\n`,
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
  context.io.stderr(`${JSON.stringify({ audit: 'fence-skip', at: context.now().toISOString(), by: context.user, subscriber, aggregateId, from, to, reason, committedSequence, dropped: drops })}\n`);
  context.io.stdout(
    parsed.values.json === true
      ? json({ skipped: true, aggregateId, from, to, committedSequence, drops })
      : `moved the fence of ${terminalText(aggregateId)} to ${to}: event ${to + 1} applies next; never applied:\n${describeDrops(drops)}\n`,
  );
  return EXIT_CODE.OK;
}
