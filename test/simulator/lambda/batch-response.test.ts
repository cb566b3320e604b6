import { describe, expect, test } from 'vitest';
import { readBatchResponse } from '../../../simulator/lambda/batch-response';

const BATCH = ['m1', 'm2', 'm3'];

describe('readBatchResponse', () => {
  test.each([
    ['no response', undefined],
    ['null', null],
    ['an empty response', {}],
    ['a null batchItemFailures', { batchItemFailures: null }],
    ['an empty batchItemFailures', { batchItemFailures: [] }],
  ])('%s: the whole batch succeeded', (_case, response) => {
    expect(readBatchResponse(response, BATCH)).toEqual({ kind: 'partial', failedMessageIds: [] });
  });

  test('the listed messages failed (each once, in order)', () => {
    const response = { batchItemFailures: [{ itemIdentifier: 'm3' }, { itemIdentifier: 'm1' }, { itemIdentifier: 'm3' }] };
    expect(readBatchResponse(response, BATCH)).toEqual({ kind: 'partial', failedMessageIds: ['m3', 'm1'] });
  });

  test.each([
    ['an empty-string itemIdentifier', { batchItemFailures: [{ itemIdentifier: '' }] }, /itemIdentifier/],
    ['a null itemIdentifier', { batchItemFailures: [{ itemIdentifier: null }] }, /itemIdentifier/],
    ['a bad key name', { batchItemFailures: [{ messageId: 'm1' }] }, /no itemIdentifier/],
    ['an id not in the batch', { batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'other' }] }, /'other' is no message id of the batch/],
    ['a batchItemFailures that is not a list', { batchItemFailures: 'm1' }, /not a list/],
    ['a string response', 'ok', /a string/],
    ['an array response', [{ itemIdentifier: 'm1' }], /an array/],
  ])('%s: the whole batch failed', (_case, response, reason) => {
    const verdict = readBatchResponse(response, BATCH);
    expect(verdict.kind).toBe('invalid');
    expect(verdict.kind === 'invalid' ? verdict.reason : '').toMatch(reason);
  });
});
