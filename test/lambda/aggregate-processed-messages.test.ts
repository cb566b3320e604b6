import { describe, expect, test } from 'vitest';
import { appendProcessed, findProcessed, parseProcessedMessages, PROCESSED_MESSAGES_LIMITS } from '../../lambda/aggregate/processed-messages';

describe('processed messages of an aggregate', () => {
  test('append keeps the newest entries, newest last', () => {
    let list = parseProcessedMessages(undefined);
    for (const id of ['a', 'b', 'c', 'd']) list = appendProcessed(list, { id, fingerprint: `f-${id}` }, 3);
    expect(list).toEqual([
      { id: 'b', fingerprint: 'f-b' },
      { id: 'c', fingerprint: 'f-c' },
      { id: 'd', fingerprint: 'f-d' },
    ]);
    expect(findProcessed(list, 'a')).toBeUndefined();
    expect(findProcessed(list, 'c')).toEqual({ id: 'c', fingerprint: 'f-c' });
  });

  test('a limit of 1 remembers only the last message', () => {
    expect(appendProcessed([{ id: 'a' }], { id: 'b' }, 1)).toEqual([{ id: 'b' }]);
  });

  test('parsing ignores entries that are not { id: string } maps, and keeps entries without fingerprint', () => {
    expect(parseProcessedMessages([{ id: 'a', fingerprint: 'f' }, { id: 'b' }, 'c', null, { id: 3 }, { fingerprint: 'x' }])).toEqual([
      { id: 'a', fingerprint: 'f' },
      { id: 'b' },
    ]);
    expect(parseProcessedMessages('not a list')).toEqual([]);
  });

  test('the default bound is 100, from 1 to 1000', () => {
    expect(PROCESSED_MESSAGES_LIMITS).toEqual({ DEFAULT: 100, MIN: 1, MAX: 1000 });
  });
});
