/**
 * planOrderedRedrive and one event at two sequences (review ro13, RO13-2): the letter the fence admits is sent, never
 * planned as a copy of a letter of the same event id that can not be applied (below the fence, or of a refused generation).
 */
import { expect, test } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../../operator/ordered/redrive-plan';
import { provenDuplicates } from '../../../operator/cli/dead-letters/ordered-queue-read';
import { ORDERED_ENVELOPE } from '../../../lambda/contract/ordered-wire-format';

const body = (id: string, aggregateId: string, sequence: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ specversion: '1.0', id, source: 's', type: 'T', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data: {}, partitionkey: aggregateId, sequence: String(sequence).padStart(16, '0'), ...extra });

test('the letter the fence admits next is sent; the letter of its event id below the fence is its copy, not written again', async () => {
  // fence at 3 (the old table's events). E written to the restored table at #2 (refused: SequenceReusedError); the
  // command retried after the heads were carried: E at #4, generation 1 based at 3, which the fence admits, then moved
  // to the dead-letter queue by SQS after maxReceiveCount failures
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 3, appliedEventId: 'X3' }) };
  const plan = await planOrderedRedrive(
    [
      { id: 'dl-E2', body: body('E', 'a', 2), errorName: 'SequenceReusedError' },
      { id: 'dl-E4', body: body('E', 'a', 4, { [ORDERED_ENVELOPE.GENERATION_ATTRIBUTE]: 1, [ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE]: 3 }) },
    ],
    fences,
    { find: async () => undefined },
  );
  expect(plan.ready.map((letter) => letter.id)).toEqual(['dl-E4']);
  expect(provenDuplicates(plan).map((letter) => letter.id)).not.toContain('dl-E4');
  expect(plan.copies.map((letter) => letter.id)).not.toContain('dl-E4');
  // E@2 is not "write it again" (E is sent at #4): a copy of the letter sent
  expect(plan.reused.map((letter) => letter.id)).toEqual([]);
  expect(plan.alreadyApplied.map((letter) => [letter.id, letter.recognisedBy])).toEqual([['dl-E2', 'copy']]);
  expect(plan.gaps).toEqual({});
});

test('the RO12B-4 case: the old generation letter below the fence is a copy of the admitted one, whichever sorts first', async () => {
  // heads carried from a fence at 3 (generation 1 based at 3), X@4 of generation 1 applied; the old table's E@4
  // (generation 0) arrived below the fence (SequenceReusedError), and the command retried into the new table wrote E@5
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 4, appliedEventId: 'X4', appliedGeneration: 1 }) };
  const plan = await planOrderedRedrive(
    [
      { id: 'dl-E4-old', body: body('E', 'a', 4), errorName: 'SequenceReusedError' },
      { id: 'dl-E5', body: body('E', 'a', 5, { [ORDERED_ENVELOPE.GENERATION_ATTRIBUTE]: 1, [ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE]: 3 }) },
    ],
    fences,
    { find: async () => undefined },
  );
  expect(plan.ready.map((letter) => letter.id)).toEqual(['dl-E5']);
  expect(plan.alreadyApplied.map((letter) => [letter.id, letter.recognisedBy])).toEqual([['dl-E4-old', 'copy']]);
  expect(plan.reused).toEqual([]);
  expect(plan.copies).toEqual([]);
});
