/**
 * DynamoDB item sizes, computed the way AWS documents them ("Item sizes and formats" in the DynamoDB developer guide),
 * from DocumentClient-style values (plain JavaScript), so a write can be checked against the 400 KB item limit and the
 * 4 MB transaction limit before it is sent:
 *
 * - an attribute costs the UTF-8 length of its name plus the size of its value;
 * - a string: its UTF-8 length; binary: its length in bytes; a boolean or null: 1 byte;
 * - a number: about 1 byte per two significant digits, plus 1 (see {@link numberSize} for the exact pairing);
 * - a list or map: 3 bytes, plus 1 byte per element, plus its elements (in a map, with their names);
 * - a set: the sum of its elements.
 *
 * These agree byte for byte with what DynamoDB Local charges and rejects (test/lambda/item-size.int.test.ts). Values the
 * DocumentClient would drop (`undefined` with `removeUndefinedValues`) count for nothing.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';

/** DynamoDB's item size limit: 400 KB, attribute names included. */
export const MAX_ITEM_BYTES = 400 * 1024;

/** DynamoDB's limits on a key attribute value, in bytes: a partition key 2048, a sort key 1024. */
export const MAX_PARTITION_KEY_BYTES = 2048;
export const MAX_SORT_KEY_BYTES = 1024;

/** Bytes every list or map costs on top of its elements. */
const CONTAINER_OVERHEAD_BYTES = 3;
/** Bytes each element of a list or map costs on top of its own size. */
const ELEMENT_OVERHEAD_BYTES = 1;

/** The UTF-8 length of `text`, in bytes. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Size of a number from its decimal text, e.g. `'-12.50'` or `'1.5e+21'`. DynamoDB stores a number as one byte of
 * exponent plus its significant digits in base 100, paired from the decimal point, so it costs 1 byte per pair of
 * digits plus 1 (AWS: "approximately 1 byte per two significant digits, plus 1"); a negative number 1 byte more and
 * zero 1 byte. The pairing and the sign byte are what DynamoDB Local charges (test/lambda/item-size.int.test.ts):
 * `1.5` is 2 pairs (`01|50`), so 3 bytes; `-7` is 3 bytes.
 */
export function numberSize(text: string): number {
  if (/^-?[1-9]\d*$/.test(text)) return integerSize(text);
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (match === null) throw new TypeError(`'${text}' is not a number`);
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  // where the decimal point falls in `digits`, after applying the exponent
  const point = whole.length + Number(exponent);
  const integerPart = (point >= digits.length ? digits.padEnd(point, '0') : digits.slice(0, Math.max(point, 0))).replace(/^0+/, '');
  const fractionPart = (point < 0 ? '0'.repeat(-point) + digits : digits.slice(Math.max(point, 0))).replace(/0+$/, '');
  if (integerPart === '' && fractionPart === '') return 1; // zero
  const paired = (integerPart.length % 2 === 1 ? `0${integerPart}` : integerPart) + (fractionPart.length % 2 === 1 ? `${fractionPart}0` : fractionPart);
  const pairs = paired.match(/../g) ?? [];
  let first = 0;
  let last = pairs.length;
  while (first < last && pairs[first] === '00') first++;
  while (last > first && pairs[last - 1] === '00') last--;
  return last - first + 1 + (sign === '-' ? 1 : 0);
}

/**
 * {@link numberSize} of a nonzero integer without leading zeros, `-` and digits (what `String` makes of most numbers):
 * its pairs counted from the right, trailing `00` pairs left out, without the general path's regular expressions.
 */
function integerSize(text: string): number {
  const negative = text.startsWith('-');
  const digits = negative ? text.length - 1 : text.length;
  // pairs are taken from the decimal point (the end): the leftmost one holds a nonzero digit, trailing '00' pairs drop
  let zeroPairs = 0;
  for (let end = text.length; text.endsWith('00', end) && end - 2 >= (negative ? 1 : 0) + 1; end -= 2) zeroPairs++;
  return Math.ceil(digits / 2) - zeroPairs + 1 + (negative ? 1 : 0);
}

/** True for lib-dynamodb's `NumberValue`, also from a second bundled copy of lib-dynamodb. */
export function isNumberValue(value: object): value is { value: string } {
  return value instanceof NumberValue || (value.constructor?.name === 'NumberValue' && typeof (value as { value?: unknown }).value === 'string');
}

function binaryLength(value: unknown): number | undefined {
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  return undefined;
}

function setSize(values: ReadonlySet<unknown>): number {
  let total = 0;
  for (const element of values) total += attributeValueSize(element);
  return total;
}

/** Size in bytes of one attribute value (without its name). */
export function attributeValueSize(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(String(value));
  if (typeof value !== 'object') {
    throw new TypeError(`a DynamoDB attribute value can not be a ${typeof value}`);
  }
  const binary = binaryLength(value);
  if (binary !== undefined) return binary;
  if (isNumberValue(value)) return numberSize(value.value);
  if (value instanceof Set) return setSize(value);
  if (Array.isArray(value)) {
    return value.reduce<number>((sum, element) => sum + ELEMENT_OVERHEAD_BYTES + attributeValueSize(element), CONTAINER_OVERHEAD_BYTES);
  }
  return Object.entries(value as Record<string, unknown>).reduce<number>(
    (sum, [name, element]) => (element === undefined ? sum : sum + ELEMENT_OVERHEAD_BYTES + utf8Bytes(name) + attributeValueSize(element)),
    CONTAINER_OVERHEAD_BYTES,
  );
}

/** Size in bytes of an item (or of any map of attributes, such as a key): the sum over its attributes of name + value. */
export function itemSize(item: Readonly<Record<string, unknown>>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    total += utf8Bytes(name) + attributeValueSize(value);
  }
  return total;
}
