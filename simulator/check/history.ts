/**
 * A history behind the verdict: what happened to each (subscriber, event id, step), in the order it happened, and the
 * checks that end-state counts cannot make:
 * - the effect intervals of one key never overlap: two lease owners never run one effect at the same time (an effect
 *   that is idempotent at the end, a `SET sent = true`, passes every count even when they do);
 * - each indeterminate operation (a write whose response was lost) resolves to zero or one application of its key.
 *
 * What the history is made of:
 * - history marks a handler (or a probe) writes as a log line, `{"iefHistory":"effect-start", "subscriber":…,
 *   "eventId":…, "step"?:…, "actor":…}` (and `effect-end`, `claim`, `commit`, `ack`), see {@link historyMark};
 * - the runtime's log lines with an `outcome` (`processed` is a commit of the key, `duplicate` an acknowledgement);
 * - the fault plan's lost responses, as `indeterminate` entries of every inbox key the request names.
 *
 * Under the seeded scheduler (simulator/schedule/seeded-scheduler.ts) the lines of the workers that ran in one turn
 * arrive environment by environment, as if their steps had been taken one after the other (they commute: each worker's
 * requests wait for their own forward steps), so the order lines arrive in is an order things could have happened
 * in, consistent with the requests' order at DynamoDB; the entries are numbered in that order.
 */
import { jsonLine } from '../observation/record-outcomes';

/** What one history entry records. */
export type HistoryOperation = 'claim' | 'effect-start' | 'effect-end' | 'commit' | 'ack' | 'indeterminate';

const OPERATIONS: ReadonlySet<string> = new Set<HistoryOperation>(['claim', 'effect-start', 'effect-end', 'commit', 'ack', 'indeterminate']);

/** The key a history is kept for. */
export interface HistoryKey {
  readonly subscriber: string;
  readonly eventId: string;
  /** The step of a multi-step consumer. @default the whole message */
  readonly step?: string;
}

/** One entry. */
export interface HistoryEntry {
  /** 1-based position in the run's history. */
  readonly sequence: number;
  readonly key: HistoryKey;
  readonly operation: HistoryOperation;
  /** Who did it: an invocation (its request id), a function. */
  readonly actor: string;
  /** What else is known (the runtime's outcome, the operation whose response was lost). */
  readonly detail?: string;
}

/** A check the history failed, with the excerpt that shows it. */
export interface HistoryViolation {
  readonly key: HistoryKey;
  readonly rule: 'overlapping-effects' | 'indeterminate-applied-twice';
  readonly detail: string;
  /** The key's entries, one per line. */
  readonly excerpt: string;
}

/** The log line of a history mark (see the module comment); print it with `console.log`. */
export function historyMark(operation: HistoryOperation, key: HistoryKey, actor: string): string {
  return JSON.stringify({ iefHistory: operation, subscriber: key.subscriber, eventId: key.eventId, ...(key.step === undefined ? {} : { step: key.step }), actor });
}

function keyText(key: HistoryKey): string {
  return `${key.subscriber} / ${key.eventId}${key.step === undefined ? '' : ` / ${key.step}`}`;
}

/** Records a run's history. */
export class HistoryRecorder {
  private readonly recorded: HistoryEntry[] = [];

  /** Records one entry; it is numbered after every entry recorded before. */
  public record(key: HistoryKey, operation: HistoryOperation, actor: string, detail?: string): void {
    this.recorded.push({ sequence: this.recorded.length + 1, key, operation, actor, ...(detail === undefined ? {} : { detail }) });
  }

  /** Reads one line a function wrote: a history mark, or a runtime line with an outcome. Other lines are ignored. */
  public onOutput(functionKey: string, line: string): void {
    const parsed = jsonLine(line);
    if (parsed === undefined) return;
    const { subscriber, eventId } = parsed;
    if (typeof subscriber !== 'string' || typeof eventId !== 'string') return;
    const step = typeof parsed.step === 'string' ? parsed.step : undefined;
    const key: HistoryKey = { subscriber, eventId, ...(step === undefined ? {} : { step }) };
    const mark = parsed.iefHistory;
    if (typeof mark === 'string' && OPERATIONS.has(mark)) {
      this.record(key, mark as HistoryOperation, typeof parsed.actor === 'string' ? parsed.actor : functionKey);
      return;
    }
    // the runtime's record of a message: processed (committed), or a duplicate acknowledged without a commit
    const { outcome } = parsed;
    if (outcome === 'processed') this.record({ subscriber, eventId }, 'commit', functionKey, 'runtime: processed');
    else if (outcome === 'duplicate') this.record({ subscriber, eventId }, 'ack', functionKey, 'runtime: duplicate');
  }

  /** A write of `operation` whose response was lost, on the inbox keys (`<subscriber>#<event id>`) its body names. */
  public onLostResponse(functionKey: string, operation: string, body: string, subscribers: readonly string[]): void {
    for (const subscriber of subscribers) {
      const pattern = new RegExp(`"S":"${escapeRegExp(subscriber)}#([^"#]+)"`, 'g');
      const eventIds = new Set([...body.matchAll(pattern)].map((match) => match[1]!));
      for (const eventId of eventIds) this.record({ subscriber, eventId }, 'indeterminate', functionKey, `${operation}: response lost`);
    }
  }

  /** Everything recorded, in order. */
  public entries(): readonly HistoryEntry[] {
    return this.recorded;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The entries of one key as lines: `#12 effect-start  by req-3`. */
export function historyExcerpt(entries: readonly HistoryEntry[]): string {
  return entries.map((entry) => `  #${entry.sequence} ${entry.operation.padEnd(13)} by ${entry.actor}${entry.detail === undefined ? '' : ` (${entry.detail})`}`).join('\n');
}

/** Checks the history (see the module comment); one violation per key and rule. */
export function checkHistory(entries: readonly HistoryEntry[]): HistoryViolation[] {
  const byKey = new Map<string, HistoryEntry[]>();
  for (const entry of entries) {
    const text = keyText(entry.key);
    byKey.set(text, [...(byKey.get(text) ?? []), entry]);
  }
  const violations: HistoryViolation[] = [];
  for (const [text, keyEntries] of byKey) {
    const { key } = keyEntries[0]!;
    const overlap = firstOverlap(keyEntries);
    if (overlap !== undefined) {
      violations.push({
        key,
        rule: 'overlapping-effects',
        detail: `${text}: the effect ran in ${overlap.first} and ${overlap.second} at the same time (#${overlap.secondStart} started before #${overlap.firstEnd} ended): two owners held the key at once`,
        excerpt: historyExcerpt(keyEntries),
      });
    }
    const indeterminate = keyEntries.filter((entry) => entry.operation === 'indeterminate');
    if (indeterminate.length > 0) {
      // the applications: the effects that ended when the handler marks them, else the runtime's commits
      const marked = keyEntries.some((entry) => entry.operation === 'effect-end');
      const applications = keyEntries.filter((entry) => entry.operation === (marked ? 'effect-end' : 'commit')).length;
      if (applications > 1) {
        violations.push({
          key,
          rule: 'indeterminate-applied-twice',
          detail: `${text}: ${indeterminate.length} indeterminate operation(s) (#${indeterminate.map((entry) => entry.sequence).join(', #')}) resolved to ${applications} applications; at most 1 is exactly-once`,
          excerpt: historyExcerpt(keyEntries),
        });
      }
    }
  }
  return violations;
}

/** The first two actors whose effect intervals (effect-start to effect-end, or to the end of the history) overlap. */
function firstOverlap(entries: readonly HistoryEntry[]): { first: string; second: string; firstEnd: number | string; secondStart: number } | undefined {
  const open = new Map<string, number>();
  for (const entry of entries) {
    if (entry.operation === 'effect-start') {
      const [other] = [...open.entries()].filter(([actor]) => actor !== entry.actor);
      if (other !== undefined) {
        const otherEnd = entries.find((candidate) => candidate.operation === 'effect-end' && candidate.actor === other[0] && candidate.sequence > other[1]);
        return { first: other[0], second: entry.actor, firstEnd: otherEnd?.sequence ?? 'the end', secondStart: entry.sequence };
      }
      open.set(entry.actor, entry.sequence);
    } else if (entry.operation === 'effect-end') {
      open.delete(entry.actor);
    }
  }
  return undefined;
}
