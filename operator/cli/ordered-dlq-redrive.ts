/**
 * `dlq redrive` of an ordered subscriber (docs/ORDERED-DELIVERY.md, "Operating"): its dead letters go back to its FIFO
 * queue in the order its sequence fences admit them (`planOrderedRedrive`), the aggregate as the message group and the
 * dead letter's message id as the deduplication id. Only what the fences admit now is sent: a dead letter behind a gap
 * (a sequence after the fence no dead letter holds) stays in the dead-letter queue, named with the gap and the tools that
 * fill or pass it (`fence replay`, `fence skip`), since sent now it would only hold up its aggregate and come back. What
 * the fence shows applied stays too (a copy is a duplicate by design). The deduplication window rule of the standard
 * subscribers does not apply: the fence answers a copy of an applied event after its inbox record expired.
 */
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { planOrderedRedrive, type OrderedDeadLetter } from '../ordered/redrive-plan';
import { OrderedEventRecords } from '../ordered/ordered-event-records';
import { SequenceFences } from '../ordered/sequence-fences';
import { formatTable } from './blocked-command';
import { deadLetterView } from './dead-letters/dead-letter-view';
import { gapLines, orderedDecisions, type OrderedDecision } from './dead-letters/ordered-sends';
import { releaseMessages, type QueueMessage } from './dead-letters/queue-messages';
import { holdRestored, restoreRefusalLines } from './dead-letters/restore-hold';
import { provenDuplicates, readOrderedDeadLetters, returnedLine, unreadLine, type OrderedQueueRead } from './dead-letters/ordered-queue-read';
import type { ResolvedSubscriber } from './deployed-subscriber';
import { EXIT_CODE, type CommandContext } from './command';
import { terminalText } from './terminal-text';

/** What `dlq redrive` resolved before it knew the subscriber is ordered. */
export interface OrderedRedriveRequest {
  readonly subscriber: ResolvedSubscriber;
  readonly deadLetterQueueUrl: string;
  readonly reasons: readonly string[];
  readonly eventIds: readonly string[];
  readonly limit: number;
  /** --yes (or the operator said yes at the prompt). */
  readonly move: boolean;
  readonly asJson: boolean;
}

/**
 * Why `dlq redrive` refuses `--allow-expired` and `--allow-reapply` for an ordered subscriber (exit code 2): the
 * ordered redrive sends every dead letter its sequence fences admit whatever its age (no deduplication window to pass),
 * and the fence answers a letter at or below it however it is sent, so neither option could move anything more; a
 * letter past the window without an inbox record (`unproven`) is the operator's to decide. The ordered model checks
 * this reason (test/support/model/ordered-world.ts).
 */
export function orderedRedriveOptionRefusal(option: 'allow-expired' | 'allow-reapply', subscriberName: string): string {
  return (
    `--${option} does not apply to the ordered subscriber '${subscriberName}': its redrive sends every dead letter its sequence fences admit, whatever its age, ` +
    'and a letter at or below a fence is answered by the fence however it is sent (one past the deduplication window without an inbox record is listed ' +
    "as unproven: check the subscriber's own state, and write it again through OrderedOutbox only if it was never applied)"
  );
}

const WORDING = { held: 'dead letter', left: 'left in the dead-letter queue' };

function decisionText(decisions: readonly OrderedDecision[], eventIdOf: ReadonlyMap<string, string | undefined>, removable: ReadonlySet<string>, moved: boolean): string {
  if (decisions.length === 0) return 'no dead letters match\n';
  return formatTable(
    ['EVENT ID', 'AGGREGATE', 'SEQUENCE', 'DECISION', 'WHY'],
    decisions.map((item) => [
      eventIdOf.get(item.id) ?? item.id,
      item.aggregateId ?? '-',
      item.sequence === undefined ? '-' : String(item.sequence),
      item.decision === 'send' ? 'redrive' : item.decision === 'waiting' ? 'waits (left)' : `${item.decision === 'copy' ? 'copy' : item.decision === 'applied' ? 'applied' : 'left'}${item.decision === 'copy' || item.decision === 'applied' ? (removable.has(item.id) ? (moved ? ' (deleted)' : ' (deleted with --yes)') : ' (left)') : ''}`,
      item.why ?? '',
    ]),
  );
}

/**
 * Plans, and with `move` sends, the redrive of an ordered subscriber's dead letters: the queue read whole when it moves
 * (the proven duplicates in front of an aggregate deleted, what the fences admit sent, read again), once when it does
 * not. Returns the exit code: 3 while letters are left, a gap is named or letters were not read.
 */
export async function redriveOrderedDeadLetters(context: CommandContext, request: OrderedRedriveRequest, confirm: (count: number, text: string) => Promise<boolean>): Promise<number> {
  const { subscriber } = request;
  if (subscriber.inboxTable === undefined) {
    return context.usageError(`'dlq redrive' of the ordered subscriber '${subscriber.subscriberName}' needs --table (its inbox table, where its sequence fences are) or --subscriber-output`);
  }
  const fences = new SequenceFences({ client: context.client(), tableName: subscriber.inboxTable, subscriberName: subscriber.subscriberName, now: () => context.now() });
  // aged as the consumer ages events: a letter without a record older than the window is unproven, not never applied
  const records = new OrderedEventRecords({
    client: context.client(),
    tableName: subscriber.inboxTable,
    subscriberName: subscriber.subscriberName,
    now: () => context.now(),
    ...(subscriber.deduplicationWindowSeconds === undefined ? {} : { deduplicationWindowSeconds: subscriber.deduplicationWindowSeconds }),
  });
  const sqs = context.sqsClient();
  const eventIdOf = new Map<string, string | undefined>();
  const select = (message: QueueMessage): OrderedDeadLetter | undefined => {
    const view = deadLetterView(message, 'queue');
    const mine = view.subscriber === undefined || view.subscriber === subscriber.subscriberName;
    const wanted = (request.reasons.length === 0 || request.reasons.includes(view.reason)) && (request.eventIds.length === 0 || (view.eventId !== undefined && request.eventIds.includes(view.eventId)));
    if (!mine || !wanted) return undefined;
    eventIdOf.set(message.messageId, view.eventId);
    const errorName = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue;
    return { id: message.messageId, body: message.body, ...(errorName === undefined ? {} : { errorName }) };
  };
  // review ro13 (RO13-10): after an inbox restore without 'fence carry', what is above a fence may have been applied
  const hold = holdRestored(context, subscriber.inboxTable, subscriber.subscriberName, fences, (letters) => planOrderedRedrive(letters, fences, records));
  const reading = { sqs, deadLetterQueueUrl: request.deadLetterQueueUrl, limit: request.limit, select, plan: hold.plan };
  let read = await readOrderedDeadLetters(request.move ? { ...reading, sendTo: subscriber.queueUrl } : reading);
  try {
    let move = request.move;
    if (!move && !request.asJson) {
      const first = summaryOf(read, eventIdOf, false);
      if (first.toSend + first.toDelete > 0) {
        move = await confirm(first.toSend, `${first.summary}${restoreRefusalLines(hold.refused).map((line) => `${terminalText(line)}\n`).join('')}would redrive ${first.toSend} in sequence, delete ${first.toDelete} proven duplicate(s) and leave ${first.left}\n`);
        if (move) {
          await releaseMessages(sqs, read.held);
          read = await readOrderedDeadLetters({ ...reading, sendTo: subscriber.queueUrl });
        }
      }
    }
    const summarised = summaryOf(read, eventIdOf, move);
    const { toSend, toDelete, decisions } = summarised;
    const refusedLetters = [...hold.refused.values()].reduce((sum, each) => sum + each.letters.length, 0);
    const left = summarised.left + refusedLetters;
    const summary = `${summarised.summary}${restoreRefusalLines(hold.refused).map((line) => `${terminalText(line)}\n`).join('')}`;
    const outcome = move
      ? `redrove ${read.sent.length} to ${subscriber.queueUrl} in sequence per aggregate; deleted ${read.deleted.length} proven duplicate(s); left ${left} in the dead-letter queue`
      : `dry run: would redrive ${toSend} in sequence per aggregate, delete ${toDelete} proven duplicate(s) and leave ${left}; run again with --yes to move them`;
    if (request.asJson) {
      context.io.stdout(
        `${JSON.stringify(
          {
            dryRun: !move,
            ordered: true,
            method: 'send-and-delete',
            skipped: read.skipped,
            truncated: read.unread > 0,
            unread: read.unread,
            decisions: [
              ...decisions.map((item) => ({ ...item, eventId: eventIdOf.get(item.id), messageId: item.id })),
              // letters first read after their event was sent: left in the dead-letter queue (review ro13, RO13-4)
              ...read.returned.map((id) => ({ id, eventId: eventIdOf.get(id), messageId: id, decision: 'returned', why: returnedLine(1) })),
            ],
            gaps: read.plan.gaps,
            ...(hold.refused.size === 0 ? {} : { refused: Object.fromEntries(hold.refused) }),
            ...(move ? { moved: [...read.sent], deleted: [...read.deleted], returned: [...read.returned] } : {}),
          },
          null,
          2,
        )}\n`,
      );
    } else {
      context.io.stdout(`${summary}${outcome}\n`);
    }
    return left > 0 || read.unread > 0 || Object.keys(read.plan.gaps).length > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
  } finally {
    await releaseMessages(sqs, read.held);
  }
}

/** The decisions of a read, the text that shows them and its counts: sent (or to send), deleted (or to delete), left. */
function summaryOf(read: OrderedQueueRead, eventIdOf: ReadonlyMap<string, string | undefined>, moved: boolean): { summary: string; toSend: number; toDelete: number; left: number; decisions: OrderedDecision[] } {
  const removable = new Set(provenDuplicates(read.plan).map((letter) => letter.id));
  const decisions = orderedDecisions(read.plan, { ...WORDING, removed: moved ? 'deleted from the dead-letter queue' : 'deleted from the dead-letter queue with --yes', unread: read.unread }, removable);
  const toSend = moved ? read.sent.length : decisions.filter((item) => item.decision === 'send').length;
  const toDelete = moved ? read.deleted.length : removable.size;
  const left = decisions.filter((item) => item.decision !== 'send' && !removable.has(item.id)).length + read.returned.length;
  const gaps = gapLines(read.plan, 'dead letter', read.unread).map((line) => `${terminalText(line)}\n`).join('');
  const skippedLine = read.skipped === 0 ? '' : `${read.skipped} dead letter(s) of other subscribers or not matching the filters left where they are\n`;
  const unread = read.unread === 0 ? '' : `${unreadLine(read.unread)}\n`;
  const returned = read.returned.length === 0 ? '' : `${returnedLine(read.returned.length)}: ${read.returned.map((id) => terminalText(eventIdOf.get(id) ?? id)).join(', ')}\n`;
  return { summary: `${decisionText(decisions, eventIdOf, removable, moved)}${gaps}${returned}${skippedLine}${unread}`, toSend, toDelete, left, decisions };
}
