/**
 * Whether one dead letter may be redriven, and why not. Pure. The rule that matters: a dead letter older than its
 * subscriber's deduplication window (counted from the earliest moment it could have been applied, its event's `time`)
 * may have an inbox record that already expired, so a redrive could apply it a second time; it is refused (or, with
 * `allowExpired`, redriven with a warning).
 */
import { RECORD_STATUS } from '../../lambda/wire-format';
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
  /** How long before the window ends a dead letter is already refused: the time the redriven copy may wait and run. */
  readonly safetyMarginSeconds: number;
  readonly nowEpochMilliseconds: number;
  /** Redrive what is past the window, with a warning, instead of refusing it. */
  readonly allowExpired: boolean;
}

/** How long before the end of the window a redrive is refused by default: 1 hour. */
export const DEFAULT_SAFETY_MARGIN_SECONDS = 3600;

/** What to do with one dead letter. */
export interface RedriveDecision {
  readonly redrive: boolean;
  /** Why not (when `redrive` is false). */
  readonly refusal?: string;
  /** What the operator accepted (`allowExpired`). */
  readonly warning?: string;
}

function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} days`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hours`;
  return `${seconds} seconds`;
}

/** Decides whether `view` may be redriven to its subscriber's queue. */
export function decideRedrive(view: DeadLetterView, record: RecordLookup, rules: RedriveRules): RedriveDecision {
  if (view.queueKind === 'relay') {
    return { redrive: false, refusal: 'a relay dead letter holds stream batch metadata, not the events: replay them from the outbox (idempotent-event-flow replay)' };
  }
  if (view.envelope === undefined) {
    return { redrive: false, refusal: `its body is not an event envelope (${view.envelopeError ?? 'unreadable'}): a redrive would dead-letter it again; inspect it, then delete it` };
  }
  if (view.reason === DEAD_LETTER_REASON.BLOCKED) {
    if (record.kind === 'not-looked-up') return { redrive: false, refusal: 'it was blocked for an operator: pass --table (the inbox table) so the redrive can check the block was resolved' };
    const status = record.kind === 'found' ? record.item.status : undefined;
    if (status === RECORD_STATUS.BLOCKED) {
      return { redrive: false, refusal: 'it is still blocked: resolve it first (idempotent-event-flow blocked resolve), then redrive it' };
    }
  }
  const earliest = earliestApplicationEpochMilliseconds(view);
  if (earliest === undefined) return { redrive: false, refusal: 'neither its event time nor its send time is known, so its age against the deduplication window is not either' };
  const windowEndsAt = earliest + rules.deduplicationWindowSeconds * 1000;
  const refuseFrom = windowEndsAt - rules.safetyMarginSeconds * 1000;
  if (rules.nowEpochMilliseconds >= refuseFrom) {
    const why =
      `its event is from ${new Date(earliest).toISOString()}: the deduplication window of ${duration(rules.deduplicationWindowSeconds)} ` +
      `${rules.nowEpochMilliseconds >= windowEndsAt ? 'ended' : 'ends'} at ${new Date(windowEndsAt).toISOString()} ` +
      `(a redrive needs ${duration(rules.safetyMarginSeconds)} to spare), so an inbox record of an earlier application may be gone and the redrive could apply it twice`;
    return rules.allowExpired ? { redrive: true, warning: why } : { redrive: false, refusal: `${why}; --allow-expired redrives it anyway` };
  }
  return { redrive: true };
}
