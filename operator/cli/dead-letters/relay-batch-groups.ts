/**
 * The relay's dead letters as `dlq list` shows them: the pipe puts one message per stream batch it gave up on, so a
 * relay that failed for a while leaves many (16 one-record batches were 16 identical lines). Batches of one shard and
 * condition whose replay ranges overlap are one group, with its count, its records and one replay range covering it.
 */
import type { RelayBatch } from './dead-letter-view';

/**
 * How much a replay range is widened around a relay batch's arrival times: an event's `time` is set before its
 * transaction commits (and by the producer's clock), and the stream's arrival times are whole seconds. Replaying more
 * than the batch is safe: the inbox drops what a subscriber already applied.
 *
 * The arrival times (`approximateArrivalOfFirstRecord`, `...LastRecord`) are when the records arrived in the stream,
 * their `ApproximateCreationDateTime`: when the changes were committed. Never the dead letter's own time (its
 * `timestamp`, its SentTimestamp): the pipe gives up after its retries or `MaximumRecordAgeInSeconds`, which can be long
 * after the commit, and a range around it can hold none of the events.
 */
export const REPLAY_RANGE_MARGIN_MILLISECONDS = 5 * 60 * 1000;

/** A replay's `--since` and `--until`. */
export interface ReplayRange {
  readonly since: string;
  readonly until: string;
}

/** The `--since`/`--until` of a replay that covers a relay batch, or undefined when its arrival times are unknown. */
export function replayRange(batch: RelayBatch): ReplayRange | undefined {
  const first = Date.parse(batch.approximateArrivalOfFirstRecord ?? '');
  const last = Date.parse(batch.approximateArrivalOfLastRecord ?? batch.approximateArrivalOfFirstRecord ?? '');
  if (!Number.isFinite(first) || !Number.isFinite(last)) return undefined;
  return { since: new Date(first - REPLAY_RANGE_MARGIN_MILLISECONDS).toISOString(), until: new Date(last + REPLAY_RANGE_MARGIN_MILLISECONDS).toISOString() };
}

/** Relay batches shown as one line. */
export interface RelayBatchGroup {
  readonly shardId?: string;
  readonly condition?: string;
  /** How many batches (dead letters). */
  readonly batches: number;
  /** Their records, when every batch says its size. */
  readonly records?: number;
  /** The earliest and latest arrival, when known. */
  readonly first?: string;
  readonly last?: string;
  /** One replay range covering every batch of the group, when their times are known. */
  readonly range?: ReplayRange;
}

interface OpenGroup {
  batches: number;
  records: number | undefined;
  first: number;
  last: number;
}

function closed(shardId: string | undefined, condition: string | undefined, group: OpenGroup): RelayBatchGroup {
  const range = { since: new Date(group.first - REPLAY_RANGE_MARGIN_MILLISECONDS).toISOString(), until: new Date(group.last + REPLAY_RANGE_MARGIN_MILLISECONDS).toISOString() };
  return {
    ...(shardId === undefined ? {} : { shardId }),
    ...(condition === undefined ? {} : { condition }),
    batches: group.batches,
    ...(group.records === undefined ? {} : { records: group.records }),
    first: new Date(group.first).toISOString(),
    last: new Date(group.last).toISOString(),
    range,
  };
}

/**
 * Groups `batches` (see the module comment): per shard and condition in the order they first appear, the batches with
 * known times by time, those whose replay ranges overlap merged; the batches whose times are unknown last, as one group.
 */
export function groupRelayBatches(batches: readonly RelayBatch[]): RelayBatchGroup[] {
  const byKey = new Map<string, { shardId?: string; condition?: string; timed: Array<{ first: number; last: number; size?: number }>; untimed: RelayBatch[] }>();
  for (const batch of batches) {
    const key = JSON.stringify([batch.shardId ?? null, batch.condition ?? null]);
    const entry = byKey.get(key) ?? { shardId: batch.shardId, condition: batch.condition, timed: [], untimed: [] };
    const range = replayRange(batch);
    if (range === undefined) entry.untimed.push(batch);
    else entry.timed.push({ first: Date.parse(range.since) + REPLAY_RANGE_MARGIN_MILLISECONDS, last: Date.parse(range.until) - REPLAY_RANGE_MARGIN_MILLISECONDS, size: batch.batchSize });
    byKey.set(key, entry);
  }
  const groups: RelayBatchGroup[] = [];
  for (const { shardId, condition, timed, untimed } of byKey.values()) {
    let open: OpenGroup | undefined;
    for (const batch of [...timed].sort((a, b) => a.first - b.first)) {
      const records = batch.size;
      if (open !== undefined && batch.first - REPLAY_RANGE_MARGIN_MILLISECONDS <= open.last + REPLAY_RANGE_MARGIN_MILLISECONDS) {
        open.batches += 1;
        open.records = open.records === undefined || records === undefined ? undefined : open.records + records;
        open.last = Math.max(open.last, batch.last);
        continue;
      }
      if (open !== undefined) groups.push(closed(shardId, condition, open));
      open = { batches: 1, records, first: batch.first, last: batch.last };
    }
    if (open !== undefined) groups.push(closed(shardId, condition, open));
    if (untimed.length > 0) {
      const sizes = untimed.map((batch) => batch.batchSize);
      groups.push({
        ...(shardId === undefined ? {} : { shardId }),
        ...(condition === undefined ? {} : { condition }),
        batches: untimed.length,
        ...(sizes.every((size) => size !== undefined) ? { records: sizes.reduce((sum, size) => sum + (size ?? 0), 0) } : {}),
      });
    }
  }
  return groups;
}
