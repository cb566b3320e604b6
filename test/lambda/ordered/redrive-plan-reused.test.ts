/**
 * planOrderedRedrive and dead letters that were never applied (review r4, F3): a SequenceReusedError dead letter at or
 * below the fence is a new event under a sequence already passed, not an applied one; two dead letters with one
 * sequence are copies only when they hold one event id. The fence reader is an in-memory stand-in (the plan is pure:
 * it only reads fences); r4's F3 against DynamoDB Local is in ordered-event-ids' sibling, test/lambda/ordered/r4-review-attacks.int.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../../lambda/ordered/redrive-plan';

const body = (id: string, aggregateId: string, sequence: number): string =>
  JSON.stringify({ specversion: '1.0', id, source: 's', type: 'T', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data: {}, partitionkey: aggregateId, sequence: String(sequence).padStart(16, '0') });

const fences = (state: Record<string, { appliedSequence: number; appliedEventId?: string }>): IFenceReader => ({
  get: async (aggregateId) => state[aggregateId] ?? { appliedSequence: 0 },
});

describe('planOrderedRedrive: dead letters never applied', () => {
  test('copy of r4 F3: a SequenceReusedError dead letter below the fence is reused, not applied', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('refunded', 'a', 1), errorName: 'SequenceReusedError' }], fences({ a: { appliedSequence: 2, appliedEventId: 'captured' } }));
    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual([]);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-1']);
    expect(plan.redrive).toEqual([]);
  });

  test('a dead letter at the fence whose event id is not the one the fence applied is reused (without its error name too)', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('refunded', 'a', 2) }, { id: 'dl-2', body: body('captured', 'b', 2) }], fences({ a: { appliedSequence: 2, appliedEventId: 'captured' }, b: { appliedSequence: 2, appliedEventId: 'captured' } }));
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-1']);
    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual(['dl-2']);
  });

  test('two dead letters with one sequence after the fence: a copy only when the event ids match', async () => {
    const plan = await planOrderedRedrive(
      [
        { id: 'dl-1', body: body('e3', 'a', 3) },
        { id: 'dl-2', body: body('e3', 'a', 3) },
        { id: 'dl-3', body: body('other', 'a', 3) },
      ],
      fences({ a: { appliedSequence: 2, appliedEventId: 'e2' } }),
    );
    expect(plan.redrive.map((letter) => letter.id)).toEqual(['dl-1']);
    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual(['dl-2']);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-3']);
  });

  test('an ordinary dead letter below the fence (a copy of an applied event) stays alreadyApplied', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('e1', 'a', 1), errorName: 'PermanentError' }], fences({ a: { appliedSequence: 2, appliedEventId: 'e2' } }));
    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual(['dl-1']);
    expect(plan.reused).toEqual([]);
  });
});
