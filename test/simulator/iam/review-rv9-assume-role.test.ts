/**
 * Review rv9, S-1 (red, product not fixed): the served run's STS (simulator/aws/sts-endpoint.ts) grants AssumeRole
 * when the role's trust policy cannot be evaluated: decideAssumeRole (simulator/iam/assume-role.ts) answers
 * `allowed: true` with a `notEvaluated` note when the trust policy does not resolve (or the engine errors), and the STS
 * drops the note: any caller, named in the trust policy or not, gets the role's credentials, and nothing in the run says
 * the trust policy was not evaluated. AWS would evaluate it (and refuse a caller it does not name). Here the trust policy
 * names its principal through an export no stack of the app makes (Fn::ImportValue), so it cannot be resolved; a caller
 * of another account asks. Expected: refused (AccessDenied naming why it could not be evaluated), not granted.
 */
import { expect, test } from 'vitest';
import { decideAssumeRole } from '../../../simulator/iam/assume-role';
import type { IamNames } from '../../../simulator/iam/iam-names';
import type { PolicyEngine } from '../../../simulator/iam/policy-engine';
import type { AccessModel } from '../../../simulator/model/access-model';

const ROLE_KEY = 'Payments/Flow/CrossAccountOperator222222222222/Resource';
const ROLE_ARN = 'arn:aws:iam::111111111111:role/Payments-CrossAccountOperator';

test('S-1: a trust policy the simulator cannot evaluate does not let any caller assume the role', async () => {
  const access = {
    roles: [
      {
        key: ROLE_KEY,
        policies: [],
        unevaluatedManagedPolicies: [],
        trustPolicy: {
          name: 'the trust policy of CrossAccountOperator222222222222',
          stackName: 'Payments',
          document: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: { 'Fn::ImportValue': 'LedgerOncallRoleArn' } } }] },
        },
      },
    ],
    executionRoles: {},
    resourcePolicies: {},
    keys: [],
    encryption: {},
    resources: {},
    notEvaluated: [],
  } as unknown as AccessModel;
  const names = {
    region: 'eu-west-1',
    accountId: '111111111111',
    ref: () => undefined,
    getAtt: (key: string, attribute: string) => (key === ROLE_KEY && attribute === 'Arn' ? ROLE_ARN : undefined),
    accountOf: () => '111111111111',
    regionOf: () => 'eu-west-1',
  } as unknown as IamNames;
  // an engine that would refuse: only the not-evaluated path can grant
  const engine = { evaluate: async () => ({ decision: 'ImplicitlyDenied', resourceAllows: false, denies: [] }) } as unknown as PolicyEngine;

  const decision = await decideAssumeRole(access, names, engine, { arn: 'arn:aws:iam::999999999999:role/anyone', account: '999999999999' }, ROLE_ARN);

  expect(decision, JSON.stringify(decision)).toMatchObject({ allowed: false, code: 'AccessDenied' });
});
