/**
 * `idempotent-event-flow outbox heads`: carries an ordered outbox's heads over to a restored or new outbox table
 * (docs/ORDERED-DELIVERY.md, "Restoring the outbox table"), from the history items the table holds or from the ordered
 * subscribers' sequence fences; never moves a head backwards. A dry run unless --yes.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { orderedHeadKey, ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { carryOrderedHeads, type HeadCarry, type OrderedHeadsSource } from '../ordered/outbox-heads';
import { listOption } from './arguments';
import { formatTable } from './blocked-command';
import { readSubscriberOutput } from './deployed-subscriber';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { terminalText } from './terminal-text';
import { committedOrderedEvents, isMissingTable, UNDRAINED_RACE_TEXT, undrainedText, type CommittedOrderedEvent, type UndrainedEvent } from './undrained-events';

/** `text` wrapped at `width` columns, each line indented by `indent` spaces. */
function indented(text: string, indent: number, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((entry) => `${' '.repeat(indent)}${entry}`).join('\n');
}

const USAGE = `Usage:
  idempotent-event-flow outbox heads --outbox-table <name> --from-history [--history-table <name>] [--subscriber-output <json|@file> ... [--previous-outbox-table <name>] | --subscriber <name> --table <inbox table> ...] [--yes] [--json]
  idempotent-event-flow outbox heads --outbox-table <name> --from-fences (--subscriber-output <json|@file> ... | --subscriber <name> --table <inbox table> ...) (--previous-outbox-table <name> | --previous-outbox-gone) [--allow-undrained] [--yes] [--json]

After a point-in-time restore of the outbox table (DynamoDB restores into a new table) or a replaced outbox table, each
aggregate's head (its last sequence) is older than what the ordered subscribers applied, or gone: the producers would
hand out sequences already passed, and the subscribers dead-letter those events (SequenceReusedError). Run this
before the producers write to the new table: it sets each aggregate's head to the last sequence known.
  --from-history      the highest sequence of each aggregate among the ordered items (history and heads) of the table,
                      or of --history-table: the table the restore was made from, when it still exists (it knows
                      every sequence it handed out, also of events not applied yet: the safest source).
                      Name the ordered subscribers too: an aggregate one of their fences applied in a newer generation
                      than the history holds (the history is of an older table than the one they followed, e.g. the
                      table before the one replaced), or in an older generation than the history's newest but not at
                      its base, is then carried from their fences ('from the fences'), since a generation based at the
                      history's sequence would wait forever (with the queues and dead-letter queues drained, nothing
                      is left that brings such a fence to that base)
  --from-fences       the highest sequence each subscriber applied (its sequence fences); name every ordered subscriber
                      of the outbox, each by its <subscriber>/Operator stack output or by --subscriber and --table
                      (given in pairs, in order), and the old table (--previous-outbox-table, or --previous-outbox-gone).
                      The fences know only what was applied: it refuses (exit code 3, nothing written; the dry run's
                      plan still printed) while --outbox-table or --previous-outbox-table holds an event past the head
                      the carry leaves its aggregate at (committed, not applied: in its table's stream, a queue or a
                      dead-letter queue), since its sequence would be handed out again; it names them and waits for
                      the drain. An event of a head set back ('set back'), past it in the generation the carry
                      abandons, is not waited for: no named fence can ever apply it
  --allow-undrained   --from-fences: carry anyway, with a warning naming those events:
${indented(UNDRAINED_RACE_TEXT, 22, 118)}
A head is moved forward only: one past its source stays ('ahead'), but for one case: when subscribers are named and
none of their fences can ever apply the head's events (each fence left the head's generation, or, from a history,
stands below a base taken from that history's sequences, a history whose line it does not follow), it is set back to the
source's sequence (never below a named fence) in a new generation ('set back'): those events are all dead-lettered
(SequenceReusedError), to be written again, and would otherwise wait forever. Each move is conditioned on the head still
standing where it was read: a producer's write in between is not overwritten ('moved': run again; exit code 3).
The carried head holds no event, so the relay publishes nothing. A dry run unless --yes: it says what it would set.

Options:
  --outbox-table <name>              the restored or new outbox table
  --history-table <name>             --from-history: read this table instead (e.g. the table restored from)
  --partition-key <name>             its partition key (default ${TABLE_SCHEMA.PARTITION_KEY})
  --sort-key <name>, --no-sort-key   its sort key (default ${TABLE_SCHEMA.SORT_KEY})
  --subscriber-output <json|@file>   an ordered subscriber's Operator stack output (repeatable): refused unless it
                                     is an ordered subscriber's ("ordered": true) reading --outbox-table or
                                     --previous-outbox-table
  --previous-outbox-table <name>     the outbox table restored from or replaced (the one the subscribers' outputs may
                                     name); --from-fences reads its events in flight and needs it or --previous-outbox-gone
  --previous-outbox-gone             --from-fences: the old table no longer exists, so its events in flight can not be
                                     seen: drain the subscribers' queues and dead-letter queues before the carry
  --subscriber <name>, --table <t>   an ordered subscriber and its inbox table (repeatable, in pairs)
  --yes                              write (default: show what would be set)
  --json                             print JSON instead of text
  --region, --endpoint               see idempotent-event-flow --help
`;

/**
 * What `--yes` does to an `unchanged` head: it is written again at its sequence in a new generation based there (a
 * restored table's head may equal the source's while the old table's events past it are in flight: review r38, R38-2),
 * so it is counted and audited with the heads set (review ro12, RO12-11).
 */
export const UNCHANGED_WRITTEN_TEXT = 'same sequence, written again: a new generation based there';
/** The dry run's word for it. */
export const UNCHANGED_WOULD_WRITE_TEXT = 'same sequence, would be written again: a new generation based there';

/** The usage error of `--from-fences` without the old table named or said gone (review ro12b, RO12B-3). */
export const PREVIOUS_TABLE_NEEDED =
  "'outbox heads --from-fences' needs --previous-outbox-table <old table> (the table restored from or replaced: its events still in flight are looked for) " +
  'or --previous-outbox-gone (it no longer exists: drain the subscribers\' queues and dead-letter queues first)';

/** A refusal's outcome line, and `refused` in `--json`: events in flight, nothing written. */
export const REFUSED_UNDRAINED = 'refused: not drained';

const DECISION_TEXT: Readonly<Record<HeadCarry['decision'], string>> = {
  set: 'set',
  unchanged: UNCHANGED_WRITTEN_TEXT,
  back: 'set back: no fence can apply the events past it (they are dead-lettered: write them again)',
  ahead: 'left: past its source (a fence can still apply the events past it)',
  moved: 'refused: a producer moved it meanwhile; run again',
};

/** The fences' subscribers from the options, or the problem with them. */
function subscribersOf(parsed: ParsedArguments, cwd: string): Array<{ subscriberName: string; inboxTable: string }> | string {
  const subscribers: Array<{ subscriberName: string; inboxTable: string }> = [];
  const outboxTables = new Map<string, string>();
  for (const output of listOption(parsed.values, 'subscriber-output')) {
    const deployment = readSubscriberOutput(output, cwd);
    if (typeof deployment === 'string') return deployment;
    // a standard subscriber keeps no fences: its output would read none and carry nothing, reported as success
    if (deployment.ordered !== true) {
      return `--subscriber-output: subscriber '${deployment.subscriberName}' is not an ordered subscriber (its output has no "ordered": true), so it keeps no sequence fences; name the outbox's OrderedSubscriber outputs`;
    }
    if (deployment.inboxTable === undefined) return `--subscriber-output: subscriber '${deployment.subscriberName}' has no inbox table, so no fences`;
    if (deployment.outboxTable !== undefined) outboxTables.set(deployment.subscriberName, deployment.outboxTable);
    subscribers.push({ subscriberName: deployment.subscriberName, inboxTable: deployment.inboxTable });
  }
  // an output of another flow reads another outbox table: its fences are another flow's sequences
  const target = parsed.values['outbox-table'] as string;
  const previous = parsed.values['previous-outbox-table'];
  const allowed = new Set([target, ...(typeof previous === 'string' ? [previous] : [])]);
  for (const [name, table] of outboxTables) {
    if (!allowed.has(table)) {
      return (
        `--subscriber-output: subscriber '${name}' reads outbox table ${table}, which is neither --outbox-table ${target}` +
        (typeof previous === 'string' ? ` nor --previous-outbox-table ${previous}` : ' nor a --previous-outbox-table (the table restored from or replaced)') +
        ": another flow's subscriber, or name the table it read with --previous-outbox-table"
      );
    }
  }
  const names = listOption(parsed.values, 'subscriber');
  const tables = listOption(parsed.values, 'table');
  if (names.length !== tables.length) return `--subscriber and --table come in pairs, but ${names.length} subscriber(s) and ${tables.length} table(s) were given`;
  names.forEach((subscriberName, index) => subscribers.push({ subscriberName, inboxTable: tables[index]! }));
  if (subscribers.length === 0) return "'outbox heads --from-fences' needs --subscriber-output, or --subscriber and --table, for every ordered subscriber of the outbox";
  return subscribers;
}

async function heads(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const outboxTable = parsed.values['outbox-table'];
  if (typeof outboxTable !== 'string' || outboxTable.trim() === '') return context.usageError("'outbox heads' needs --outbox-table");
  const fromHistory = parsed.values['from-history'] === true;
  const fromFences = parsed.values['from-fences'] === true;
  if (fromHistory === fromFences) return context.usageError("'outbox heads' needs exactly one of --from-history and --from-fences");
  const historyTable = parsed.values['history-table'];
  if (historyTable !== undefined && !fromHistory) return context.usageError('--history-table goes with --from-history');
  const named = ['subscriber-output', 'subscriber', 'table'].some((option) => listOption(parsed.values, option).length > 0);
  let source: OrderedHeadsSource = { kind: 'history', ...(typeof historyTable === 'string' ? { table: historyTable } : {}) };
  if (fromHistory && named) {
    const subscribers = subscribersOf(parsed, context.io.cwd ?? process.cwd());
    if (typeof subscribers === 'string') return context.usageError(subscribers);
    source = { ...source, subscribers };
  }
  const previous = parsed.values['previous-outbox-table'];
  const previousGone = parsed.values['previous-outbox-gone'] === true;
  if (previousGone && !fromFences) return context.usageError('--previous-outbox-gone goes with --from-fences');
  if (fromFences) {
    // the old table holds the events in flight the drain check looks for: never left unread without a word
    if ((typeof previous === 'string') === previousGone) return context.usageError(PREVIOUS_TABLE_NEEDED);
    const subscribers = subscribersOf(parsed, context.io.cwd ?? process.cwd());
    if (typeof subscribers === 'string') return context.usageError(subscribers);
    source = { kind: 'fences', subscribers };
  }
  const asked = parsed.values.yes === true;
  const partitionKeyName = typeof parsed.values['partition-key'] === 'string' ? parsed.values['partition-key'] : TABLE_SCHEMA.PARTITION_KEY;
  const sortKeyName = parsed.values['no-sort-key'] === true ? undefined : typeof parsed.values['sort-key'] === 'string' ? parsed.values['sort-key'] : TABLE_SCHEMA.SORT_KEY;
  let undrained: UndrainedEvent[] = [];
  let refused = false;
  let planned: { readonly heads: readonly HeadCarry[] } | undefined;
  if (fromFences) {
    if (previousGone) context.io.stderr(`note: --previous-outbox-gone: the old table's events still in flight can not be seen; drain the subscribers' queues and dead-letter queues before the carry\n`);
    const checked = await undrainedOf(context, { outboxTable, partitionKeyName, ...(sortKeyName === undefined ? {} : { sortKeyName }) }, source, previous);
    undrained = checked.undrained;
    if (undrained.length > 0) context.io.stderr(`${terminalText(undrainedText(undrained, parsed.values['allow-undrained'] === true, outboxTable))}\n`);
    // refused: nothing written, but the plan (the dry run's) is still shown, as text or --json
    if (undrained.length > 0 && parsed.values['allow-undrained'] !== true) {
      refused = true;
      planned = checked.plan;
    }
  } else if (parsed.values['allow-undrained'] === true) return context.usageError('--allow-undrained goes with --from-fences');
  const result = planned ?? await carryOrderedHeads({
    client: context.client(),
    outbox: { outboxTableName: outboxTable, partitionKeyName, ...(sortKeyName === undefined ? {} : { sortKeyName }) },
    source,
    apply: asked,
    now: () => context.now(),
  });
  const toSet = result.heads.filter((head) => head.decision === 'set' || head.decision === 'back');
  // an unchanged head is written too (a new generation at its sequence): counted and audited, not called untouched
  const rewritten = result.heads.filter((head) => head.decision === 'unchanged');
  const written = [...toSet, ...rewritten];
  const rewrittenText = (verb: string): string => (rewritten.length === 0 ? '' : ` and ${verb} ${rewritten.length} unchanged one(s) again (same sequence, a new generation based there)`);
  const moved = result.heads.filter((head) => head.decision === 'moved');
  const apply = asked && !refused;
  if (apply && written.length > 0) {
    const from = source.kind === 'history' ? `history: ${source.table ?? outboxTable}` : source.subscribers.map((subscriber) => subscriber.subscriberName);
    context.io.stderr(`${JSON.stringify({ audit: 'outbox-heads', at: context.now().toISOString(), by: context.user, outboxTable, from, set: written.map(({ aggregateId, current, target, decision }) => ({ aggregateId, from: current, to: target, decision })) })}\n`);
  }
  if (parsed.values.json === true) {
    const listed = undrained.map(({ table, aggregateId, sequence, eventId }) => ({ table, aggregateId, sequence, ...(eventId === undefined ? {} : { eventId }) }));
    context.io.stdout(`${JSON.stringify({ dryRun: !apply, ...(refused ? { refused: REFUSED_UNDRAINED } : {}), outboxTable, heads: result.heads, ...(undrained.length === 0 ? {} : { undrained: listed }) }, null, 2)}\n`);
  } else {
    const rows = result.heads.map((head) => [
      head.aggregateId,
      String(head.current),
      String(head.target),
      `${!apply && head.decision === 'set' ? 'would set' : !apply && head.decision === 'back' ? 'would set back' : !apply && head.decision === 'unchanged' ? UNCHANGED_WOULD_WRITE_TEXT : DECISION_TEXT[head.decision]}${head.fromFences === true ? ' (from the fences: the history is older than the generation they applied)' : ''}`,
    ]);
    const table = rows.length === 0 ? 'the source knows no aggregate\n' : formatTable(['AGGREGATE', 'HEAD NOW', 'SOURCE', 'DECISION'], rows);
    const outcome = refused
      ? `${REFUSED_UNDRAINED}: nothing written in ${terminalText(outboxTable)} (see the events named above)`
      : apply
      ? `set ${toSet.length} head(s)${rewrittenText('wrote')} in ${terminalText(outboxTable)}${moved.length === 0 ? '' : `; ${moved.length} moved by a producer meanwhile, not overwritten: run again`}`
      : `dry run: would set ${toSet.length} head(s)${rewrittenText('write')} in ${terminalText(outboxTable)}; run again with --yes to set them`;
    // without the subscribers nothing tells a history older than what they followed (the model's seed 308844549)
    const unchecked = fromHistory && !named ? "note: no subscriber named, so the history was not checked against the fences: name every ordered subscriber (--subscriber-output) so an aggregate they applied from a newer table than this history is carried from their fences\n" : '';
    context.io.stdout(`${table}${outcome}\n${unchecked}`);
  }
  return refused || moved.length > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
}

/**
 * The events `outbox heads --from-fences` would hand out again: those the outbox table and the table restored from or
 * replaced (`--previous-outbox-table`, when it still exists) hold past the head the carry leaves each aggregate at (its
 * target, or the head it keeps when 'ahead'; an aggregate no fence knows keeps its head). A previous table that no
 * longer exists is said in a note (its events in flight can not be seen).
 */
async function undrainedOf(
  context: CommandContext,
  outbox: { readonly outboxTable: string; readonly partitionKeyName: string; readonly sortKeyName?: string },
  source: OrderedHeadsSource,
  previous: unknown,
): Promise<{ readonly undrained: UndrainedEvent[]; readonly plan: { readonly heads: readonly HeadCarry[] } }> {
  const { outboxTable, partitionKeyName, sortKeyName } = outbox;
  const dry = await carryOrderedHeads({
    client: context.client(),
    outbox: { outboxTableName: outboxTable, partitionKeyName, ...(sortKeyName === undefined ? {} : { sortKeyName }) },
    source,
    apply: false,
    now: () => context.now(),
  });
  const after = new Map(dry.heads.map((head) => [head.aggregateId, head.decision === 'ahead' ? head.current : head.target] as const));
  const documents = toDocumentClient(context.client());
  const headItem = async (aggregateId: string): Promise<Record<string, unknown> | undefined> => {
    const key = orderedHeadKey(aggregateId);
    return (await documents.send(new GetCommand({ TableName: outboxTable, Key: { [partitionKeyName]: key, ...(sortKeyName === undefined ? {} : { [sortKeyName]: key }) }, ConsistentRead: true }))).Item;
  };
  const kept = new Map<string, number>();
  const headOf = async (aggregateId: string): Promise<number> => {
    const sequence = (await headItem(aggregateId))?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE];
    return typeof sequence === 'number' ? sequence : 0;
  };
  // a head set back abandons its generation past the target: the carry itself says no named fence can ever apply those
  // events (each is dead-lettered, to be written again), so they are not waited for (review ro12b, RO12B-1)
  const abandoned = new Map<string, number>();
  for (const head of dry.heads) {
    if (head.decision !== 'back') continue;
    const generation = (await headItem(head.aggregateId))?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE];
    abandoned.set(head.aggregateId, typeof generation === 'number' ? generation : 0);
  }
  const tables = [outboxTable, ...(typeof previous === 'string' && previous !== outboxTable ? [previous] : [])];
  const found: UndrainedEvent[] = [];
  for (const table of tables) {
    let events: CommittedOrderedEvent[];
    try {
      events = await committedOrderedEvents(documents, table);
    } catch (error) {
      if (!isMissingTable(error) || table === outboxTable) throw error;
      context.io.stderr(`note: --previous-outbox-table ${terminalText(table)} does not exist: its events still in flight can not be seen; drain the subscribers' queues and dead-letter queues before the carry\n`);
      continue;
    }
    // each against the head its aggregate is left at
    for (const event of events) {
      if (!after.has(event.aggregateId) && !kept.has(event.aggregateId)) kept.set(event.aggregateId, await headOf(event.aggregateId));
      if (event.sequence <= (after.get(event.aggregateId) ?? kept.get(event.aggregateId)!)) continue;
      if (abandoned.get(event.aggregateId) === event.generation) continue;
      found.push(event);
    }
  }
  return { undrained: found, plan: dry };
}

export const outboxCommand: Command = {
  name: 'outbox',
  summary: "carry an ordered outbox's heads over to a restored or new outbox table",
  usage: USAGE,
  options: {
    'outbox-table': { type: 'string' },
    'partition-key': { type: 'string' },
    'sort-key': { type: 'string' },
    'no-sort-key': { type: 'boolean' },
    'from-history': { type: 'boolean' },
    'history-table': { type: 'string' },
    'previous-outbox-table': { type: 'string' },
    'previous-outbox-gone': { type: 'boolean' },
    'from-fences': { type: 'boolean' },
    'allow-undrained': { type: 'boolean' },
    'subscriber-output': { type: 'string', multiple: true },
    subscriber: { type: 'string', multiple: true },
    table: { type: 'string', multiple: true },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run: async (parsed, context) => {
    const [subcommand, ...rest] = parsed.positionals;
    if (subcommand !== 'heads') return context.usageError(subcommand === undefined ? 'missing subcommand (heads)' : `unknown subcommand '${subcommand}'`);
    if (rest.length > 0) return context.usageError(`'outbox heads' takes no arguments, got ${rest.join(' ')}`);
    return heads(parsed, context);
  },
};
