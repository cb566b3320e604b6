import { describe, expect, it } from 'vitest';
import {
  compileEventPattern,
  compilePipeFilterCriteria,
  PIPE_FILTER_PATTERN_DIALECT,
  UnsupportedPatternError,
} from '../../../operator/patterns/event-pattern';
import { outboxFilterPattern } from '../../../lambda/contract/wire-format';

/** A DynamoDB stream record as an EventBridge Pipe presents it to its filter. */
function streamRecord(eventName: string, newImage: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    eventID: 'e1',
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      Keys: { pk: { S: 'OUTBOX#1' }, sk: { S: 'OUTBOX#1' } },
      ...(newImage === undefined ? {} : { NewImage: newImage }),
      SequenceNumber: '100',
      SizeBytes: 42,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

describe('compileEventPattern: the real outbox relay filter', () => {
  const filter = compileEventPattern(JSON.stringify(outboxFilterPattern()), { dialect: PIPE_FILTER_PATTERN_DIALECT });
  const outboxImage = { pk: { S: 'OUTBOX#1' }, iefRecordType: { S: 'OutboxEvent.v1' }, iefEnvelope: { S: '{}' } };

  it.each([
    ['an INSERT of an outbox item', streamRecord('INSERT', outboxImage), true],
    ['a MODIFY of an outbox item', streamRecord('MODIFY', outboxImage), false],
    ['a REMOVE (no NewImage)', streamRecord('REMOVE', undefined), false],
    ['an INSERT of another record type', streamRecord('INSERT', { ...outboxImage, iefRecordType: { S: 'OutboxEvent.v2' } }), false],
    ['an INSERT of an item without a record type', streamRecord('INSERT', { pk: { S: 'ORDER#1' } }), false],
    ['an INSERT whose record type is a number attribute', streamRecord('INSERT', { ...outboxImage, iefRecordType: { N: '1' } }), false],
  ])('%s -> %s', (_name, record, expected) => {
    expect(filter(record)).toBe(expected);
  });

  it('is exactly the pattern synthesized into the example template', () => {
    expect(JSON.stringify(outboxFilterPattern())).toBe('{"eventName":["INSERT"],"dynamodb":{"NewImage":{"iefRecordType":{"S":["OutboxEvent.v1"]}}}}');
  });
});

type Case = readonly [name: string, pattern: unknown, event: unknown, expected: boolean];

const cases: readonly Case[] = [
  // structure
  ['fields AND: all match', { a: ['x'], b: ['y'] }, { a: 'x', b: 'y' }, true],
  ['fields AND: one differs', { a: ['x'], b: ['y'] }, { a: 'x', b: 'z' }, false],
  ['values OR', { a: ['x', 'y'] }, { a: 'y' }, true],
  ['missing field does not match a value', { a: ['x'] }, { b: 'x' }, false],
  ['unrelated event fields are ignored', { a: ['x'] }, { a: 'x', z: 1 }, true],
  ['nested objects', { d: { s: ['running'] } }, { d: { s: 'running' } }, true],
  ['nested field under a scalar does not exist', { d: { s: ['running'] } }, { d: 'running' }, false],
  ['event array: any element matches', { r: ['arn:1'] }, { r: ['arn:0', 'arn:1'] }, true],
  ['event array: no element matches', { r: ['arn:9'] }, { r: ['arn:0', 'arn:1'] }, false],
  ['array of objects: fields matched within one element', { e: { f: ['Anna'] } }, { e: [{ f: 'John' }, { f: 'Anna' }] }, true],
  ['array of objects: fields from different elements are not combined', { e: { f: ['Anna'], l: ['Jones'] } }, { e: [{ f: 'Anna', l: 'Smith' }, { f: 'Peter', l: 'Jones' }] }, false],
  ['a non-object event matches nothing', { a: ['x'] }, 'x', false],
  // exact values
  ['exact string is case-sensitive', { a: ['Alice'] }, { a: 'alice' }, false],
  ['number matches numerically (5 vs 5.0)', { n: [5] }, JSON.parse('{"n": 5.0}'), true],
  ['number matches 5e0', { n: [5] }, JSON.parse('{"n": 5e0}'), true],
  ['number does not match its string', { n: [5] }, { n: '5' }, false],
  ['string does not match a number', { n: ['5'] }, { n: 5 }, false],
  ['boolean', { b: [true] }, { b: true }, true],
  ['boolean vs string', { b: [true] }, { b: 'true' }, false],
  ['null matches null', { x: [null] }, { x: null }, true],
  ['null does not match empty string', { x: [null] }, { x: '' }, false],
  ['empty string matches empty string', { x: [''] }, { x: '' }, true],
  ['empty string does not match null', { x: [''] }, { x: null }, false],
  ['null does not match a missing field', { x: [null] }, {}, false],
  // prefix / suffix / equals-ignore-case
  ['prefix', { t: [{ prefix: '2017-10-02' }] }, { t: '2017-10-02T18:43:48Z' }, true],
  ['prefix miss', { t: [{ prefix: '2017-10-02' }] }, { t: '2017-10-03T00:00:00Z' }, false],
  ['prefix ignores numbers', { t: [{ prefix: '1' }] }, { t: 12 }, false],
  ['prefix equals-ignore-case', { s: [{ prefix: { 'equals-ignore-case': 'EventB' } }] }, { s: 'eventbridge' }, true],
  ['suffix', { f: [{ suffix: '.png' }] }, { f: 'a.png' }, true],
  ['suffix is case-sensitive', { f: [{ suffix: '.png' }] }, { f: 'a.PNG' }, false],
  ['suffix equals-ignore-case', { f: [{ suffix: { 'equals-ignore-case': '.png' } }] }, { f: 'a.PNG' }, true],
  ['equals-ignore-case', { n: [{ 'equals-ignore-case': 'alice' }] }, { n: 'ALICE' }, true],
  ['equals-ignore-case miss', { n: [{ 'equals-ignore-case': 'alice' }] }, { n: 'alicia' }, false],
  // anything-but
  ['anything-but string', { s: [{ 'anything-but': 'initializing' }] }, { s: 'running' }, true],
  ['anything-but string excluded', { s: [{ 'anything-but': 'initializing' }] }, { s: 'initializing' }, false],
  ['anything-but number list', { x: [{ 'anything-but': [100, 200] }] }, { x: 100.0 }, false],
  ['anything-but number list passes others', { x: [{ 'anything-but': [100, 200] }] }, { x: 101 }, true],
  ['anything-but does not match a missing field', { s: [{ 'anything-but': 'x' }] }, {}, false],
  ['anything-but on an array: one unlisted element suffices', { s: [{ 'anything-but': ['a'] }] }, { s: ['a', 'b'] }, true],
  ['anything-but on an array: all listed', { s: [{ 'anything-but': ['a', 'b'] }] }, { s: ['a', 'b'] }, false],
  ['anything-but prefix', { s: [{ 'anything-but': { prefix: 'init' } }] }, { s: 'running' }, true],
  ['anything-but prefix excluded', { s: [{ 'anything-but': { prefix: 'init' } }] }, { s: 'initializing' }, false],
  ['anything-but suffix', { f: [{ 'anything-but': { suffix: '.png' } }] }, { f: 'a.png' }, false],
  ['anything-but equals-ignore-case', { s: [{ 'anything-but': { 'equals-ignore-case': ['Stopped'] } }] }, { s: 'STOPPED' }, false],
  ['anything-but equals-ignore-case passes others', { s: [{ 'anything-but': { 'equals-ignore-case': 'Stopped' } }] }, { s: 'running' }, true],
  ['anything-but wildcard', { p: [{ 'anything-but': { wildcard: '*/lib/*' } }] }, { p: '/usr/lib/x' }, false],
  // numeric
  ['numeric range inside', { c: [{ numeric: ['>', 0, '<=', 5] }] }, { c: 5 }, true],
  ['numeric range open bottom', { c: [{ numeric: ['>', 0, '<=', 5] }] }, { c: 0 }, false],
  ['numeric =', { x: [{ numeric: ['=', 3.018e2] }] }, { x: 301.8 }, true],
  ['numeric <', { d: [{ numeric: ['<', 10] }] }, { d: -3 }, true],
  ['numeric >=', { d: [{ numeric: ['>=', 10] }] }, { d: 10 }, true],
  ['numeric ignores numeric strings', { d: [{ numeric: ['<', 10] }] }, { d: '3' }, false],
  // exists
  ['exists true', { p: [{ exists: true }] }, { p: 'x' }, true],
  ['exists true on null (a leaf)', { p: [{ exists: true }] }, { p: null }, true],
  ['exists true on a missing field', { p: [{ exists: true }] }, {}, false],
  ['exists true on an object (not a leaf)', { p: [{ exists: true }] }, { p: { c1: 100 } }, false],
  ['exists false on a missing field', { d: { c: [{ exists: false }] } }, { d: { s: 'x' } }, true],
  ['exists false on an object (not a leaf)', { d: { c: [{ exists: false }] } }, { d: { c: { c1: 100 } } }, true],
  ['exists false on a present field', { d: { c: [{ exists: false }] } }, { d: { c: 1 } }, false],
  ['exists false when the parent is missing', { d: { c: [{ exists: false }] } }, {}, true],
  ['exists false or a value', { c: [{ exists: false }, 'x'] }, { c: 'x' }, true],
  // wildcard
  ['wildcard', { f: [{ wildcard: 'dir/*.png' }] }, { f: 'dir/a/b.png' }, true],
  ['wildcard must match the whole value', { f: [{ wildcard: 'dir/*.png' }] }, { f: 'dir/a.png.bak' }, false],
  ['wildcard with regular-expression characters taken literally', { f: [{ wildcard: 'a-b.(c)[d]+?^$|{e}/*' }] }, { f: 'a-b.(c)[d]+?^$|{e}/x' }, true],
  ['wildcard dot is not a regular-expression dot', { f: [{ wildcard: 'a.b*' }] }, { f: 'axb' }, false],
  ['wildcard escaped backslash', { f: [{ wildcard: 'a\\\\*' }] }, { f: 'a\\x' }, true],
  ['wildcard escaped star is literal', { f: [{ wildcard: 'a\\*b' }] }, { f: 'a*b' }, true],
  ['wildcard escaped star does not match other text', { f: [{ wildcard: 'a\\*b' }] }, { f: 'axb' }, false],
  // cidr
  ['cidr IPv4 inside', { ip: [{ cidr: '10.0.0.0/24' }] }, { ip: '10.0.0.255' }, true],
  ['cidr IPv4 outside', { ip: [{ cidr: '10.0.0.0/24' }] }, { ip: '10.0.1.0' }, false],
  ['cidr IPv6 inside', { ip: [{ cidr: '2001:db8::/32' }] }, { ip: '2001:db8:ffff::1' }, true],
  ['cidr IPv6 outside', { ip: [{ cidr: '2001:db8::/32' }] }, { ip: '2001:db9::1' }, false],
  ['cidr does not match another family', { ip: [{ cidr: '10.0.0.0/8' }] }, { ip: '::ffff:10.0.0.1' }, false],
  ['cidr does not match a non-address', { ip: [{ cidr: '10.0.0.0/8' }] }, { ip: 'localhost' }, false],
  // $or
  ['$or: first branch', { source: ['cw'], $or: [{ m: ['cpu'] }, { n: ['ec2'] }] }, { source: 'cw', m: 'cpu' }, true],
  ['$or: second branch', { source: ['cw'], $or: [{ m: ['cpu'] }, { n: ['ec2'] }] }, { source: 'cw', n: 'ec2' }, true],
  ['$or: no branch', { source: ['cw'], $or: [{ m: ['cpu'] }, { n: ['ec2'] }] }, { source: 'cw', m: 'disk' }, false],
  ['$or: branches AND with siblings', { source: ['cw'], $or: [{ m: ['cpu'] }, { n: ['ec2'] }] }, { source: 'x', m: 'cpu' }, false],
  ['$or nested in a field', { d: { $or: [{ a: [1] }, { b: [2] }] } }, { d: { b: 2 } }, true],
  ['$or with one branch is an ordinary field name', { $or: [{ prefix: 'a' }] }, { $or: 'abc' }, true],
];

describe('compileEventPattern: EventBridge semantics', () => {
  it.each(cases)('%s', (_name, pattern, event, expected) => {
    expect(compileEventPattern(JSON.stringify(pattern))(event)).toBe(expected);
  });

  it('matches a Pipes SQS record whose body the caller has JSON-decoded', () => {
    const filter = compileEventPattern(JSON.stringify({ body: { kind: ['order'] } }), { dialect: PIPE_FILTER_PATTERN_DIALECT });
    expect(filter({ messageId: 'm1', body: { kind: 'order' } })).toBe(true);
    expect(filter({ messageId: 'm1', body: '{"kind":"order"}' })).toBe(false);
  });
});

type ErrorCase = readonly [name: string, pattern: string, path: string, operator: string | undefined, messagePart: string];

const errorCases: readonly ErrorCase[] = [
  ['unknown operator', '{"a":[{"contains":"x"}]}', '$.a[0]', 'contains', 'unknown operator "contains"'],
  ['unknown anything-but operator', '{"a":[{"anything-but":{"contains":"x"}}]}', '$.a[0].anything-but', 'anything-but.contains', 'unknown "anything-but" operator'],
  ['not JSON', '{"a":', '$', undefined, 'not valid JSON'],
  ['pattern not an object', '["a"]', '$', undefined, 'must be a JSON object'],
  ['empty pattern', '{}', '$', undefined, 'empty object'],
  ['empty nested object', '{"a":{}}', '$.a', undefined, 'empty object'],
  ['scalar field value', '{"a":"x"}', '$.a', undefined, 'must be an array of values or an object'],
  ['empty value array', '{"a":[]}', '$.a', undefined, 'empty array'],
  ['nested array value', '{"a":[["x"]]}', '$.a[0]', undefined, 'must be a string, number, boolean, null or an operator object'],
  ['two operators in one object', '{"a":[{"prefix":"x","suffix":"y"}]}', '$.a[0]', undefined, 'exactly one operator'],
  ['prefix with a number', '{"a":[{"prefix":1}]}', '$.a[0]', 'prefix', '"prefix" needs a string'],
  ['exists with a string', '{"a":[{"exists":"yes"}]}', '$.a[0]', 'exists', '"exists" needs true or false'],
  ['numeric with a bad comparison', '{"a":[{"numeric":["!=",1]}]}', '$.a[0]', 'numeric', 'must be one of'],
  ['numeric range upside down', '{"a":[{"numeric":[">",5,"<",1]}]}', '$.a[0]', 'numeric', 'bottom 5 must be less than top 1'],
  ['numeric range starting with an upper bound', '{"a":[{"numeric":["<",5,">",1]}]}', '$.a[0]', 'numeric', 'must start with a lower bound'],
  ['numeric with a string value', '{"a":[{"numeric":["<","5"]}]}', '$.a[0]', 'numeric', 'must be a number'],
  ['anything-but mixed list', '{"a":[{"anything-but":["x",1]}]}', '$.a[0]', 'anything-but', 'only strings or only numbers'],
  ['anything-but empty list', '{"a":[{"anything-but":[]}]}', '$.a[0]', 'anything-but', 'non-empty'],
  ['wildcard with consecutive stars', '{"a":[{"wildcard":"a**b"}]}', '$.a[0]', 'wildcard', 'consecutive "*"'],
  ['wildcard with a bad escape', '{"a":[{"wildcard":"a\\\\b"}]}', '$.a[0]', 'wildcard', 'escapes neither'],
  ['cidr without a prefix length', '{"a":[{"cidr":"10.0.0.1"}]}', '$.a[0]', 'cidr', 'exactly one "/"'],
  ['cidr with a bad address', '{"a":[{"cidr":"10.0.0/8"}]}', '$.a[0]', 'cidr', 'not an IPv4 or IPv6 address'],
  ['cidr with a too long prefix', '{"a":[{"cidr":"10.0.0.0/33"}]}', '$.a[0]', 'cidr', 'from 0 to 32'],
  ['error path names nested fields', '{"detail":{"state":["ok",{"like":"x"}]}}', '$.detail.state[1]', 'like', 'unknown operator "like"'],
  ['error path inside $or', '{"$or":[{"a":["x"]},{"b":[{"like":1}]}]}', '$.$or[1].b[0]', 'like', 'unknown operator "like"'],
];

describe('compileEventPattern: malformed patterns and unknown operators throw UnsupportedPatternError', () => {
  it.each(errorCases)('%s', (_name, pattern, path, operator, messagePart) => {
    let thrown: unknown;
    try {
      compileEventPattern(pattern);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnsupportedPatternError);
    const error = thrown as UnsupportedPatternError;
    expect(error.path).toBe(path);
    expect(error.operator).toBe(operator);
    expect(error.message).toContain(messagePart);
    expect(error.message).toContain(`at ${path}`);
    expect(error.message).toContain('EventBridge event pattern');
  });
});

describe('Pipes filter dialect', () => {
  it.each([
    ['wildcard', '{"a":[{"wildcard":"x*"}]}', 'wildcard'],
    ['anything-but prefix', '{"a":[{"anything-but":{"prefix":"x"}}]}', 'anything-but.prefix'],
    ['anything-but suffix', '{"a":[{"anything-but":{"suffix":"x"}}]}', 'anything-but.suffix'],
    ['anything-but equals-ignore-case', '{"a":[{"anything-but":{"equals-ignore-case":"x"}}]}', 'anything-but.equals-ignore-case'],
    ['anything-but wildcard', '{"a":[{"anything-but":{"wildcard":"x*"}}]}', 'anything-but.wildcard'],
  ])('rejects %s (Pipe support: No)', (_name, pattern, operator) => {
    expect(() => compileEventPattern(pattern, { dialect: PIPE_FILTER_PATTERN_DIALECT })).toThrow(
      expect.objectContaining({ name: 'UnsupportedPatternError', operator, message: expect.stringContaining('EventBridge Pipes filter pattern') }),
    );
  });

  it.each([
    ['prefix equals-ignore-case', '{"a":[{"prefix":{"equals-ignore-case":"x"}}]}'],
    ['suffix', '{"a":[{"suffix":"x"}]}'],
    ['anything-but list', '{"a":[{"anything-but":["x"]}]}'],
    ['numeric', '{"a":[{"numeric":[">",1]}]}'],
    ['exists', '{"a":[{"exists":false}]}'],
    ['$or', '{"$or":[{"a":["x"]},{"b":["y"]}]}'],
  ])('accepts %s', (_name, pattern) => {
    expect(() => compileEventPattern(pattern, { dialect: PIPE_FILTER_PATTERN_DIALECT })).not.toThrow();
  });
});

describe('compilePipeFilterCriteria', () => {
  it('passes a record matching any of the filters', () => {
    const criteria = compilePipeFilterCriteria(['{"eventName":["INSERT"]}', '{"eventName":["MODIFY"]}']);
    expect([criteria({ eventName: 'INSERT' }), criteria({ eventName: 'MODIFY' }), criteria({ eventName: 'REMOVE' })]).toEqual([true, true, false]);
  });

  it('passes every record when there are no filters', () => {
    expect(compilePipeFilterCriteria([])({ eventName: 'REMOVE' })).toBe(true);
  });

  it('rejects an operator Pipes does not support', () => {
    expect(() => compilePipeFilterCriteria(['{"a":[{"wildcard":"*x"}]}'])).toThrow(UnsupportedPatternError);
  });
});

describe('compileEventPattern: keys with dots are paths (dotted-keys.ts)', () => {
  it('refuses a pattern that gives one field twice, once dotted and once nested', () => {
    const pattern = JSON.stringify({ a: { b: ['y'] }, 'a.b': ['x'] });

    expect(() => compileEventPattern(pattern)).toThrow(UnsupportedPatternError);
    expect(() => compileEventPattern(pattern)).toThrow('the field "a.b" is given twice');
  });

  it('merges a dotted field into nested fields beside it', () => {
    const matches = compileEventPattern(JSON.stringify({ a: { c: ['z'] }, 'a.b': ['x'] }));

    expect(matches({ a: { b: 'x', c: 'z' } })).toBe(true);
    expect(matches({ a: { b: 'x', c: 'other' } })).toBe(false);
  });
});
