/**
 * Whether one dead letter may be redriven, and why not. Pure. The rule that matters: the inbox record of an earlier
 * application lives for the subscriber's deduplication window, counted at the latest from the earliest moment the event
 * could have been applied (its `time`, or when it was first sent). A redriven copy is consumed at the latest when the
 * destination queue's retention runs out, so a dead letter whose age plus that retention (plus a margin for the
 * consumer's own run) reaches the window may meet no record and be applied a second time; it is refused (or, with
 * `allowExpired`, redriven with a warning).
 */
import { RECORD_STATUS } from '../../../lambda/contract/wire-format';
import { aggregateModeRefusal } from '../deployed-subscriber';
import type { CopyWait } from './copy-wait';
import { DEAD_LETTER_REASON, earliestApplicationEpochMilliseconds, type DeadLetterView } from './dead-letter-view';

/** What the redrive knows of the event's record in the subscriber's inbox table. */
export type RecordLookup =
  /** no inbox table was given: nothing known */
  | { readonly kind: 'not-looked-up' }
  | { readonly kind: 'none' }
  | { readonly kind: 'found'; readonly item: Readonly<Record<string, unknown>> };

/** The rules of a redrive. */
export interface RedriveRules {
  /** The subscriber's deduplication window (its inbox records' TTL). */
  readonly deduplicationWindowSeconds: number;
  /** Time kept to spare beyond the copy's wait in the queue: the consumer's own run after it received the copy. */
  readonly safetyMarginSeconds: number;
  readonly nowEpochMilliseconds: number;
  /** Redrive what is past the window, with a warning, instead of refusing it. */
  readonly allowExpired: boolean;
  /** How long the redriven copy can wait in the destination queue. */
  readonly destination: CopyWait;
}

/** Time kept to spare by default beyond the copy's wait in the queue: 1 hour. */
export const DEFAULT_SAFETY_MARGIN_SECONDS = 3600;

/** What to do with one dead letter. */
export interface RedriveDecision {
  readonly redrive: boolean;
  /** Why not (when `redrive` is false). */
  readonly refusal?: string;
  /** What the operator accepted (`allowExpired`). */
  readonly warning?: string;
}

/** A duration in days, hours and minutes (under a minute: seconds), e.g. `26 days 23 hours`, `1 hour`. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole} second${whole === 1 ? '' : 's'}`;
  const parts: Array<[number, string]> = [
    [Math.floor(whole / 86_400), 'day'],
    [Math.floor((whole % 86_400) / 3600), 'hour'],
    [Math.floor((whole % 3600) / 60), 'minute'],
  ];
  return parts
    .filter(([count]) => count > 0)
    .map(([count, unit]) => `${count} ${unit}${count === 1 ? '' : 's'}`)
    .join(' ');
}

/** The rules of {@link windowRefusal}: {@link RedriveRules} without `allowExpired`. */
export type WindowRules = Omit<RedriveRules, 'allowExpired'>;

/**
 * Why a copy of an event that could first have been applied at `earliestEpochMilliseconds`, sent to the destination
 * now, could be applied twice, or undefined when it can not: it is refused when its age plus the destination's
 * retention plus the margin reaches the deduplication window. `copy` names the copy in the text ("redriven",
 * "replayed"), `from` what the earliest moment is (e.g. "when its outbox item was written"). Shared by `dlq redrive` and
 * `replay`.
 */
export function windowRefusal(earliestEpochMilliseconds: number, rules: WindowRules, copy: string, from?: string): string | undefined {
  const ageSeconds = Math.max(0, (rules.nowEpochMilliseconds - earliestEpochMilliseconds) / 1000);
  const { retentionSeconds, known, queueUrl } = rules.destination;
  if (ageSeconds + retentionSeconds + rules.safetyMarginSeconds < rules.deduplicationWindowSeconds) return undefined;
  const [age, retention, window] = [formatDuration(ageSeconds), formatDuration(retentionSeconds), formatDuration(rules.deduplicationWindowSeconds)];
  return (
    `its event is ${age} old (from ${new Date(earliestEpochMilliseconds).toISOString()}${from === undefined ? '' : `, ${from}`}); a ${copy} copy can wait up to ${retention}` +
    `${known ? '' : ' (assumed: the SQS maximum)'} in ${queueUrl} before it is consumed ` +
    `(${known ? "the queue's MessageRetentionPeriod" : 'its MessageRetentionPeriod could not be read'}), and ${age} + ${retention} ` +
    `(+ ${formatDuration(rules.safetyMarginSeconds)} to spare) passes the deduplication window of ${window}: the inbox record of an earlier ` +
    `application may be gone when the copy is consumed, so the ${copy} copy could apply it twice`
  );
}

/** Decides whether `view` may be redriven to its subscriber's queue. */
export function decideRedrive(view: DeadLetterView, record: RecordLookup, rules: RedriveRules): RedriveDecision {
  if (view.queueKind === 'relay') {
    return { redrive: false, refusal: 'a relay dead letter holds stream batch metadata, not the events: replay them from the outbox (idempotent-event-flow replay)' };
  }
  if (view.envelope === undefined) {
    return { redrive: false, refusal: `its body is not an event envelope (${view.envelopeError ?? 'unreadable'}): a redrive would dead-letter it again; inspect it, then delete it` };
  }
  // a blocked message SQS moved after a redrive carries the block as its previous reason: its record is checked too
  if (view.reason === DEAD_LETTER_REASON.BLOCKED || view.previousReason === DEAD_LETTER_REASON.BLOCKED) {
    if (record.kind === 'not-looked-up') return { redrive: false, refusal: 'it was blocked for an operator: pass --table (the inbox table) so the redrive can check the block was resolved' };
    const status = record.kind === 'found' ? record.item.status : undefined;
    if (status === RECORD_STATUS.BLOCKED) {
      return { redrive: false, refusal: 'it is still blocked: resolve it first (idempotent-event-flow blocked resolve), then redrive it' };
    }
  }
  const earliest = earliestApplicationEpochMilliseconds(view);
  if (earliest === undefined) return { redrive: false, refusal: 'neither its event time nor its send time is known, so its age against the deduplication window is not either' };
  const why = windowRefusal(earliest, rules, 'redriven');
  if (why !== undefined) return rules.allowExpired ? { redrive: true, warning: why } : { redrive: false, refusal: `${why}; --allow-expired redrives it anyway` };
  return { redrive: true };
}

/** The rules of a redrive to one subscriber: {@link RedriveRules}, with the subscriber's processing mode. */
export interface SubscriberRedriveRules extends RedriveRules {
  readonly subscriberName: string;
  /** `IEF_PROCESSING_MODE` of its consumer. @default unknown */
  readonly processingMode?: string;
  /** Redrive to a subscriber in aggregate mode, with a warning, instead of refusing. */
  readonly allowReapply: boolean;
}

/**
 * What `dlq redrive` decides for one dead letter of a subscriber, and what the simulator's operator pass decides by the
 * same code: every dead letter of a subscriber in aggregate mode is refused (it keeps no inbox: an event whose id left
 * its aggregate's list would be applied again), else `decideRedrive`.
 */
export function decideSubscriberRedrive(view: DeadLetterView, record: RecordLookup, rules: SubscriberRedriveRules): RedriveDecision {
  if (rules.processingMode === 'aggregate') {
    const why = aggregateModeRefusal(rules.subscriberName, 'redriven');
    return rules.allowReapply ? { redrive: true, warning: why } : { redrive: false, refusal: why };
  }
  return decideRedrive(view, record, rules);
}
