import { describe, expect, test } from 'vitest';
import { MAX_CONTEXT_BYTES, MAX_CONTEXT_DEPTH, mergeContext, ProcessingContextError } from '../../../lambda/processing/processing-context';
import { attributeValueSize } from '../../../lambda/transaction/item-size';

/** A context `{ pad: 'x…x' }` of exactly `bytes` bytes as DynamoDB counts a map: 3 + (1 + 3 for the name `pad`) + the string. */
const paddedTo = (bytes: number): Record<string, unknown> => ({ pad: 'x'.repeat(bytes - 7) });

describe('mergeContext', () => {
  test('merges top-level keys, JSON-normalized: a Date becomes its ISO string, undefined values are dropped', () => {
    const merged = mergeContext({ a: 1, b: 'old' }, { b: 'new', at: new Date('2024-05-01T12:00:00.000Z'), gone: undefined }, 'the output');
    expect(merged).toEqual({ a: 1, b: 'new', at: '2024-05-01T12:00:00.000Z' });
    expect(merged).not.toHaveProperty('gone');
  });

  test('measures the context with the item-size calculator: exactly the limit is stored, one byte more is refused', () => {
    expect(attributeValueSize(paddedTo(MAX_CONTEXT_BYTES))).toBe(MAX_CONTEXT_BYTES);
    expect(mergeContext({}, paddedTo(MAX_CONTEXT_BYTES), 'the output')).toEqual(paddedTo(MAX_CONTEXT_BYTES));
    expect(() => mergeContext({}, paddedTo(MAX_CONTEXT_BYTES + 1), "the output of step 'render'")).toThrow(
      new ProcessingContextError(
        `the processing context with the output of step 'render' would be ${MAX_CONTEXT_BYTES + 1} bytes, over the limit of ${MAX_CONTEXT_BYTES} bytes; ` +
          'store large data elsewhere (e.g. S3) and keep only its key in the context',
      ),
    );
  });

  test('counts a number as DynamoDB stores it (digit pairs, a sign byte), as the item-size calculator does', () => {
    // { pad, n: -7 }: -7 costs 3 bytes (1 pair, 1 exponent byte, 1 sign byte), its entry 1 + 1 + 3
    const base = paddedTo(MAX_CONTEXT_BYTES - 5);
    expect(() => mergeContext(base, { n: -7 }, 'the output')).not.toThrow();
    expect(() => mergeContext(paddedTo(MAX_CONTEXT_BYTES - 4), { n: -7 }, 'the output')).toThrow(ProcessingContextError);
  });

  test('refuses an addition that is not a plain object, or not JSON-serializable', () => {
    expect(() => mergeContext({}, ['inv-1'], 'the output')).toThrow(/the output must be a plain object \(or nothing\), but was an array/);
    expect(() => mergeContext({}, { big: 1n }, 'the output')).toThrow(/the output must be JSON-serializable/);
  });

  test.each([
    ['a number beyond Number.MAX_SAFE_INTEGER', { invoiceId: 2 ** 60 }, /context\.invoiceId is 1152921504606847000, beyond Number\.MAX_SAFE_INTEGER/],
    ['a negative one', { nested: { amount: -(2 ** 60) } }, /context\.nested\.amount is -1152921504606847000, beyond Number\.MAX_SAFE_INTEGER/],
    ['a number below 1E-130', { rates: [0, 1e-200] }, /context\.rates\[1\] is 1e-200, smaller than DynamoDB's smallest number 1E-130/],
    ['an empty key', { headers: { '': 'x' } }, /context\.headers has an empty key/],
    ['a key named __proto__ (lost when read back)', JSON.parse('{"customer":{"__proto__":{"admin":true}}}') as unknown, /context\.customer has the key '__proto__'/],
  ])('refuses %s: DynamoDB (or the DocumentClient) would refuse the write', (_what, addition, reason) => {
    expect(() => mergeContext({}, addition, "the output of step 'create-invoice'")).toThrow(ProcessingContextError);
    expect(() => mergeContext({}, addition, "the output of step 'create-invoice'")).toThrow(reason);
  });

  test(`refuses nesting deeper than ${MAX_CONTEXT_DEPTH} levels, the context counting as 1`, () => {
    const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) });
    // nested(n) is n maps deep: as the context itself, 31 are stored (checked against DynamoDB Local), 32 are refused
    expect(() => mergeContext({}, nested(MAX_CONTEXT_DEPTH), 'the output')).not.toThrow();
    expect(() => mergeContext({}, nested(MAX_CONTEXT_DEPTH + 1), 'the output')).toThrow(/nests deeper than 31 levels of maps and lists/);
    expect(() => mergeContext({}, { list: [[[nested(MAX_CONTEXT_DEPTH - 3)]]] }, 'the output')).toThrow(/nests deeper than 31 levels/);
  });

  test('stores the edges DynamoDB accepts: MAX_SAFE_INTEGER, 1E-130, zero', () => {
    const edges = { max: Number.MAX_SAFE_INTEGER, min: -Number.MAX_SAFE_INTEGER, tiny: 1e-130, zero: 0 };
    expect(mergeContext({}, edges, 'the output')).toEqual(edges);
  });
});
