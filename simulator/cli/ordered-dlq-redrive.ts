/**
 * `dlq redrive` of an ordered subscriber (docs/ORDERED-DELIVERY.md, "Operating"): its dead letters go back to its FIFO
 * queue in the order its sequence fences admit them (`planOrderedRedrive`), the aggregate as the message group and the
 * dead letter's message id as the deduplication id. Only what the fences admit now is sent: a dead letter behind a gap
 * (a sequence after the fence no dead letter holds) stays in the dead-letter queue, named with the gap and the tools that
 * fill or pass it (`fence replay`, `fence skip`), since sent now it would only hold up its aggregate and come back. What
 * the fence shows applied stays too (a copy is a duplicate by design). The deduplication window rule of the standard
 * subscribers does not apply: the fence answers a copy of an applied event after its inbox record expired.
 */
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { planOrderedRedrive } from '../../lambda/ordered/redrive-plan';
import { OrderedEventRecords } from '../../lambda/ordered/ordered-event-records';
import { SequenceFences } from '../../lambda/ordered/sequence-fences';
import { formatTable } from './blocked-command';
import { deadLetterView } from './dead-letters/dead-letter-view';
import { gapLines, orderedDecisions, sendOrdered, type OrderedDecision } from './dead-letters/ordered-sends';
import { receiveMessages, releaseMessages, type QueueMessage } from './dead-letters/queue-messages';
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

function decisionText(decisions: readonly OrderedDecision[], eventIdOf: ReadonlyMap<string, string | undefined>): string {
  if (decisions.length === 0) return 'no dead letters match\n';
  return formatTable(
    ['EVENT ID', 'AGGREGATE', 'SEQUENCE', 'DECISION', 'WHY'],
    decisions.map((item) => [
      eventIdOf.get(item.id) ?? item.id,
      item.aggregateId ?? '-',
      item.sequence === undefined ? '-' : String(item.sequence),
      item.decision === 'send' ? 'redrive' : item.decision === 'waiting' ? 'waits (left)' : item.decision === 'copy' ? 'copy (left)' : 'left',
      item.why ?? '',
    ]),
  );
}

/** Plans, and with `move` sends, the redrive of an ordered subscriber's dead letters. Returns the exit code. */
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
  const messages = await receiveMessages(sqs, request.deadLetterQueueUrl, request.limit);
  const moved = new Set<string>();
  try {
    const byId = new Map<string, QueueMessage>(messages.map((message) => [message.messageId, message]));
    const eventIdOf = new Map<string, string | undefined>();
    let skipped = 0;
    const letters: Array<{ id: string; body: string }> = [];
    for (const message of messages) {
      const view = deadLetterView(message, 'queue');
      const mine = view.subscriber === undefined || view.subscriber === subscriber.subscriberName;
      const wanted = (request.reasons.length === 0 || request.reasons.includes(view.reason)) && (request.eventIds.length === 0 || (view.eventId !== undefined && request.eventIds.includes(view.eventId)));
      if (!mine || !wanted) {
        skipped += 1;
        continue;
      }
      eventIdOf.set(message.messageId, view.eventId);
      const errorName = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue;
      letters.push({ id: message.messageId, body: message.body, ...(errorName === undefined ? {} : { errorName }) });
    }
    const plan = await planOrderedRedrive(letters, fences, records);
    const decisions = orderedDecisions(plan, WORDING);
    const toSend = decisions.filter((item) => item.decision === 'send');
    const left = decisions.length - toSend.length;
    const gaps = gapLines(plan, 'dead letter').map((line) => `${terminalText(line)}\n`).join('');
    const skippedLine = skipped === 0 ? '' : `${skipped} dead letter(s) of other subscribers or not matching the filters left where they are\n`;
    const summary = `${decisionText(decisions, eventIdOf)}${gaps}${skippedLine}`;
    let move = request.move;
    if (!move && toSend.length > 0 && !request.asJson) move = await confirm(toSend.length, `${summary}would redrive ${toSend.length} in sequence and leave ${left}\n`);
    if (move) {
      for (const item of toSend) {
        const message = byId.get(item.id)!;
        // the dead letter's message id as the deduplication id: unique to this copy, so SQS does not drop it as a resend
        await sendOrdered(sqs, subscriber.queueUrl, { body: message.body, aggregateId: item.aggregateId!, deduplicationId: message.messageId, messageAttributes: message.messageAttributes });
        await sqs.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
        moved.add(item.id);
      }
    }
    const outcome = move
      ? `redrove ${moved.size} to ${subscriber.queueUrl} in sequence per aggregate; left ${left} in the dead-letter queue`
      : `dry run: would redrive ${toSend.length} in sequence per aggregate and leave ${left}; run again with --yes to move them`;
    if (request.asJson) {
      context.io.stdout(
        `${JSON.stringify(
          {
            dryRun: !move,
            ordered: true,
            method: 'send-and-delete',
            skipped,
            truncated: messages.length >= request.limit,
            decisions: decisions.map((item) => ({ ...item, eventId: eventIdOf.get(item.id), messageId: item.id })),
            gaps: plan.gaps,
            ...(move ? { moved: [...moved] } : {}),
          },
          null,
          2,
        )}\n`,
      );
    } else {
      context.io.stdout(`${summary}${outcome}\n`);
    }
    return left > 0 || Object.keys(plan.gaps).length > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
  } finally {
    await releaseMessages(sqs, messages.filter((message) => !moved.has(message.messageId)));
  }
}
