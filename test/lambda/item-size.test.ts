import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { attributeValueSize, itemSize, MAX_ITEM_BYTES, numberSize } from '../../lambda/transaction/item-size';

describe('numberSize: 1 byte per pair of significant digits (paired from the decimal point), plus 1', () => {
  // each figure was measured on DynamoDB Local (1 KB write-capacity boundary), see item-size.int.test.ts
  test.each([
    ['0', 1],
    ['-0', 1],
    ['0.0', 1],
    ['7', 2],
    ['12', 2],
    ['100', 2], // 01|00: trailing zero pairs are dropped
    ['1000', 2],
    ['101', 3],
    ['123', 3],
    ['1234', 3],
    ['12345', 4],
    ['0.5', 2], // 50
    ['1.5', 3], // 01|50: digits pair from the decimal point
    ['10.1', 3],
    ['123.4', 4],
    ['99999.9', 5],
    ['0.000125', 3], // 00|00|01|25: leading zero pairs are dropped
    ['12345678901234', 8],
    ['1E+2', 2],
    ['1.5E-7', 2], // 0.00000015: 00|00|00|15
    ['1.5e+21', 2],
    ['-7', 3], // a negative number costs one byte more
    ['-1.5', 4],
    ['-100', 3],
    ['12345678901234567890123456789012345678', 20], // 38 digits, the most DynamoDB keeps
    ['-12345678901234567890123456789012345678', 21],
  ])('%s costs %i bytes', (text, size) => {
    expect(numberSize(text)).toBe(size);
  });

  test('fails on text that is not a number', () => {
    expect(() => numberSize('12abc')).toThrow(/'12abc' is not a number/);
  });
});

describe('attributeValueSize', () => {
  test('strings cost their UTF-8 length, not their character count', () => {
    expect(attributeValueSize('')).toBe(0);
    expect(attributeValueSize('abc')).toBe(3);
    expect(attributeValueSize('é')).toBe(2);
    expect(attributeValueSize('€')).toBe(3);
    expect(attributeValueSize('😀')).toBe(4);
  });

  test('numbers, bigints and NumberValues are sized from their digits', () => {
    expect(attributeValueSize(1234)).toBe(3);
    expect(attributeValueSize(-0.5)).toBe(3);
    expect(attributeValueSize(12345678901234567890n)).toBe(11);
    expect(attributeValueSize(new NumberValue('12345678901234567890'))).toBe(11);
  });

  test('binary costs its byte length; booleans and null 1 byte', () => {
    expect(attributeValueSize(new Uint8Array(10))).toBe(10);
    expect(attributeValueSize(Buffer.from('hello'))).toBe(5);
    expect(attributeValueSize(new ArrayBuffer(7))).toBe(7);
    expect(attributeValueSize(true)).toBe(1);
    expect(attributeValueSize(false)).toBe(1);
    expect(attributeValueSize(null)).toBe(1);
  });

  test('a list costs 3 bytes, plus 1 byte per element, plus the elements', () => {
    expect(attributeValueSize([])).toBe(3);
    expect(attributeValueSize(['ab', 'c'])).toBe(3 + (1 + 2) + (1 + 1));
    expect(attributeValueSize([[]])).toBe(3 + 1 + 3);
  });

  test('a map costs 3 bytes, plus 1 byte per element, plus each name and value', () => {
    expect(attributeValueSize({})).toBe(3);
    expect(attributeValueSize({ id: 'e-1', n: 5 })).toBe(3 + (1 + 2 + 3) + (1 + 1 + 2));
    expect(attributeValueSize({ outer: { inner: true } })).toBe(3 + 1 + 5 + (3 + 1 + 5 + 1));
  });

  test('a set costs the sum of its elements', () => {
    expect(attributeValueSize(new Set(['a', 'bc']))).toBe(3);
    expect(attributeValueSize(new Set([1, 1234]))).toBe(2 + 3);
    expect(attributeValueSize(new Set([new Uint8Array(4), new Uint8Array(6)]))).toBe(10);
  });

  test('undefined (dropped by the DocumentClient) costs nothing, in an item or a map', () => {
    expect(attributeValueSize(undefined)).toBe(0);
    expect(attributeValueSize({ a: undefined, b: 'x' })).toBe(3 + 1 + 1 + 1);
  });

  test('fails on a value DynamoDB cannot store', () => {
    expect(() => attributeValueSize(() => 1)).toThrow(/can not be a function/);
  });
});

describe('itemSize', () => {
  test('adds each attribute name (UTF-8) and value', () => {
    expect(itemSize({ pk: 'a' })).toBe(3);
    expect(itemSize({ pk: 'account-1', balance: 1250, tags: new Set(['vip']), closed: false, 'prénom': 'Zoë' })).toBe(
      2 + 9 + (7 + 3) + (4 + 3) + (6 + 1) + (7 + 4),
    );
  });

  test('the item limit is 400 KB', () => {
    expect(MAX_ITEM_BYTES).toBe(409_600);
  });
});
