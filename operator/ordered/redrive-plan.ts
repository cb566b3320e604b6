/**
 * The fence-respecting redrive of an ordered subscriber's dead letters: which to send back, in which order, which the
 * fence shows applied already, and which sequences are missing (docs/ORDERED-DELIVERY.md, "Operating").
 */
import { orderedPositionOf, type OrderedPosition } from '../../lambda/ordered/ordered-position';
import type { IOrderedEventRecords } from './ordered-event-records';

/** A dead letter as the operator read it. */
export interface OrderedDeadLetter {
  /** The SQS message id (or the caller's handle) of the dead letter. */
  readonly id: string;
  readonly body: string;
  /**
   * Why it was dead-lettered: the `iefErrorName` message attribute the consumer's dead-letter publisher sets. A
   * `SequenceReusedError` dead letter was never applied (see {@link OrderedRedrivePlan.reused}).
   * @default unknown: the plan tells a reused sequence only by the fence's applied event id
   */
  readonly errorName?: string;
}

/** A dead letter with its place. */
export interface PlannedDeadLetter extends OrderedDeadLetter, OrderedPosition {
  /** The envelope's event id. @default undefined when the body has none */
  readonly eventId?: string;
  /**
   * For a letter in `alreadyApplied`, what showed it applied: `fence` (the fence holds this event at its sequence),
   * `inbox record` (the subscriber's live record of this event id), `fence skip` (an operator's skip dropped it: the
   * consumer acknowledges it unapplied, on purpose), or `copy` (a second copy of a letter in `redrive`: at its sequence,
   * or a letter of its event id the fence can not take, below the fence or of a refused generation).
   * @default undefined for letters in the other lists
   */
  readonly recognisedBy?: 'fence' | 'inbox record' | 'fence skip' | 'copy';
  /** For a letter in `unproven`, why its age does not prove it never applied. @default undefined for letters in the other lists */
  readonly why?: string;
  /**
   * For a letter in `copies`, the `id` of the letter of the same event (same aggregate and event id, at any sequence) the plan
   * decided for, in `reused` or `unproven`. @default undefined for letters in the other lists
   */
  readonly copyOf?: string;
}

/** What {@link planOrderedRedrive} decided. */
export interface OrderedRedrivePlan {
  /** To send back, by aggregate and then sequence (one copy per sequence): the fence admits them in this order. */
  readonly redrive: readonly PlannedDeadLetter[];
  /**
   * The part of `redrive` the fence admits now: per aggregate, the run of sequences that starts right after the fence
   * with no gap, in `redrive`'s order. Sent alone, none of them waits for anything.
   */
  readonly ready: readonly PlannedDeadLetter[];
  /**
   * The rest of `redrive`: each waits behind a gap of its aggregate (a sequence after the fence no dead letter holds).
   * Sent now, it is retried until that sequence is applied, holding up its aggregate's later events meanwhile, and back
   * in the dead-letter queue after `maxReceiveCount` receives if the gap is never filled.
   */
  readonly waiting: readonly PlannedDeadLetter[];
  /**
   * Applied (or about to be), each with what showed it (`recognisedBy`): at or below the fence AND the fence holds this
   * event at its sequence or the subscriber has a live inbox record of its event id (or an operator's `fence skip`
   * dropped it); or a second copy (same event id) of one in `redrive`, at its sequence or at one the fence can not
   * take (the event was written again at a sequence the fence admits: it is sent there). Delete them, do not redrive. A letter at or
   * below the fence with none of these, young enough that a record of its application would still be live, was never applied (its sequence was taken by another event after a restored or
   * replaced outbox table, even without a `SequenceReusedError` error name: SQS moves a letter after `maxReceiveCount`
   * with none): it is in `reused`.
   */
  readonly alreadyApplied: readonly PlannedDeadLetter[];
  /**
   * Never applied, and never will be under their sequence: a `SequenceReusedError` dead letter (a new event under a
   * sequence the fence already passed: the outbox's heads went back) of which the subscriber holds no live inbox record
   * now (a record, or a skip, wins over the error name: the event id may have been applied since), a letter at or below the fence of which the
   * subscriber holds no inbox record (and no skip dropped it) while a record of an application would still be live
   * (else it is `unproven`), a letter of a generation older than the fence's above
   * it, a letter of a newer generation whose base the fence has passed (the fence can never enter that generation:
   * such a letter needs a later carry of the heads before it is written again), or a second letter of one sequence with
   * another event id than the first. Redriving them is
   * pointless (the fence refuses them again). Write each again through `OrderedOutbox` as a new event with its data (it
   * takes the aggregate's next sequence; after a restore, once the heads are carried over), then delete the dead letter
   * (docs/ORDERED-DELIVERY.md, "Restoring the outbox table", step 5).
   */
  readonly reused: readonly PlannedDeadLetter[];
  /**
   * At or below the fence, without an inbox record of the event, but not provably never applied (review r8b, R8b-10),
   * each with `why`: the event is older than the subscriber's deduplication window (aged from its write time,
   * `iefwrittenat`, as the consumer ages it), so a record of its application may have expired; or its age can not be
   * proven (no write time, one later than now, or records read without the window). Neither redriven (the fence
   * answers it) nor to be written again as a new event (that may apply it twice): the operator decides from the
   * subscriber's own state whether it was applied (docs/ORDERED-DELIVERY.md, "Restoring the outbox table", step 5).
   */
  readonly unproven: readonly PlannedDeadLetter[];
  /**
   * The second and later letters of an event already in `reused` or `unproven` (same aggregate and event id, at any
   * sequence the fence can not take; a letter the fence admits is never a copy),
   * each with `copyOf`, the letter decided for. One event can be several letters: the consumer's dead-letter
   * deduplication id is per receive, so an invocation that dies after the dead-letter send (before its ack) dead-letters
   * the same message again at the next receive (review ro12, RO12-1). The event is planned once: a copy is never written
   * again (a second application) nor redriven; delete it with the letter it copies.
   */
  readonly copies: readonly PlannedDeadLetter[];
  /**
   * Per aggregate, the sequences after the fence and before its highest dead letter that no dead letter holds: still
   * in the queue (in flight), or lost. Until they are applied, the redriven later ones wait.
   */
  readonly gaps: Readonly<Record<string, readonly number[]>>;
  /** Dead letters without an ordered position (a message that never was an ordered event): left for the operator. */
  readonly unordered: readonly OrderedDeadLetter[];
}

/** Reads where a subscriber stands in an aggregate (`SequenceFences` does). */
export interface IFenceReader {
  get(aggregateId: string): Promise<{ readonly appliedSequence: number; readonly appliedEventId?: string; readonly appliedGeneration?: number }>;
}

/**
 * Plans the redrive of an ordered subscriber's dead letters against its fences (one read per aggregate) and, for each
 * letter at or below its fence, what the subscriber holds of the event (`records`: one inbox read, as the consumer
 * decides; `OrderedEventRecords` on the subscriber's inbox table).
 */
export async function planOrderedRedrive(deadLetters: readonly OrderedDeadLetter[], fences: IFenceReader, records: IOrderedEventRecords): Promise<OrderedRedrivePlan> {
  const placed: PlannedDeadLetter[] = [];
  const unordered: OrderedDeadLetter[] = [];
  for (const letter of deadLetters) {
    try {
      placed.push({ ...letter, ...orderedPositionOf(letter.body), ...eventIdOf(letter.body) });
    } catch {
      unordered.push(letter);
    }
  }
  placed.sort((a, b) => (a.aggregateId === b.aggregateId ? a.sequence - b.sequence : a.aggregateId < b.aggregateId ? -1 : 1));
  const aggregates = [...new Set(placed.map((letter) => letter.aggregateId))];
  const states = new Map(await Promise.all(aggregates.map(async (aggregateId) => [aggregateId, await fences.get(aggregateId)] as const)));
  const applied = new Map([...states].map(([aggregateId, state]) => [aggregateId, state.appliedSequence] as const));
  const redrive: PlannedDeadLetter[] = [];
  const alreadyApplied: PlannedDeadLetter[] = [];
  const reused: PlannedDeadLetter[] = [];
  const unproven: PlannedDeadLetter[] = [];
  const copies: PlannedDeadLetter[] = [];
  // the first letter of each event decided never applied (or unproven), by aggregate and event id: one event id may
  // stand at two sequences (a command retried after a restore writes it again), and is written again once (review
  // ro12b, RO12B-4)
  const decided = new Map<string, PlannedDeadLetter>();
  const sameEvent = (letter: PlannedDeadLetter): string | undefined => (letter.eventId === undefined ? undefined : JSON.stringify([letter.aggregateId, letter.eventId]));
  // the first letter of each event whose position the fence admits (above it, of a generation it can take): a letter of
  // that event the fence can not take is a copy of it, and the admitted one is never a copy (review ro13, RO13-2)
  const admitted = new Map<string, PlannedDeadLetter>();
  for (const letter of placed) {
    const key = sameEvent(letter);
    if (key !== undefined && !admitted.has(key) && positionAdmitted(letter, states.get(letter.aggregateId))) admitted.set(key, letter);
  }
  for (const letter of placed) {
    const fence = states.get(letter.aggregateId);
    if (!positionAdmitted(letter, fence)) {
      const key = sameEvent(letter) ?? '';
      if (admitted.has(key)) {
        // its event is sent at the sequence the fence admits: this letter is a copy of that one (deleted with it, never written again)
        alreadyApplied.push({ ...letter, recognisedBy: 'copy' });
        continue;
      }
      const first = decided.get(key);
      if (first !== undefined) {
        copies.push({ ...letter, copyOf: first.id });
        continue;
      }
    }
    const neverAppliedBefore = reused.length + unproven.length;
    const fenceAt = fence?.appliedSequence ?? 0;
    const previous = redrive.at(-1);
    const sameSequence = previous !== undefined && previous.aggregateId === letter.aggregateId && previous.sequence === letter.sequence;
    if (letter.sequence <= fenceAt) {
      const fenceHoldsIt = letter.sequence === fenceAt && letter.eventId !== undefined && letter.eventId === fence?.appliedEventId;
      if (fenceHoldsIt) alreadyApplied.push({ ...letter, recognisedBy: 'fence' });
      else {
        // below the fence the fence keeps no event id: only the subscriber's inbox record shows the event applied. Read
        // first, as the consumer reads it: a live record (or a skip) wins over the letter's error name, which says only
        // that the event was not applied when it was dead-lettered (its id may have been applied since: review ro12, RO12-10)
        const held = letter.eventId === undefined ? undefined : await records.find(letter, letter.eventId);
        if (held === 'applied' || held === 'skipped') alreadyApplied.push({ ...letter, recognisedBy: held === 'applied' ? 'inbox record' : 'fence skip' });
        // never applied only while young enough that a record of an application would be live, whatever the letter's
        // error name or the event the fence holds (the name was given under the window in effect then: review ro12b,
        // RO12B-8); older, it is unproven
        else {
          if (held === undefined) reused.push(letter);
          else unproven.push({ ...letter, why: held.unproven });
        }
      }
    } else if ((fence?.appliedGeneration ?? 0) > letter.generation) {
      // above the fence, of a generation the fence has left: the consumer refuses it (two histories), never applies it
      reused.push(letter);
    } else if (letter.generation > (fence?.appliedGeneration ?? 0) && fenceAt > letter.generationBase) {
      // of a newer generation whose base the fence has passed (the old table's events went further): the consumer
      // refuses it as well (two histories; the ordered model, seed 777), so redriving it would only come back
      reused.push(letter);
    } else if (sameSequence) {
      if (letter.eventId === previous.eventId) alreadyApplied.push({ ...letter, recognisedBy: 'copy' });
      else reused.push(letter);
    } else redrive.push(letter);
    const key = sameEvent(letter);
    if (key !== undefined && reused.length + unproven.length > neverAppliedBefore) decided.set(key, letter);
  }
  const gaps: Record<string, number[]> = {};
  for (const aggregateId of aggregates) {
    const held = new Set(redrive.filter((letter) => letter.aggregateId === aggregateId).map((letter) => letter.sequence));
    const highest = Math.max(0, ...held);
    const missing: number[] = [];
    for (let sequence = (applied.get(aggregateId) ?? 0) + 1; sequence < highest; sequence++) if (!held.has(sequence)) missing.push(sequence);
    if (missing.length > 0) gaps[aggregateId] = missing;
  }
  const firstGap = (letter: PlannedDeadLetter): number => gaps[letter.aggregateId]?.[0] ?? Number.POSITIVE_INFINITY;
  const ready = redrive.filter((letter) => letter.sequence < firstGap(letter));
  const waiting = redrive.filter((letter) => letter.sequence > firstGap(letter));
  return { redrive, ready, waiting, alreadyApplied, reused, unproven, copies, gaps, unordered };
}

/**
 * True when the fence could take a letter at its position: above the fence, and of the fence's generation or of a newer
 * one whose base the fence has not passed (the rules below in {@link planOrderedRedrive}, as the consumer's Put decides).
 */
function positionAdmitted(letter: PlannedDeadLetter, fence: { readonly appliedSequence: number; readonly appliedGeneration?: number } | undefined): boolean {
  const fenceAt = fence?.appliedSequence ?? 0;
  const generation = fence?.appliedGeneration ?? 0;
  if (letter.sequence <= fenceAt || generation > letter.generation) return false;
  return !(letter.generation > generation && fenceAt > letter.generationBase);
}

/**
 * The `errorName` of a dead letter the fence refused as a new event under a sequence already passed. The plan does not
 * decide by it (the inbox record and the event's age do: review ro12, RO12-10, and ro12b, RO12B-8).
 */
export const SEQUENCE_REUSED_ERROR = 'SequenceReusedError';

/** The envelope's id, when the body has one. */
function eventIdOf(body: string): { eventId?: string } {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? { eventId: id } : {};
  } catch {
    return {};
  }
}
