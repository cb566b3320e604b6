import { describe, expect, test } from 'vitest';
import {
  appendAndDrop,
  appendProcessed,
  evictedUpToAfter,
  evictionSign,
  findProcessed,
  fingerprintPrefix,
  formatProcessedMessage,
  parseProcessedMessages,
  PROCESSED_MESSAGES_LIMITS,
  processedMessageFor,
} from '../../lambda/aggregate/processed-messages';
import { payloadFingerprint } from '../../lambda/fingerprint';
import { itemSize } from '../../lambda/transaction/item-size';
import { AGGREGATE_ITEM } from '../../lambda/contract/wire-format';

const HEX_A = '0123456789abcdef';
const HEX_B = 'fedcba9876543210';

describe('processed messages of an aggregate', () => {
  test('the entry format is defined once in the wire format: `<eventId> <first 16 hex digits of the fingerprint>`', () => {
    expect(AGGREGATE_ITEM.PROCESSED_MESSAGE_SEPARATOR).toBe(' ');
    expect(AGGREGATE_ITEM.FINGERPRINT_PREFIX_HEX_DIGITS).toBe(16);
    const fingerprint = `sha256:${HEX_A}${'9'.repeat(48)}`;
    expect(fingerprintPrefix(fingerprint)).toBe(HEX_A);
    expect(processedMessageFor('e-1', fingerprint)).toEqual({ id: 'e-1', fingerprintPrefix: HEX_A });
    expect(formatProcessedMessage(processedMessageFor('e-1', fingerprint))).toBe(`e-1 ${HEX_A}`);
  });

  test('an entry of a UUID id is 53 characters, a list of 100 of them about 5.4 KB of item size', () => {
    const id = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
    const entry = formatProcessedMessage(processedMessageFor(id, payloadFingerprint({ type: 't', data: {} })));
    expect(entry).toHaveLength(53);
    const size = itemSize({ [AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]: Array.from({ length: 100 }, () => entry) });
    expect(size).toBeLessThan(5_500);
  });

  test('an entry keeps the event time, when the event has one, as epoch seconds in base 36 after @, and round-trips', () => {
    const fingerprint = `sha256:${HEX_A}${'9'.repeat(48)}`;
    const message = processedMessageFor('e 1', fingerprint, '2024-05-01T12:00:00.900Z');
    expect(message).toEqual({ id: 'e 1', fingerprintPrefix: HEX_A, eventTimeEpochSeconds: 1714564800 });
    expect(formatProcessedMessage(message)).toBe(`e 1 ${HEX_A}@${(1714564800).toString(36)}`);
    expect(parseProcessedMessages([formatProcessedMessage(message), `old ${HEX_B}`])).toEqual([message, { id: 'old', fingerprintPrefix: HEX_B }]);
  });

  test('with the newest forgotten time: a message not newer than it may be an evicted redelivery, in any order of application (issue 38, CI seed 541821764)', () => {
    const at = (id: string, seconds?: number) => ({ id, fingerprintPrefix: HEX_A, ...(seconds === undefined ? {} : { eventTimeEpochSeconds: seconds }) });
    const remembered = [at('b', 100)]; // applied after 'a' (300) although older: 'a' was dropped
    expect(evictionSign(remembered, 300, at('a', 300), 1)).toEqual({ basis: 'forgotten', epochSeconds: 300 }); // same second: may be 'a' again
    expect(evictionSign(remembered, 300, at('x', 200), 1)).toEqual({ basis: 'forgotten', epochSeconds: 300 }); // newer than the oldest remembered, still may be
    expect(evictionSign(remembered, 300, at('y', 301), 1)).toBeUndefined(); // newer than everything dropped: cannot be
    expect(evictionSign(remembered, 300, at('z'), 1)).toBeUndefined(); // no time: unknown
  });

  test('without it (none dropped yet, or an item written before the runtime kept it): only when the list is full and the message is older than the oldest remembered', () => {
    const at = (id: string, seconds?: number) => ({ id, fingerprintPrefix: HEX_A, ...(seconds === undefined ? {} : { eventTimeEpochSeconds: seconds }) });
    const full = [at('b', 200), at('c', 300)];
    expect(evictionSign(full, undefined, at('a', 100), 2)).toEqual({ basis: 'oldest-remembered', epochSeconds: 200 });
    expect(evictionSign(full, undefined, at('a', 200), 2)).toBeUndefined(); // as old as the oldest: the list may just have filled up
    expect(evictionSign(full.slice(1), undefined, at('a', 100), 2)).toBeUndefined(); // not full: nothing was evicted
    expect(evictionSign(full, undefined, at('a'), 2)).toBeUndefined(); // no time: unknown
    expect(evictionSign([at('b'), at('c', 300)], undefined, at('a', 100), 2)).toBeUndefined(); // the oldest has no time
  });

  test('the newest forgotten time only grows, with the times of the dropped entries (none moves it without a time)', () => {
    const at = (id: string, seconds?: number) => ({ id, fingerprintPrefix: HEX_A, ...(seconds === undefined ? {} : { eventTimeEpochSeconds: seconds }) });
    const { kept, dropped } = appendAndDrop([at('a', 300), at('b', 100)], at('c', 200), 2);
    expect(kept.map((entry) => entry.id)).toEqual(['b', 'c']);
    expect(dropped.map((entry) => entry.id)).toEqual(['a']);
    expect(evictedUpToAfter(undefined, dropped)).toBe(300);
    expect(evictedUpToAfter(400, dropped)).toBe(400);
    expect(evictedUpToAfter(undefined, [at('d')])).toBeUndefined();
    expect(evictedUpToAfter(250, [])).toBe(250);
  });

  test('append keeps the newest entries, newest last', () => {
    let list = parseProcessedMessages(undefined);
    for (const id of ['a', 'b', 'c', 'd']) list = appendProcessed(list, { id, fingerprintPrefix: HEX_A }, 3);
    expect(list.map((message) => message.id)).toEqual(['b', 'c', 'd']);
    expect(findProcessed(list, 'a')).toBeUndefined();
    expect(findProcessed(list, 'c')).toEqual({ id: 'c', fingerprintPrefix: HEX_A });
  });

  test('a limit of 1 remembers only the last message', () => {
    expect(appendProcessed([{ id: 'a', fingerprintPrefix: HEX_A }], { id: 'b', fingerprintPrefix: HEX_B }, 1)).toEqual([{ id: 'b', fingerprintPrefix: HEX_B }]);
  });

  test('an event id may contain spaces: an entry splits on its LAST space, and round-trips', () => {
    const message = { id: ' order 42  placed ', fingerprintPrefix: HEX_B };
    const stored = formatProcessedMessage(message);
    expect(stored).toBe(` order 42  placed  ${HEX_B}`);
    expect(parseProcessedMessages([stored])).toEqual([message]);
    expect(findProcessed(parseProcessedMessages([stored]), ' order 42  placed ')).toEqual(message);
  });

  test('parsing ignores entries that are not `<id> <16 hex digits>` strings, so a hand-edited item cannot crash it', () => {
    expect(
      parseProcessedMessages([
        `a ${HEX_A}`,
        { id: 'map', fingerprint: `sha256:${HEX_A}` },
        'no-separator',
        ` ${HEX_A}`, // empty id
        `short ${HEX_A.slice(1)}`,
        `upper ${HEX_A.toUpperCase()}`,
        `trailing ${HEX_A} `,
        null,
        3,
        `b ${HEX_B}`,
      ]),
    ).toEqual([
      { id: 'a', fingerprintPrefix: HEX_A },
      { id: 'b', fingerprintPrefix: HEX_B },
    ]);
    expect(parseProcessedMessages('not a list')).toEqual([]);
  });

  test('the default bound is 100, from 1 to 1000', () => {
    expect(PROCESSED_MESSAGES_LIMITS).toEqual({ DEFAULT: 100, MIN: 1, MAX: 1000 });
  });
});
