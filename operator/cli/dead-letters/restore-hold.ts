/**
 * The inbox-restore refusal of `fence replay` applied to the redrives of an ordered subscriber's dead letters (review
 * ro13, RO13-10): after its inbox table was restored or replaced without `fence carry`, its fences stand behind what
 * it applied, so a letter of an event applied after the restore point is above the fence and would apply twice. The
 * letters `dlq redrive` and `fence redrive` would send of such an aggregate are left in the dead-letter queue, with
 * the refusal's reason, until the fences are carried (or moved with `fence skip`).
 */
import type { OrderedDeadLetter, OrderedRedrivePlan, PlannedDeadLetter } from '../../ordered/redrive-plan';
import type { SequenceFences } from '../../ordered/sequence-fences';
import type { CommandContext } from '../command';
import { inboxRestoreRefusal } from '../inbox-restore-check';
import { terminalText } from '../terminal-text';

/** An aggregate whose letters a redrive leaves because its inbox table may have been restored. */
export interface RestoreRefusal {
  /** Why (the same reason `fence replay` gives). */
  readonly reason: string;
  /** The ids of the letters the plan would have sent (left in the dead-letter queue). */
  readonly letters: readonly string[];
}

/** A redrive plan that leaves out what the restore refusal holds, and what it held. */
export interface RestoreHold {
  /** `plan` with the letters to send of refused aggregates (and their gaps) left out. */
  readonly plan: (letters: readonly OrderedDeadLetter[]) => Promise<OrderedRedrivePlan>;
  /** By aggregate, as the latest plan held them. */
  readonly refused: ReadonlyMap<string, RestoreRefusal>;
}

/** Wraps `plan` so that no letter of an aggregate the inbox-restore check refuses is sent. */
export function holdRestored(context: CommandContext, inboxTable: string, subscriber: string, fences: SequenceFences, plan: (letters: readonly OrderedDeadLetter[]) => Promise<OrderedRedrivePlan>): RestoreHold {
  const refused = new Map<string, RestoreRefusal>();
  const reasons = new Map<string, string>();
  return {
    refused,
    plan: async (letters) => {
      const planned = await plan(letters);
      const byAggregate = new Map<string, PlannedDeadLetter[]>();
      for (const letter of planned.redrive) byAggregate.set(letter.aggregateId, [...(byAggregate.get(letter.aggregateId) ?? []), letter]);
      refused.clear();
      for (const [aggregateId, sent] of byAggregate) {
        const reason = reasons.get(aggregateId) ?? (await inboxRestoreRefusal(context, inboxTable, subscriber, aggregateId, await fences.get(aggregateId), sent, false));
        if (reason === undefined) continue;
        reasons.set(aggregateId, reason);
        refused.set(aggregateId, { reason, letters: sent.map((letter) => letter.id) });
      }
      if (refused.size === 0) return planned;
      const kept = (letter: PlannedDeadLetter): boolean => !refused.has(letter.aggregateId);
      return {
        ...planned,
        redrive: planned.redrive.filter(kept),
        ready: planned.ready.filter(kept),
        waiting: planned.waiting.filter(kept),
        gaps: Object.fromEntries(Object.entries(planned.gaps).filter(([aggregateId]) => !refused.has(aggregateId))),
      };
    },
  };
}

/** One line per refused aggregate: how many letters are left and why. */
export function restoreRefusalLines(refused: ReadonlyMap<string, RestoreRefusal>): string[] {
  return [...refused].map(([aggregateId, each]) => `left: ${each.letters.length} letter(s) of ${terminalText(aggregateId)} not sent: ${each.reason}`);
}
