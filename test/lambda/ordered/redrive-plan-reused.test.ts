/**
 * planOrderedRedrive and dead letters that were never applied (review r4, F3): a SequenceReusedError dead letter at or
 * below the fence is a new event under a sequence already passed, not an applied one; two dead letters with one
 * sequence are copies only when they hold one event id. The fence and record readers are in-memory stand-ins (the plan
 * is pure: it only reads fences and inbox records; OrderedEventRecords against DynamoDB Local is in
 * redrive-plan-unrecorded.int.test.ts); r4's F3 against DynamoDB Local is in ordered-event-ids' sibling, test/lambda/ordered/r4-review-attacks.int.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../../operator/ordered/redrive-plan';
import type { IOrderedEventRecords } from '../../../operator/ordered/ordered-event-records';

const body = (id: string, aggregateId: string, sequence: number): string =>
  JSON.stringify({ specversion: '1.0', id, source: 's', type: 'T', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data: {}, partitionkey: aggregateId, sequence: String(sequence).padStart(16, '0') });

const fences = (state: Record<string, { appliedSequence: number; appliedEventId?: string; appliedGeneration?: number }>): IFenceReader => ({
  get: async (aggregateId) => state[aggregateId] ?? { appliedSequence: 0 },
});

/** The subscriber's inbox holds a record of exactly these event ids. */
const records = (...applied: string[]): IOrderedEventRecords => ({
  find: async (_position, eventId) => (applied.includes(eventId) ? 'applied' : undefined),
});

describe('planOrderedRedrive: dead letters never applied', () => {
  test('copy of r4 F3: a SequenceReusedError dead letter below the fence is reused, not applied', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('refunded', 'a', 1), errorName: 'SequenceReusedError' }], fences({ a: { appliedSequence: 2, appliedEventId: 'captured' } }), records('captured'));
    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual([]);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-1']);
    expect(plan.redrive).toEqual([]);
  });

  test('review ro12, RO12-10: a SequenceReusedError letter whose event id the inbox holds a live record of is applied (the record wins over the error name), not reused', async () => {
    const asked: string[] = [];
    const recorded: IOrderedEventRecords = { find: async (_position, eventId) => (asked.push(eventId), eventId === 'E' ? 'applied' : undefined) };
    const plan = await planOrderedRedrive(
      [
        { id: 'dl-1', body: body('E', 'a', 1), errorName: 'SequenceReusedError' },
        { id: 'dl-2', body: body('F', 'a', 2), errorName: 'SequenceReusedError' },
      ],
      fences({ a: { appliedSequence: 5, appliedEventId: 'X' } }),
      recorded,
    );
    expect(asked).toEqual(['E', 'F']);
    expect(plan.alreadyApplied.map((letter) => [letter.id, letter.recognisedBy])).toEqual([['dl-1', 'inbox record']]);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-2']);
  });

  test('review ro12, RO12-1: letters of one event (same aggregate, sequence and event id) decided never applied or unproven are planned once, the others as its copies', async () => {
    const older = JSON.stringify({ ...(JSON.parse(body('gen0-3', 'b', 3)) as object), iefgeneration: 0 });
    const plan = await planOrderedRedrive(
      [
        { id: 'dl-1', body: body('refunded', 'a', 1), errorName: 'SequenceReusedError' },
        { id: 'dl-2', body: body('refunded', 'a', 1), errorName: 'SequenceReusedError' },
        { id: 'dl-3', body: body('refunded', 'a', 1) },
        { id: 'dl-4', body: older },
        { id: 'dl-5', body: older },
        { id: 'dl-6', body: body('old', 'c', 1) },
        { id: 'dl-7', body: body('old', 'c', 1) },
      ],
      fences({ a: { appliedSequence: 2, appliedEventId: 'settled' }, b: { appliedSequence: 2, appliedEventId: 'new-2', appliedGeneration: 1 }, c: { appliedSequence: 2, appliedEventId: 'c2' } }),
      { find: async (_position, eventId) => (eventId === 'old' ? { unproven: 'older than the window' } : undefined) },
    );
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-1', 'dl-4']);
    expect(plan.unproven.map((letter) => letter.id)).toEqual(['dl-6']);
    expect(plan.copies.map((letter) => [letter.id, letter.copyOf])).toEqual([['dl-2', 'dl-1'], ['dl-3', 'dl-1'], ['dl-5', 'dl-4'], ['dl-7', 'dl-6']]);
    expect([...plan.redrive, ...plan.alreadyApplied]).toEqual([]);
  });

  test('a dead letter at the fence whose event id is not the one the fence applied is reused (without its error name too)', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('refunded', 'a', 2) }, { id: 'dl-2', body: body('captured', 'b', 2) }], fences({ a: { appliedSequence: 2, appliedEventId: 'captured' }, b: { appliedSequence: 2, appliedEventId: 'captured' } }), records('captured'));
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
      records('e2'),
    );
    expect(plan.redrive.map((letter) => letter.id)).toEqual(['dl-1']);
    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual(['dl-2']);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-3']);
  });

  test('an ordinary dead letter below the fence (a copy of an applied event: its inbox record is live) stays alreadyApplied, by its inbox record', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('e1', 'a', 1), errorName: 'PermanentError' }], fences({ a: { appliedSequence: 2, appliedEventId: 'e2' } }), records('e1', 'e2'));
    expect(plan.alreadyApplied.map((letter) => [letter.id, letter.recognisedBy])).toEqual([['dl-1', 'inbox record']]);
    expect(plan.reused).toEqual([]);
  });

  test('a dead letter below the fence without an error name and without an inbox record was never applied: reused, not alreadyApplied', async () => {
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: body('old-1', 'a', 1) }], fences({ a: { appliedSequence: 2, appliedEventId: 'new-2' } }), records('new-1', 'new-2'));
    expect(plan.alreadyApplied).toEqual([]);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-1']);
  });

  test('a dead letter above the fence of a generation the fence has left is reused (the consumer refuses it), not redriven', async () => {
    const old = JSON.stringify({ ...(JSON.parse(body('old-3', 'a', 3)) as object), iefgeneration: 0 });
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: old }], fences({ a: { appliedSequence: 2, appliedEventId: 'new-2', appliedGeneration: 1 } }), records('new-2'));
    expect(plan.redrive).toEqual([]);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-1']);
  });
});

describe('planOrderedRedrive: one event, one decision (review ro12b)', () => {
  test('RO12B-4: one event id dead-lettered at two sequences, neither applied, is planned never applied once; the other letter is its copy (written again once)', async () => {
    const older = JSON.stringify({ ...(JSON.parse(body('X', 'a', 6)) as object) });
    const plan = await planOrderedRedrive(
      [
        { id: 'dl-4', body: body('X', 'a', 4), errorName: 'SequenceReusedError' },
        { id: 'dl-6', body: older, errorName: 'SequenceReusedError' },
      ],
      fences({ a: { appliedSequence: 6, appliedEventId: 'N6', appliedGeneration: 1 } }),
      records(),
    );
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-4']);
    expect(plan.copies.map((letter) => [letter.id, letter.copyOf])).toEqual([['dl-6', 'dl-4']]);
  });

  test('RO12B-8: a letter already named SequenceReusedError, without a record and too old to prove it never applied, is unproven, not reused', async () => {
    const plan = await planOrderedRedrive(
      [{ id: 'dl-1', body: body('credited', 'a', 1), errorName: 'SequenceReusedError' }],
      fences({ a: { appliedSequence: 2, appliedEventId: 'debited' } }),
      { find: async () => ({ unproven: 'older than the window its record could have been written under' }) },
    );
    expect(plan.reused).toEqual([]);
    expect(plan.unproven.map((letter) => [letter.id, letter.why])).toEqual([['dl-1', 'older than the window its record could have been written under']]);
  });
});
