/**
 * What the operator commands share for an ordered subscriber (docs/ORDERED-DELIVERY.md, "Operating"): the send of an
 * event to its FIFO queue (the aggregate as the message group), and what each entry of a fence's plan
 * (`planOrderedRedrive`) means for the operator: sent now, waiting behind a gap, applied already, not ordered.
 * `dlq redrive`, `replay` and `fence redrive` use it, so they say the same thing the same way.
 */
import { SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import type { OrderedRedrivePlan, PlannedDeadLetter } from '../../ordered/redrive-plan';
import { terminalText } from '../terminal-text';

/** True when `queueUrl` names an SQS FIFO queue (their names end in `.fifo`, as the URL does). */
export function isFifoQueueUrl(queueUrl: string): boolean {
  return queueUrl.endsWith('.fifo');
}

/**
 * Sends one ordered event to a FIFO queue: `aggregateId` as the message group, so the queue keeps it behind the
 * aggregate's earlier messages, and `deduplicationId` (unique to the copy, or the event id) so SQS drops a resend
 * within its 5-minute deduplication interval. Returns the new message id.
 */
export async function sendOrdered(
  client: SQSClient,
  queueUrl: string,
  message: { readonly body: string; readonly aggregateId: string; readonly deduplicationId: string; readonly messageAttributes?: Readonly<Record<string, MessageAttributeValue>> },
): Promise<string | undefined> {
  const attributes = message.messageAttributes ?? {};
  const response = await client.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: message.body,
      MessageGroupId: message.aggregateId,
      MessageDeduplicationId: message.deduplicationId,
      ...(Object.keys(attributes).length === 0 ? {} : { MessageAttributes: { ...attributes } }),
    }),
  );
  return response.MessageId;
}

/** What becomes of one entry of a fence's plan. */
export interface OrderedDecision {
  readonly id: string;
  readonly aggregateId?: string;
  readonly sequence?: number;
  /** `send`: the fence admits it now; `waiting`: behind a gap; `applied`: at or below the fence;
   * `reused`: never applied, another event holds its sequence (write it again as a new event); `unproven`: at or below
   * the fence with no inbox record, but too old (or of an unprovable age) to call never applied; `copy`: another letter
   * of an event planned once as `reused` or `unproven` (`copyOf` names that one: delete it with it, never write it
   * again); `unordered`: no position. */
  readonly decision: 'send' | 'waiting' | 'applied' | 'reused' | 'unproven' | 'copy' | 'unordered';
  readonly why?: string;
  /** For a `copy`, the id of the entry of the same event the plan decided for. @default undefined for the other decisions */
  readonly copyOf?: string;
}

/** Words of the decisions' explanations, by what is planned (dead letters or events replayed from the outbox). */
export interface OrderedWording {
  /** What holds the entries: 'dead letter' or 'replayed event'. */
  readonly held: string;
  /** What becomes of an entry not sent: 'left in the dead-letter queue' or 'not sent'. */
  readonly left: string;
  /**
   * What becomes of an entry the caller deletes as a proven duplicate (`removable` of {@link orderedDecisions}).
   * @default `left`
   */
  readonly removed?: string;
  /**
   * Letters of the dead-letter queue the read did not read: a gap's sequence may be among them, so no skip is advised
   * (review ro13, RO13-8). @default 0
   */
  readonly unread?: number;
}

/**
 * What a gap means while letters of the dead-letter queue were not read (review ro13, RO13-8): the missing sequences
 * may be among them, so nothing may be skipped, and a redrive with --yes reads past the letters in front.
 */
export function unreadGapAdvice(missing: readonly number[], unread: number): string {
  return (
    `sequence ${missing.join(', ')} may be among the ${unread} letter(s) not read: never skip it while letters are unread; ` +
    "'dlq redrive --yes' or 'fence redrive --yes' reads past the letters in front of it"
  );
}

function waitingWhy(letter: PlannedDeadLetter, plan: OrderedRedrivePlan, wording: OrderedWording): string {
  const unread = wording.unread ?? 0;
  const missing = plan.gaps[letter.aggregateId] ?? [];
  const before = missing.filter((sequence) => sequence < letter.sequence);
  if (unread > 0) {
    return (
      `waits for sequence ${before.join(', ')} of ${letter.aggregateId}, which no ${wording.held} read holds: ${unreadGapAdvice(before, unread)}; ` +
      `sent now it would be retried until then, holding up the aggregate's later events: ${wording.left}`
    );
  }
  return (
    `waits for sequence ${before.join(', ')} of ${letter.aggregateId}, which no ${wording.held} here holds (in flight, left out, or lost); ` +
    `sent now it would be retried until then, holding up the aggregate's later events, and come back after maxReceiveCount receives if never filled: ` +
    `${wording.left}. Fill the gap ('fence replay' from the outbox history), or, if it is lost for good, 'fence skip'; then run this again`
  );
}

/** What showed an `alreadyApplied` entry applied (checked by the plan: the fence, the inbox record, a fence skip). */
export function appliedWhy(letter: PlannedDeadLetter): string {
  if (letter.recognisedBy === 'fence') return 'the fence holds this event id at its sequence';
  if (letter.recognisedBy === 'inbox record') return "the subscriber's inbox holds a live record of this event id";
  if (letter.recognisedBy === 'fence skip') return "an operator's fence skip dropped this event (the consumer acknowledges it unapplied, on purpose)";
  return 'a copy of one sent';
}

/**
 * What the instruction to write a `reused` letter again adds about its copies: how many the plan holds (written once,
 * deleted with it), and that a copy arriving after the rewrite is not recognised.
 */
export function copiesNote(letter: PlannedDeadLetter, plan: OrderedRedrivePlan, held: string): string {
  const count = plan.copies.filter((copy) => copy.copyOf === letter.id).length;
  return (
    (count === 0 ? '' : `; ${count} more ${held}(s) of this event are its copies (listed as copy): write it again once, and delete them with it`) +
    `; nothing records a rewrite, so a copy of this event that arrives after it was written again is listed as never applied again: write it again only if no earlier letter of event ${letter.eventId ?? '?'} was`
  );
}

/** For an `unproven` entry: how many copies of its event the plan holds (decided with it, never written again on their own). */
function unprovenCopies(letter: PlannedDeadLetter, plan: OrderedRedrivePlan, held: string): string {
  const count = plan.copies.filter((copy) => copy.copyOf === letter.id).length;
  return count === 0 ? '' : `; ${count} more ${held}(s) of this event are its copies (listed as copy): decide once, and delete them with it`;
}

/**
 * Each entry of `plan` with what becomes of it: `ready` sent, `waiting` held, the rest not sent; those in `removable`
 * (applied or copies the caller deletes as proven duplicates) said `wording.removed`.
 */
export function orderedDecisions(plan: OrderedRedrivePlan, wording: OrderedWording, removable: ReadonlySet<string> = new Set()): OrderedDecision[] {
  const gone = (id: string): string => (removable.has(id) ? (wording.removed ?? wording.left) : wording.left);
  const sent = new Set(plan.redrive.map((letter) => `${letter.aggregateId}\u0000${letter.sequence}`));
  return [
    ...plan.ready.map((letter): OrderedDecision => ({ id: letter.id, aggregateId: letter.aggregateId, sequence: letter.sequence, decision: 'send' })),
    ...plan.waiting.map((letter): OrderedDecision => ({ id: letter.id, aggregateId: letter.aggregateId, sequence: letter.sequence, decision: 'waiting', why: waitingWhy(letter, plan, wording) })),
    ...plan.alreadyApplied.map(
      (letter): OrderedDecision => ({
        id: letter.id,
        aggregateId: letter.aggregateId,
        sequence: letter.sequence,
        decision: 'applied',
        why: sent.has(`${letter.aggregateId}\u0000${letter.sequence}`)
          ? `a second copy of sequence ${letter.sequence}, whose first is sent: ${gone(letter.id)}`
          : `at or below the fence and ${appliedWhy(letter)}, so a copy is a duplicate by design: ${gone(letter.id)}`,
      }),
    ),
    ...plan.reused.map(
      (letter): OrderedDecision => ({
        id: letter.id,
        aggregateId: letter.aggregateId,
        sequence: letter.sequence,
        decision: 'reused',
        why:
          `never applied: another event holds sequence ${letter.sequence} (a SequenceReusedError, another event id than the one applied there, or at or below the fence with no inbox record of this event id), so the fence refuses it again; ` +
          `write it again through OrderedOutbox as a new event with its data, then delete the dead letter (docs/ORDERED-DELIVERY.md, "Restoring the outbox table")${copiesNote(letter, plan, wording.held)}: ${wording.left}`,
      }),
    ),
    ...plan.unproven.map(
      (letter): OrderedDecision => ({
        id: letter.id,
        aggregateId: letter.aggregateId,
        sequence: letter.sequence,
        decision: 'unproven',
        why:
          `at or below the fence (the fence answers a copy), ${letter.why ?? 'no inbox record of it'}: it may have been applied, so it is not called never applied and must not be written again as a new event unless the subscriber's own state shows it was not applied ` +
          `(docs/ORDERED-DELIVERY.md, "Restoring the outbox table", step 5)${unprovenCopies(letter, plan, wording.held)}: ${wording.left}`,
      }),
    ),
    ...plan.copies.map(
      (letter): OrderedDecision => ({
        id: letter.id,
        aggregateId: letter.aggregateId,
        sequence: letter.sequence,
        decision: 'copy',
        copyOf: letter.copyOf!,
        why: `a copy of ${wording.held} ${letter.copyOf ?? '?'} (the same event ${letter.eventId ?? '?'}, at this or another sequence), which is planned once above: never write it again (a second application) nor redrive it; delete it with that one: ${gone(letter.id)}`,
      }),
    ),
    ...plan.unordered.map((letter): OrderedDecision => ({ id: letter.id, decision: 'unordered', why: `not an ordered event (no aggregate and sequence): ${wording.left}` })),
  ];
}

/**
 * One line per gap: the sequences no entry holds, and the tools that fill or pass them; while `unread` letters were not
 * read, that they may be among them instead (never the skip). @param unread letters not read @default 0
 */
export function gapLines(plan: OrderedRedrivePlan, held: string, unread = 0): string[] {
  return Object.entries(plan.gaps).map(([aggregateId, missing]) =>
    unread > 0
      ? `gap: ${terminalText(aggregateId)}: no ${held} read holds ${missing.join(', ')}: ${unreadGapAdvice(missing, unread)}`
      : `gap: ${terminalText(aggregateId)}: no ${held} holds ${missing.join(', ')} (in flight, or lost: 'fence replay' from the outbox, or 'fence skip')`,
  );
}
