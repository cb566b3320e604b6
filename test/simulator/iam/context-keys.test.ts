/**
 * nu7 finding 2 (crash): a condition's value may be a scalar (string, number, boolean) or a list of them, as IAM
 * takes it; the payload bucket's `NumericLessThan { s3:TlsVersion: 1.2 }` is a JSON number, on which `keysRead` threw
 * `asList(...).filter is not a function` and the S3 endpoint failed every offloaded event with IAM on.
 */
import { describe, expect, test } from 'vitest';
import { keysRead } from '../../../simulator/iam/context-keys';
import type { PolicyDocument } from '../../../simulator/iam/resolve-policy';

function policyWith(condition: Record<string, Record<string, unknown>>): PolicyDocument {
  return { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: { AWS: '*' }, Action: 's3:*', Resource: 'arn:aws:s3:::b/*', Condition: condition } as never] };
}

describe('keysRead: condition values of every kind IAM takes', () => {
  test('a number, a boolean, a string and a list are read, their keys listed, a policy variable in a string found', () => {
    const policy = policyWith({
      NumericLessThan: { 's3:TlsVersion': 1.2 },
      Bool: { 'aws:SecureTransport': false },
      StringEquals: { 's3:x-amz-server-side-encryption': 'aws:kms', 'aws:PrincipalTag/team': ['a', '${aws:username}', 3] },
    });
    const read = keysRead([{ name: 'Bucket/Policy', policy }], 's3:PutObject', { kind: 'role' });
    expect(read.map(({ key }) => key)).toEqual(['s3:TlsVersion', 'aws:SecureTransport', 's3:x-amz-server-side-encryption', 'aws:PrincipalTag/team', 'aws:username']);
  });
});
