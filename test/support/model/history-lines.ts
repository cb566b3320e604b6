/** How a model world's history is printed: runs of identical passes collapsed, so a failure's tail stays readable. Not a test file. */

/** The longest block of lines a repeated pass is looked for in (a drain pass over two aggregates is about ten lines). */
const MAX_PERIOD = 24;

/**
 * `lines` with every block repeated back to back (the same `n` lines again and again, as a drain's operator pass that
 * changes nothing prints at each round) printed once, then `… the same n lines k more times`. CI shows only the last
 * lines of a failure: an uncollapsed drain loop pushed the seed and the shrunk commands out of it (issue 38, CI run 48).
 */
export function collapseRepeats(lines: readonly string[]): string[] {
  const out: string[] = [];
  let index = 0;
  while (index < lines.length) {
    let best = { period: 0, times: 1 };
    for (let period = 1; period <= MAX_PERIOD && index + 2 * period <= lines.length; period++) {
      let times = 1;
      while (index + (times + 1) * period <= lines.length && sameBlock(lines, index, index + times * period, period)) times += 1;
      // a block repeated covers the most lines: the longest run wins, the shortest period among equals
      if (times > 1 && times * period > best.times * best.period) best = { period, times };
    }
    if (best.period === 0) {
      out.push(lines[index]!);
      index += 1;
      continue;
    }
    out.push(...lines.slice(index, index + best.period));
    out.push(`… the same ${best.period === 1 ? 'line' : `${best.period} lines`} ${best.times - 1} more time${best.times === 2 ? '' : 's'}`);
    index += best.times * best.period;
  }
  return out;
}

function sameBlock(lines: readonly string[], first: number, second: number, period: number): boolean {
  for (let offset = 0; offset < period; offset++) if (lines[first + offset] !== lines[second + offset]) return false;
  return true;
}
