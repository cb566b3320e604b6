import { describe, expect, it } from 'vitest';
import {
  compileFilterPolicy,
  UnsupportedPatternError,
  type FilterableMessage,
  type SnsMessageAttribute,
} from '../../../operator/patterns/filter-policy';

function bodyMessage(body: unknown): FilterableMessage {
  return { body: typeof body === 'string' ? body : JSON.stringify(body), attributes: {} };
}

function attributeMessage(attributes: Record<string, SnsMessageAttribute>): FilterableMessage {
  return { body: 'not json', attributes };
}

const string = (value: string): SnsMessageAttribute => ({ DataType: 'String', StringValue: value });
const number = (value: string): SnsMessageAttribute => ({ DataType: 'Number', StringValue: value });
const stringArray = (value: string): SnsMessageAttribute => ({ DataType: 'String.Array', StringValue: value });

describe('compileFilterPolicy: the real shipping subscription policy (MessageBody)', () => {
  const policy = { type: ['com.example.orders.OrderPlaced'], data: { shippingAddress: { country: [{ exists: true }] } } };
  const filter = compileFilterPolicy(policy, 'MessageBody');
  const envelope = (type: string, data: unknown): FilterableMessage =>
    bodyMessage({ specversion: '1.0', id: 'e1', source: 'orders', type, time: '2024-01-01T00:00:00Z', datacontenttype: 'application/json', data });

  it.each([
    ['an OrderPlaced with a shipping country', envelope('com.example.orders.OrderPlaced', { shippingAddress: { country: 'DE' } }), true],
    ['an OrderPlaced without a shipping address', envelope('com.example.orders.OrderPlaced', { total: 1 }), false],
    ['an OrderPlaced with an address but no country', envelope('com.example.orders.OrderPlaced', { shippingAddress: { city: 'Berlin' } }), false],
    ['an OrderPlaced whose country is an object (not a leaf)', envelope('com.example.orders.OrderPlaced', { shippingAddress: { country: { code: 'DE' } } }), false],
    ['another event type with a country', envelope('com.example.orders.OrderCancelled', { shippingAddress: { country: 'DE' } }), false],
    ['a body that is not JSON', bodyMessage('OrderPlaced DE'), false],
  ])('%s -> %s', (_name, message, expected) => {
    expect(filter(message)).toBe(expected);
  });
});

type BodyCase = readonly [name: string, policy: Record<string, unknown>, body: unknown, expected: boolean];

const bodyCases: readonly BodyCase[] = [
  ['keys AND', { a: ['x'], b: ['y'] }, { a: 'x', b: 'y' }, true],
  ['keys AND: one missing', { a: ['x'], b: ['y'] }, { a: 'x' }, false],
  ['values OR', { a: ['rugby', 'tennis'] }, { a: 'tennis' }, true],
  ['body array: any element', { a: ['rugby'] }, { a: ['baseball', 'rugby'] }, true],
  ['body that is a JSON array', { a: ['x'] }, [{ a: 'x' }], false],
  ['body that is a JSON string', { a: ['x'] }, '"x"', false],
  ['exact number', { price: [301.5] }, { price: 3.015e2 }, true],
  ['numeric =', { price: [{ numeric: ['=', 301.5] }] }, { price: 301.5 }, true],
  ['numeric range', { price: [{ numeric: ['>', 0, '<=', 150] }] }, { price: 150 }, true],
  ['numeric range outside', { price: [{ numeric: ['>', 0, '<=', 150] }] }, { price: 150.5 }, false],
  ['numeric does not match a numeric string', { price: [{ numeric: ['>', 0] }] }, { price: '5' }, false],
  ['prefix', { a: [{ prefix: 'bas' }] }, { a: 'basketball' }, true],
  ['suffix', { a: [{ suffix: 'ball' }] }, { a: 'basketball' }, true],
  ['equals-ignore-case', { a: [{ 'equals-ignore-case': 'RUGBY' }] }, { a: 'Rugby' }, true],
  ['anything-but list', { a: [{ 'anything-but': ['rugby', 'tennis'] }] }, { a: 'football' }, true],
  ['anything-but list excluded', { a: [{ 'anything-but': ['rugby', 'tennis'] }] }, { a: 'rugby' }, false],
  ['anything-but array with one unlisted value', { a: [{ 'anything-but': ['rugby', 'tennis'] }] }, { a: ['rugby', 'baseball'] }, true],
  ['anything-but numbers', { price: [{ 'anything-but': [100, 500] }] }, { price: 100.1 }, true],
  ['anything-but numbers excluded', { price: [{ 'anything-but': [100, 500] }] }, { price: 100 }, false],
  ['anything-but does not match a missing key', { a: [{ 'anything-but': ['rugby'] }] }, { b: 1 }, false],
  ['anything-but combined with exists false matches a missing key', { a: [{ 'anything-but': ['rugby'] }, { exists: false }] }, { b: 1 }, true],
  ['anything-but prefix', { e: [{ 'anything-but': { prefix: 'order-' } }] }, { e: 'order_number' }, true],
  ['anything-but prefix excluded', { e: [{ 'anything-but': { prefix: 'order-' } }] }, { e: 'order-cancelled' }, false],
  ['exists true', { store: [{ exists: true }] }, { store: 'fans' }, true],
  ['exists true, key missing', { store: [{ exists: true }] }, { interests: ['a'] }, false],
  ['exists false, key missing', { store: [{ exists: false }] }, { interests: ['a'] }, true],
  ['exists false, key present', { store: [{ exists: false }] }, { store: 'fans' }, false],
  ['exists false, nested key under a missing parent', { a: { b: [{ exists: false }] } }, { c: 1 }, true],
  ['cidr', { ip: [{ cidr: '10.0.0.0/24' }] }, { ip: '10.0.0.255' }, true],
  ['cidr outside', { ip: [{ cidr: '10.0.0.0/24' }] }, { ip: '10.1.1.0' }, false],
  ['nested keys', { a: { b: { c: ['x'] } } }, { a: { b: { c: 'x' } } }, true],
  ['nested keys miss', { a: { b: { c: ['x'] } } }, { a: { b: { d: 'x' } } }, false],
  ['boolean and null', { ok: [true], gone: [null] }, { ok: true, gone: null }, true],
  ['$or', { source: ['shop'], $or: [{ a: ['1'] }, { b: ['2'] }] }, { source: 'shop', b: '2' }, true],
  ['$or no branch', { source: ['shop'], $or: [{ a: ['1'] }, { b: ['2'] }] }, { source: 'shop', b: '3' }, false],
];

describe('compileFilterPolicy: MessageBody scope', () => {
  it.each(bodyCases)('%s', (_name, policy, body, expected) => {
    expect(compileFilterPolicy(policy, 'MessageBody')(bodyMessage(body))).toBe(expected);
  });
});

type AttributeCase = readonly [name: string, policy: Record<string, unknown>, attributes: Record<string, SnsMessageAttribute>, expected: boolean];

const attributeCases: readonly AttributeCase[] = [
  ['String exact', { c: ['rugby'] }, { c: string('rugby') }, true],
  ['String exact miss', { c: ['rugby'] }, { c: string('baseball') }, false],
  ['String.Array: any element', { c: ['rugby'] }, { c: stringArray('["baseball","rugby"]') }, true],
  ['String.Array: no element', { c: ['rugby'] }, { c: stringArray('["baseball"]') }, false],
  ['String.Array: anything-but with an unlisted element', { c: [{ 'anything-but': ['rugby', 'tennis'] }] }, { c: stringArray('["rugby","baseball"]') }, true],
  ['String.Array: numeric elements', { p: [{ numeric: ['>', 10] }] }, { p: stringArray('[5, 50]') }, true],
  ['String.Array: malformed gives no values', { c: ['rugby'] }, { c: stringArray('[rugby') }, false],
  ['Number attribute, numeric range', { p: [{ numeric: ['>', 0, '<=', 150] }] }, { p: number('100') }, true],
  ['Number attribute, exponent notation', { p: [{ numeric: ['=', 301.5] }] }, { p: number('3.015e2') }, true],
  ['Number attribute with a custom label', { p: [{ numeric: ['=', 1] }] }, { p: { DataType: 'Number.int', StringValue: '1' } }, true],
  ['Number attribute vs plain number', { p: [300] }, { p: number('300.0') }, true],
  ['Number attribute vs string value', { p: ['300'] }, { p: number('300') }, false],
  ['String attribute vs numeric', { p: [{ numeric: ['=', 300] }] }, { p: string('300') }, false],
  ['Binary attribute is ignored for values', { b: ['x'] }, { b: { DataType: 'Binary', BinaryValue: 'eA==' } }, false],
  ['Binary attribute is ignored for exists true', { b: [{ exists: true }] }, { b: { DataType: 'Binary', BinaryValue: 'eA==' } }, false],
  ['Binary attribute is ignored for exists false', { b: [{ exists: false }] }, { b: { DataType: 'Binary', BinaryValue: 'eA==' } }, true],
  ['exists true', { store: [{ exists: true }] }, { store: string('fans') }, true],
  ['exists false with the key missing', { store: [{ exists: false }] }, { other: string('x') }, true],
  ['exists false with the key present', { store: [{ exists: false }] }, { store: string('fans') }, false],
  ['prefix', { c: [{ prefix: 'bas' }] }, { c: string('baseball') }, true],
  ['cidr', { ip: [{ cidr: '10.0.0.0/24' }] }, { ip: string('10.0.0.7') }, true],
  ['the body is not consulted', { c: ['rugby'] }, {}, false],
  ['$or across attributes', { $or: [{ a: ['1'] }, { b: ['2'] }] }, { b: string('2') }, true],
];

describe('compileFilterPolicy: MessageAttributes scope', () => {
  it.each(attributeCases)('%s', (_name, policy, attributes, expected) => {
    expect(compileFilterPolicy(policy, 'MessageAttributes')(attributeMessage(attributes))).toBe(expected);
  });

  it('ignores the body even when it is JSON with the key', () => {
    const filter = compileFilterPolicy({ c: ['rugby'] }, 'MessageAttributes');
    expect(filter({ body: '{"c":"rugby"}', attributes: {} })).toBe(false);
  });
});

type ErrorCase = readonly [name: string, policy: Record<string, unknown>, scope: 'MessageAttributes' | 'MessageBody', path: string, operator: string | undefined, messagePart: string];

const errorCases: readonly ErrorCase[] = [
  ['unknown operator', { a: [{ contains: 'x' }] }, 'MessageBody', '$.a[0]', 'contains', 'unknown operator "contains"'],
  ['wildcard (not an SNS operator)', { a: [{ wildcard: 'x*' }] }, 'MessageBody', '$.a[0]', 'wildcard', 'not supported'],
  ['anything-but suffix', { a: [{ 'anything-but': { suffix: 'x' } }] }, 'MessageBody', '$.a[0]', 'anything-but.suffix', 'not supported'],
  // EventBridge takes a list of prefixes; SNS documents one string and nothing records its answer to a list
  ['anything-but prefix list', { a: [{ 'anything-but': { prefix: ['x', 'y'] } }] }, 'MessageBody', '$.a[0].anything-but', 'anything-but.prefix-list', 'not supported'],
  ['anything-but equals-ignore-case', { a: [{ 'anything-but': { 'equals-ignore-case': 'x' } }] }, 'MessageBody', '$.a[0]', 'anything-but.equals-ignore-case', 'not supported'],
  ['prefix equals-ignore-case', { a: [{ prefix: { 'equals-ignore-case': 'x' } }] }, 'MessageBody', '$.a[0]', 'prefix.equals-ignore-case', 'not supported'],
  ['nesting in MessageAttributes scope', { a: { b: ['x'] } }, 'MessageAttributes', '$.a', undefined, 'nested fields are not supported'],
  ['more than 5 keys', { a: ['1'], b: ['1'], c: ['1'], d: ['1'], e: ['1'], f: ['1'] }, 'MessageBody', '$', undefined, 'at most 5 keys, but has 6'],
  ['more than 150 combinations', { a: Array.from({ length: 11 }, (_, i) => `a${i}`), b: Array.from({ length: 14 }, (_, i) => `b${i}`) }, 'MessageBody', '$', undefined, 'must not exceed 150, but is 154'],
  ['nesting counts in combinations', { a: { b: { c: ['1', '2', '3', '4'] } }, d: { e: Array.from({ length: 13 }, (_, i) => `e${i}`) } }, 'MessageBody', '$', undefined, 'but is 312'],
  ['empty value array', { a: [] }, 'MessageBody', '$.a', undefined, 'empty array'],
  ['scalar value', { a: 'x' }, 'MessageAttributes', '$.a', undefined, 'must be an array of values or an object'],
  ['malformed numeric', { a: [{ numeric: ['>', 'x'] }] }, 'MessageAttributes', '$.a[0]', 'numeric', 'must be a number'],
  ['malformed cidr', { a: [{ cidr: '300.0.0.0/8' }] }, 'MessageAttributes', '$.a[0]', 'cidr', 'not an IPv4 or IPv6 address'],
];

describe('compileFilterPolicy: unsupported or malformed policies throw UnsupportedPatternError', () => {
  it.each(errorCases)('%s', (_name, policy, scope, path, operator, messagePart) => {
    let thrown: unknown;
    try {
      compileFilterPolicy(policy, scope);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnsupportedPatternError);
    const error = thrown as UnsupportedPatternError;
    expect(error.path).toBe(path);
    expect(error.operator).toBe(operator);
    expect(error.message).toContain(messagePart);
    expect(error.message).toContain(`SNS filter policy (${scope})`);
  });

  it('accepts exactly 5 keys and 150 combinations', () => {
    const policy = { a: Array.from({ length: 10 }, (_, i) => `a${i}`), b: Array.from({ length: 15 }, (_, i) => `b${i}`), c: ['1'], d: ['1'], e: ['1'] };
    expect(() => compileFilterPolicy(policy, 'MessageBody')).not.toThrow();
  });
});

/**
 * SNS developer guide, "Key matching" (docs.aws.amazon.com/sns/latest/dg/attribute-key-matching.html):
 * - `"exists": true` "match[es] incoming messages that include the specified property. The key must have a non-null and
 *   non-empty value."
 * - `"exists": false` "only matches if at least one attribute is present. An empty set of attributes results in the
 *   filter not matching."
 */
describe('compileFilterPolicy: exists as SNS documents it ("Key matching")', () => {
  const existsTrue = { store: [{ exists: true }] };
  const existsFalse = { store: [{ exists: false }] };

  it.each([
    ['null', { store: null }],
    ['an empty string', { store: '' }],
    ['an array of null and ""', { store: [null, ''] }],
  ])('exists true does not match a body whose value is %s (the key must have a non-null and non-empty value)', (_name, body) => {
    expect(compileFilterPolicy(existsTrue, 'MessageBody')(bodyMessage(body))).toBe(false);
  });

  it('exists true still matches an array with one non-empty value beside null', () => {
    expect(compileFilterPolicy(existsTrue, 'MessageBody')(bodyMessage({ store: [null, 'fans'] }))).toBe(true);
  });

  it('exists true does not match a String attribute whose value is empty', () => {
    expect(compileFilterPolicy(existsTrue, 'MessageAttributes')(attributeMessage({ store: string('') }))).toBe(false);
  });

  it('exists false does not match a message without attributes (an empty set of attributes: the filter does not match)', () => {
    expect(compileFilterPolicy(existsFalse, 'MessageAttributes')(attributeMessage({}))).toBe(false);
    expect(compileFilterPolicy({ $or: [{ store: [{ exists: false }] }, { other: ['x'] }] }, 'MessageAttributes')(attributeMessage({}))).toBe(false);
  });

  it('exists false matches once any attribute is present, even one the filter ignores (Binary)', () => {
    expect(compileFilterPolicy(existsFalse, 'MessageAttributes')(attributeMessage({ other: string('x') }))).toBe(true);
    expect(compileFilterPolicy(existsFalse, 'MessageAttributes')(attributeMessage({ b: { DataType: 'Binary', BinaryValue: 'eA==' } }))).toBe(true);
  });
});
