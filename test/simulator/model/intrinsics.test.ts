import { describe, expect, it } from 'vitest';
import type { FunctionModel, LocalNames } from '../../../simulator/model/flow-model';
import { resolveEnvironment, resolveValue, UnresolvableValueError } from '../../../simulator/model/intrinsics';

const STACK = 'Shop';

/** Local names of two resources of stack Shop: a table and a queue. */
const REFS: Readonly<Record<string, string>> = { 'Shop/Orders': 'orders-local', 'Shop/Queue': 'http://localhost/queue' };
const ATTRIBUTES: Readonly<Record<string, string>> = { 'Shop/Queue#Arn': 'arn:aws:sqs:eu-west-1:000000000000:queue', 'Shop/Orders#StreamArn': 'stream-arn' };
const names: LocalNames = {
  ref: (key) => REFS[key],
  getAtt: (key, attribute) => ATTRIBUTES[`${key}#${attribute}`],
  region: 'eu-west-1',
  accountId: '000000000000',
};

function resolve(value: unknown): string {
  return resolveValue(value, STACK, names, 'the test value');
}

describe('resolveValue', () => {
  it('returns strings as they are and numbers and booleans as String()', () => {
    expect(resolve('plain')).toBe('plain');
    expect(resolve(42)).toBe('42');
    expect(resolve(false)).toBe('false');
  });

  it('resolves Ref of a resource of the stack to its local name, and pseudo parameters', () => {
    expect(resolve({ Ref: 'Orders' })).toBe('orders-local');
    expect(resolve({ Ref: 'AWS::Region' })).toBe('eu-west-1');
    expect(resolve({ Ref: 'AWS::AccountId' })).toBe('000000000000');
    expect(resolve({ Ref: 'AWS::Partition' })).toBe('aws');
    expect(resolve({ Ref: 'AWS::URLSuffix' })).toBe('amazonaws.com');
    expect(resolve({ Ref: 'AWS::StackName' })).toBe('Shop');
    expect(resolveValue({ Ref: 'AWS::Partition' }, STACK, { ...names, region: 'cn-north-1' }, 'x')).toBe('aws-cn');
    expect(resolveValue({ Ref: 'AWS::URLSuffix' }, STACK, { ...names, region: 'cn-north-1' }, 'x')).toBe('amazonaws.com.cn');
    expect(resolveValue({ Ref: 'AWS::Partition' }, STACK, { ...names, region: 'us-gov-west-1' }, 'x')).toBe('aws-us-gov');
  });

  it('resolves Fn::GetAtt in its list and its dotted form', () => {
    expect(resolve({ 'Fn::GetAtt': ['Queue', 'Arn'] })).toBe('arn:aws:sqs:eu-west-1:000000000000:queue');
    expect(resolve({ 'Fn::GetAtt': 'Orders.StreamArn' })).toBe('stream-arn');
  });

  it('joins lists, dropping AWS::NoValue elements', () => {
    expect(resolve({ 'Fn::Join': ['', ['https://sqs.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] })).toBe('https://sqs.eu-west-1.amazonaws.com');
    expect(resolve({ 'Fn::Join': ['-', ['a', { Ref: 'AWS::NoValue' }, 'b']] })).toBe('a-b');
  });

  it('substitutes ${Logical}, ${Logical.Attr}, ${AWS::Region}, map variables, and keeps ${!Literal} literal', () => {
    expect(resolve({ 'Fn::Sub': 'table=${Orders} queue=${Queue.Arn} region=${AWS::Region} literal=${!Orders}' })).toBe(
      'table=orders-local queue=arn:aws:sqs:eu-west-1:000000000000:queue region=eu-west-1 literal=${Orders}',
    );
    expect(resolve({ 'Fn::Sub': ['${Name}/${Orders}', { Name: { 'Fn::Join': ['', ['x', 'y']] } }] })).toBe('xy/orders-local');
  });

  it('selects from lists and splits strings', () => {
    expect(resolve({ 'Fn::Select': [1, ['zero', 'one']] })).toBe('one');
    expect(resolve({ 'Fn::Select': ['5', { 'Fn::Split': [':', 'arn:aws:sqs:eu-west-1:000000000000:queue'] }] })).toBe('queue');
    expect(resolve({ 'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::Sub': '${Queue.Arn}/x/y' }] }] })).toBe('y');
    expect(resolve({ 'Fn::Join': ['+', { 'Fn::Split': [',', 'a,b,c'] }] })).toBe('a+b+c');
  });

  it('refuses Fn::ImportValue with an error naming where and the expression', () => {
    const expression = { 'Fn::ImportValue': 'SharedBucketName' };
    expect(() => resolveValue(expression, STACK, names, 'environment variable BUCKET of function Shop/Fn')).toThrow(
      new UnresolvableValueError(
        'environment variable BUCKET of function Shop/Fn',
        expression,
        'Fn::ImportValue names no export of a stack of the cloud assembly',
      ),
    );
    expect(() => resolveValue(expression, STACK, names, 'environment variable BUCKET of function Shop/Fn')).toThrow(
      'Cannot resolve environment variable BUCKET of function Shop/Fn: Fn::ImportValue names no export of a stack of the cloud assembly (expression: {"Fn::ImportValue":"SharedBucketName"})',
    );
  });

  it('names the part of a nested expression it cannot resolve', () => {
    const expression = { 'Fn::Join': ['', ['s3://', { Ref: 'Bucket' }]] };
    expect(() => resolve(expression)).toThrow(
      'Cannot resolve the test value: Bucket has no local name: it is not a resource the simulator created in stack Shop (nor a template parameter with a default value) in {"Ref":"Bucket"} (expression: {"Fn::Join":["",["s3://",{"Ref":"Bucket"}]]})',
    );
  });

  it('refuses what has no string value', () => {
    expect(() => resolve({ Ref: 'AWS::NoValue' })).toThrow(/AWS::NoValue has no value/);
    expect(() => resolve({ 'Fn::GetAtt': ['Queue', 'QueueName'] })).toThrow(/Queue.QueueName has no local value/);
    expect(() => resolve({ 'Fn::Split': [',', 'a,b'] })).toThrow(/Fn::Split gives a list, not a string/);
    expect(() => resolve({ 'Fn::Select': [2, ['a', 'b']] })).toThrow(/Fn::Select index 2 is not within the list of 2 element\(s\)/);
    expect(() => resolve({ 'Fn::If': ['IsProd', 'a', 'b'] })).toThrow(/Fn::If is not supported by the simulator/);
    expect(() => resolve({ Ref: 'AWS::NotificationARNs' })).toThrow(/pseudo parameter AWS::NotificationARNs is not supported/);
    expect(() => resolve(['a'])).toThrow(/a list is not a string/);
    expect(() => resolve(null)).toThrow(/null is not a template value/);
    expect(() => resolve({ Ref: 'Orders', Other: 1 })).toThrow(/not an intrinsic function/);
  });
});

describe('resolveEnvironment', () => {
  const fn: FunctionModel = {
    key: 'Shop/Consumer',
    stackName: STACK,
    logicalId: 'Consumer',
    constructPath: 'Shop/Consumer/Resource',
    assetDirectory: '/assets/consumer',
    handler: 'index.handler',
    runtime: 'nodejs24.x',
    timeoutSeconds: 3,
    memorySizeMb: 128,
    environment: { TABLE: { Ref: 'Orders' }, MODE: 'transactional', RETRIES: 3, OPTIONAL: { Ref: 'AWS::NoValue' } },
  };

  it('resolves every variable and leaves out those set to AWS::NoValue', () => {
    expect(resolveEnvironment(fn, names)).toEqual({ TABLE: 'orders-local', MODE: 'transactional', RETRIES: '3' });
  });

  it('names the function and the variable it cannot resolve', () => {
    expect(() => resolveEnvironment({ ...fn, environment: { BUCKET: { 'Fn::ImportValue': 'Bucket' } } }, names)).toThrow(
      'Cannot resolve environment variable BUCKET of function Shop/Consumer (Shop/Consumer/Resource): Fn::ImportValue',
    );
  });
});
