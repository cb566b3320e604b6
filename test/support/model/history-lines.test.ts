import { expect, test } from 'vitest';
import { collapseRepeats } from './history-lines';

test('a drain pass repeated back to back is printed once, then counted', () => {
  const pass = ['plan: 0 already applied, gaps {"agg-0":[3,4]}', 'redrive (planned): agg-0 #5', 'delivered agg-0 #5: failed, moved to the DLQ by SQS'];
  const lines = ['produced agg-0 #1', ...pass, ...pass, ...pass, ...pass, 'the end'];
  expect(collapseRepeats(lines)).toEqual(['produced agg-0 #1', ...pass, '… the same 3 lines 3 more times', 'the end']);
});

test('one line repeated is counted as a line; lines that differ are all kept', () => {
  expect(collapseRepeats(['a', 'b', 'b', 'c', 'b'])).toEqual(['a', 'b', '… the same line 1 more time', 'c', 'b']);
  expect(collapseRepeats(['a', 'b', 'a', 'c'])).toEqual(['a', 'b', 'a', 'c']);
  expect(collapseRepeats([])).toEqual([]);
});

test('the longest run wins: a pass of two lines repeated is not split into runs of one', () => {
  expect(collapseRepeats(['x', 'x', 'y', 'x', 'x', 'y'])).toEqual(['x', 'x', 'y', '… the same 3 lines 1 more time']);
});
