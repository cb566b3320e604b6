/**
 * `replay` to an ordered subscriber (docs/ORDERED-DELIVERY.md, "Operating"): the events are read from the ordered
 * outbox's history items (one per event, kept for the outbox's event retention) and planned against the subscriber's
 * sequence fences with the dead-letter redrive's plan (`planOrderedRedrive`): an event at or below the fence is a
 * duplicate by design and is not sent (the fence would answer it); the events the fence admits now go to the FIFO
 * queue in sequence, the aggregate as the message group and a deduplication id per run and event
 * (replay-deduplication.ts); an event behind a sequence that is not among those replayed is not sent, named with the
 * missing sequence (it would only wait).
 */
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { planOrderedRedrive } from '../ordered/redrive-plan';
import { OrderedEventRecords } from '../ordered/ordered-event-records';
import { SequenceFences } from '../ordered/sequence-fences';
import { formatTable } from './blocked-command';
import { gapLines, orderedDecisions, sendOrdered } from './dead-letters/ordered-sends';
import { EXIT_CODE, type CommandContext } from './command';
import { PAST_RETENTION_TEXT, outboxEventsById, outboxEventsInRange, pastRetention, type OutboxLocation, type OutboxEvent } from './outbox-events';
import { replayDeduplicationIds } from './replay-deduplication';
import { terminalText } from './terminal-text';

/** What `replay` resolved before it knew the subscriber is ordered. */
export interface OrderedReplayRequest {
  readonly subscriberName: string;
  readonly queueUrl: string;
  readonly inboxTable: string;
  /** The subscriber's deduplication window in seconds. @default none: every event below the fence without an inbox record is unproven */
  readonly deduplicationWindowSeconds?: number;
  readonly location: OutboxLocation;
  readonly eventIds: readonly string[];
  readonly range?: { readonly sinceEpochMs: number; readonly untilEpochMs: number; readonly types: readonly string[] };
  /** --yes */
  readonly send: boolean;
  readonly asJson: boolean;
}

const WORDING = { held: 'replayed event', left: 'not sent' };

/**
 * The ordered outbox's events of the request (its history items), and the ids it does not hold. With
 * `nowEpochMilliseconds`, a history item past its TTL is taken as not held (in `missing`): past the retention the
 * payload bucket's lifecycle counts on, though DynamoDB may not have deleted it yet.
 */
export async function orderedHistoryEvents(
  request: Pick<OrderedReplayRequest, 'location' | 'eventIds' | 'range'>,
  nowEpochMilliseconds?: number,
): Promise<{ events: OutboxEvent[]; missing: string[]; pastRetention: OutboxEvent[] }> {
  const location = { ...request.location, recordType: ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE };
  const read = request.range !== undefined ? { events: await outboxEventsInRange(location, request.range), missing: [] as string[] } : await outboxEventsById(location, request.eventIds);
  if (nowEpochMilliseconds === undefined) return { ...read, pastRetention: [] };
  const expired = read.events.filter((event) => pastRetention(event, nowEpochMilliseconds));
  return {
    events: read.events.filter((event) => !pastRetention(event, nowEpochMilliseconds)),
    missing: [...read.missing, ...expired.map((event) => event.envelope.id)],
    pastRetention: expired,
  };
}

/** Plans, and with `send` sends, a replay to an ordered subscriber. Returns the exit code. */
export async function replayOrdered(context: CommandContext, request: OrderedReplayRequest, confirm: (count: number) => Promise<boolean>): Promise<number> {
  const read = await orderedHistoryEvents(request, context.now().getTime());
  const events = read.events;
  // past the TTL: named apart (pastRetention, with when), as 'replay' does to a standard subscriber (review rx15, RX15-5)
  const expiredIds = new Set(read.pastRetention.map((event) => event.envelope.id));
  const missing = read.missing.filter((id) => !expiredIds.has(id));
  const pastRetentionOf = read.pastRetention.map((event) => ({ eventId: event.envelope.id, expiredAt: new Date(event.expiresAtEpochSeconds! * 1000).toISOString() }));
  const fences = new SequenceFences({ client: context.client(), tableName: request.inboxTable, subscriberName: request.subscriberName, now: () => context.now() });
  // the history outlives the inbox's records: an event below the fence without one is called never applied only while
  // younger than the window (from its write time); older, or of an unprovable age, it is unproven (review r8b, R8b-10)
  const records = new OrderedEventRecords({
    client: context.client(),
    tableName: request.inboxTable,
    subscriberName: request.subscriberName,
    now: () => context.now(),
    ...(request.deduplicationWindowSeconds === undefined ? {} : { deduplicationWindowSeconds: request.deduplicationWindowSeconds }),
  });
  const plan = await planOrderedRedrive(
    events.map((event) => ({ id: event.envelope.id, body: event.body })),
    fences,
    records,
  );
  const decisions = orderedDecisions(plan, WORDING);
  const toSend = decisions.filter((item) => item.decision === 'send');
  const duplicates = decisions.filter((item) => item.decision === 'applied');
  const waiting = decisions.filter((item) => item.decision === 'waiting' || item.decision === 'unordered');
  // below the fence, no inbox record, and too old (or of an unprovable age) to call never applied: refused, with why
  const unproven = decisions.filter((item) => item.decision === 'unproven');
  const bodyOf = new Map(events.map((event) => [event.envelope.id, event.body]));
  let send = request.send;
  if (!send && toSend.length > 0 && !request.asJson) send = await confirm(toSend.length);
  const sent: Array<{ eventId: string; messageId?: string }> = [];
  if (send) {
    // per run: a replay run again within 5 minutes is not dropped as a resend of the first (review ro15, RO15-3)
    const deduplication = replayDeduplicationIds();
    for (const item of toSend) {
      const messageId = await sendOrdered(context.sqsClient(), request.queueUrl, { body: bodyOf.get(item.id)!, aggregateId: item.aggregateId!, deduplicationId: deduplication.of(item.id) });
      sent.push({ eventId: item.id, ...(messageId === undefined ? {} : { messageId }) });
    }
  }
  if (request.asJson) {
    context.io.stdout(
      `${JSON.stringify(
        {
          dryRun: !send,
          ordered: true,
          subscriber: request.subscriberName,
          events: decisions.map((item) => ({ eventId: item.id, aggregateId: item.aggregateId, sequence: item.sequence, decision: item.decision, ...(item.copyOf === undefined ? {} : { copyOf: item.copyOf }), ...(item.why === undefined ? {} : { why: item.why }) })),
          gaps: plan.gaps,
          missing,
          pastRetention: pastRetentionOf,
          ...(send ? { sent } : {}),
        },
        null,
        2,
      )}\n`,
    );
  } else {
    const rows = decisions.map((item) => [
      item.id,
      item.aggregateId ?? '-',
      item.sequence === undefined ? '-' : String(item.sequence),
      item.decision === 'send' ? 'replay' : item.decision === 'applied' ? 'duplicate' : item.decision === 'copy' ? 'copy (not sent)' : 'not sent',
      item.why ?? '',
    ]);
    const table = rows.length === 0 ? 'no events match\n' : formatTable(['EVENT ID', 'AGGREGATE', 'SEQUENCE', 'DECISION', 'WHY'], rows);
    const missingLine =
      (missing.length === 0 ? '' : `not in the outbox history (never written, or past its retention): ${missing.map(terminalText).join(' ')}\n`) +
      (pastRetentionOf.length === 0 ? '' : `${PAST_RETENTION_TEXT}: ${pastRetentionOf.map((event) => terminalText(event.eventId)).join(' ')}\n`);
    const gaps = gapLines(plan, 'replayed event').map((line) => `${terminalText(line)}\n`).join('');
    const duplicatesText = duplicates.length === 0 ? '' : `; ${duplicates.length} at or below the fence are duplicates by design, not sent`;
    const waitingText =
      (waiting.length === 0 ? '' : `; ${waiting.length} not sent (behind a gap, or not ordered)`) +
      (unproven.length === 0 ? '' : `; ${unproven.length} below the fence without an inbox record and not provably never applied (older than the window, or of an unprovable age), not sent: see WHY`);
    const outcome = send
      ? `sent ${sent.length} to ${request.queueUrl} in sequence per aggregate for subscriber '${request.subscriberName}'${duplicatesText}${waitingText}`
      : `dry run: would send ${toSend.length} in sequence per aggregate${duplicatesText}${waitingText}; run again with --yes to send them`;
    context.io.stdout(`${table}${missingLine}${gaps}${outcome}\n`);
  }
  return waiting.length > 0 || unproven.length > 0 || missing.length > 0 || pastRetentionOf.length > 0 || Object.keys(plan.gaps).length > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
}
