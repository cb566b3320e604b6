/** Order statistics of timing samples. Pure: no I/O. */

/**
 * The `p`-th percentile (0 < p <= 100) of `samples` by the nearest-rank method: the smallest sample such that at least
 * p % of the samples are less than or equal to it (so p50 of 1..10 is 5, p95 of 1..20 is 19, p100 is the maximum).
 * Always one of the samples, never interpolated. Throws on an empty list or a `p` outside (0, 100].
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError('percentile of no samples');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile p must be in (0, 100], but was ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[rank - 1] as number;
}
