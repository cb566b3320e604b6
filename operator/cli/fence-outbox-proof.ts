/**
 * Whether an outbox table is the one an ordered subscriber applies, before `fence replay` sends its events or `fence
 * skip` moves the fence by its history (review ro12, RO12-2): aggregate ids like `order-42` are shared by flows, so
 * another flow's outbox holds "the same" aggregate with other events, and sending them applies another flow's facts.
 *
 * Proven by, in this order: the subscriber's Operator stack output (`--subscriber-output`, which names its outbox
 * table); the table's history holding the event the fence applied, at its sequence and generation; the subscriber's
 * inbox records of the table's events of the aggregate at or below the fence; its skip record naming them. Refused when
 * the table holds another event where the fence applied its own (in the fence's generation) and no output says it is
 * this subscriber's outbox, or when nothing proves it; the refusal says why and what proves it.
 */
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { SKIPPED_EVENTS, skippedEventsKey } from '../../lambda/contract/ordered-wire-format';
import type { SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { SequenceFenceState } from '../ordered/sequence-fences';
import type { SkipEntry } from '../../lambda/ordered/skipped-events';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { CommandContext } from './command';
import type { HistoryItem } from './ordered-history';
import { terminalText } from './terminal-text';

/** How the table was proven the subscriber's outbox (`proven`, with a `note` the operator must see), or why not. */
export type OutboxProof = { readonly proven: string; readonly note?: string } | { readonly refusal: string };

/** What {@link proveOutbox} looks at. */
export interface OutboxProofRequest {
  readonly subscriber: string;
  readonly inboxTable: string;
  readonly outboxTable: string;
  readonly aggregateId: string;
  readonly fence: SequenceFenceState;
  /** The aggregate's history items in `outboxTable`. */
  readonly items: readonly HistoryItem[];
  /** The subscriber's Operator stack output, when given. */
  readonly deployment?: SubscriberDeployment;
}

/** What a refusal tells the operator to pass when the table is the right one. */
export const OUTBOX_PROOF_ADVICE = "if it is this subscriber's outbox, pass --subscriber-output (the subscriber's Operator stack output, which names its outbox table)";

/** The subscriber's inbox records of `eventIds` (present, expired or not: an expired one still says where the event came from). */
async function recordedIds(context: CommandContext, inboxTable: string, subscriber: string, eventIds: readonly string[]): Promise<string[]> {
  const client = toDocumentClient(context.client());
  const found: string[] = [];
  for (let start = 0; start < eventIds.length && found.length === 0; start += 100) {
    let keys: Array<Record<string, unknown>> | undefined = eventIds.slice(start, start + 100).map((eventId) => ({ [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) }));
    while (keys !== undefined && keys.length > 0) {
      const response = await client.send(new BatchGetCommand({ RequestItems: { [inboxTable]: { Keys: keys, ConsistentRead: true } } }));
      for (const item of response.Responses?.[inboxTable] ?? []) found.push(String(item[TABLE_SCHEMA.PARTITION_KEY]).slice(`${subscriber}#`.length));
      keys = response.UnprocessedKeys?.[inboxTable]?.Keys as Array<Record<string, unknown>> | undefined;
    }
  }
  return found;
}

/** The events the subscriber's skip record of the aggregate names, by sequence and id. */
async function namedBySkips(context: CommandContext, inboxTable: string, subscriber: string, aggregateId: string): Promise<Array<{ sequence: number; eventId: string }>> {
  const item = (await toDocumentClient(context.client()).send(new GetCommand({ TableName: inboxTable, Key: { [TABLE_SCHEMA.PARTITION_KEY]: skippedEventsKey(subscriber, aggregateId) }, ConsistentRead: true }))).Item;
  const skips = (item?.[SKIPPED_EVENTS.SKIPS_ATTRIBUTE] as SkipEntry[] | undefined) ?? [];
  return skips.flatMap((skip) => (skip.dropped ?? []).flatMap((drop) => (drop.eventId === undefined ? [] : [{ sequence: Number(drop.sequence), eventId: drop.eventId }])));
}

/** Proves `outboxTable` is the subscriber's outbox, or says why it is refused. */
export async function proveOutbox(context: CommandContext, request: OutboxProofRequest): Promise<OutboxProof> {
  const { subscriber, inboxTable, outboxTable, aggregateId, fence, items, deployment } = request;
  const table = `outbox table '${terminalText(outboxTable)}'`;
  const fenceGeneration = fence.appliedGeneration ?? 0;
  // the table's event where the fence applied its own, in the fence's generation (another generation's item there is
  // the history of a head that went back, which the fence did not follow: no evidence either way)
  const atFence = items.filter((item) => item.sequence === fence.appliedSequence && item.generation === fenceGeneration);
  const own = fence.appliedEventId === undefined ? undefined : atFence.find((item) => item.eventId === fence.appliedEventId);
  const other = fence.appliedEventId === undefined || own !== undefined ? undefined : atFence[0];
  const otherText =
    other === undefined
      ? ''
      : `${table} holds event ${terminalText(other.eventId)} at sequence ${fence.appliedSequence} of ${terminalText(aggregateId)}${fenceGeneration === 0 ? '' : ` (generation ${fenceGeneration})`}, but the fence applied ${terminalText(fence.appliedEventId ?? '?')} there`;
  if (deployment !== undefined) {
    if (deployment.outboxTable !== outboxTable) {
      return {
        refusal: `${table} is not the outbox of subscriber '${terminalText(subscriber)}': its Operator output (--subscriber-output) names ${deployment.outboxTable === undefined ? 'none' : `'${terminalText(deployment.outboxTable)}'`}; nothing changed`,
      };
    }
    return {
      proven: 'its Operator output (--subscriber-output) names it',
      ...(other === undefined ? {} : { note: `${otherText}: the outbox's head went back (a restore, or a replaced table, whose heads were not carried over) and another event took that sequence` }),
    };
  }
  if (other !== undefined) {
    return { refusal: `${otherText}: not the outbox this subscriber applies (the wrong --outbox-table?), or its head went back and another event took that sequence; nothing changed; ${OUTBOX_PROOF_ADVICE}` };
  }
  if (own !== undefined) return { proven: `its history holds the event the fence applied (${terminalText(own.eventId)}, sequence ${own.sequence})` };
  const below = items.filter((item) => item.sequence <= fence.appliedSequence);
  const recorded = await recordedIds(context, inboxTable, subscriber, below.map((item) => item.eventId));
  if (recorded.length > 0) return { proven: `the subscriber's inbox holds a record of its event ${terminalText(recorded[0]!)}` };
  const skipped = await namedBySkips(context, inboxTable, subscriber, aggregateId);
  const named = skipped.find((drop) => items.some((item) => item.sequence === drop.sequence && item.eventId === drop.eventId));
  if (named !== undefined) return { proven: `the subscriber's skip record names its event ${terminalText(named.eventId)} (sequence ${named.sequence})` };
  const why =
    fence.appliedSequence === 0
      ? `the subscriber applied nothing of ${terminalText(aggregateId)} yet`
      : fence.appliedEventId === undefined
        ? `the fence of ${terminalText(aggregateId)} was moved by 'fence skip' (it names no applied event), and no inbox or skip record of the subscriber names an event of this table`
        : `this table holds no history item of the event the fence applied (${terminalText(fence.appliedEventId)}, sequence ${fence.appliedSequence}: past the outbox's event retention, or never in this table), and no inbox or skip record of the subscriber names an event of it`;
  return { refusal: `nothing proves ${table} is the outbox subscriber '${terminalText(subscriber)}' applies: ${why}; another flow's outbox may hold an aggregate of the same id; nothing changed; ${OUTBOX_PROOF_ADVICE}` };
}
