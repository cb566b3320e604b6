import { describe, expect, it } from 'vitest';
import { evaluateJsonPath, JsonPathSyntaxError, parseJsonPath } from '../../../operator/patterns/json-path';

const document = {
  'detail-type': 'Change',
  detail: { 'instance-id': 'i-1', state: 'RUNNING', under_score: 1, 'a/b': 'slash', nothing: null },
  body: { Records: [{ id: 'r0' }, { id: 'r1' }, { id: 'r2' }, { id: 'r3' }] },
  matrix: [[1, 2], [3]],
};

describe('evaluateJsonPath', () => {
  it.each([
    ['$', document],
    ['$.detail.state', 'RUNNING'],
    ['$.detail.instance-id', 'i-1'],
    ['$.detail.under_score', 1],
    ['$.detail.a/b', 'slash'],
    ['$.detail.nothing', null],
    ["$['detail-type']", 'Change'],
    ['$["detail"]["state"]', 'RUNNING'],
    ['$.body.Records[3]', { id: 'r3' }],
    ['$.body.Records[3].id', 'r3'],
    ['$.matrix[0][1]', 2],
    ['$.body.Records[*].id', ['r0', 'r1', 'r2', 'r3']],
    ['$.detail.*', ['i-1', 'RUNNING', 1, 'slash', null]],
  ])('%s', (path, expected) => {
    expect(evaluateJsonPath(parseJsonPath(path), document)).toEqual({ found: true, value: expected });
  });

  it.each([['$.missing'], ['$.detail.state.deeper'], ['$.body.Records[4]'], ['$.detail[0]'], ['$.missing[*]']])('%s is not found', (path) => {
    expect(evaluateJsonPath(parseJsonPath(path), document)).toEqual({ found: false });
  });

  it('does not read inherited properties', () => {
    expect(evaluateJsonPath(parseJsonPath('$.toString'), {})).toEqual({ found: false });
  });
});

describe('parseJsonPath', () => {
  it.each([
    ['detail.state', 'must start with "$"'],
    ['$.', 'empty or invalid name'],
    ['$..a', 'empty or invalid name'],
    ['$.a[', 'not closed'],
    ['$.a[-1]', 'neither an index'],
    ['$.a[name]', 'neither an index'],
    ['$a', 'unexpected "a"'],
  ])('rejects %s', (path, messagePart) => {
    expect(() => parseJsonPath(path)).toThrow(JsonPathSyntaxError);
    expect(() => parseJsonPath(path)).toThrow(messagePart);
  });
});
