/**
 * What the AccessControl tests share: the run's account and region, the real policy engine, and builders for
 * hand-written access models (template resources, policy documents, intrinsics as CDK writes them).
 */
import { loadPolicyEngine, type PolicyEngine } from '../../../simulator/iam/policy-engine';
import type { NamedResource, TemplatePolicy } from '../../../simulator/model/access-model';
import type { LocalNames } from '../../../simulator/model/flow-model';

export const ACCOUNT = '000000000000';
export const REGION = 'eu-west-1';

/** @cloud-copilot/iam-simulate, installed as a dev dependency of this repository. */
export const engine: PolicyEngine = loadPolicyEngine(process.cwd())!;

/** A resource of stack `App`, as the templates name it. */
export function resource(logicalId: string, type: string): NamedResource {
  return { key: `App/${logicalId}`, stackName: 'App', logicalId, constructPath: `App/${logicalId}/Resource`, type };
}

/** The resources by key. */
export function byKey(resources: readonly NamedResource[]): Record<string, NamedResource> {
  return Object.fromEntries(resources.map((named) => [named.key, named]));
}

/** Queue URLs and topic ARNs as the run would name them (`App/Queue`, `App/Topic`, `App/OtherTopic`), and function `App/Fn`. */
export const localNames: LocalNames = {
  region: REGION,
  accountId: ACCOUNT,
  ref: (key) =>
    ({ 'App/Queue': `http://127.0.0.1:1/${ACCOUNT}/App-Queue`, 'App/Topic': `arn:aws:sns:${REGION}:${ACCOUNT}:App-Topic`, 'App/OtherTopic': `arn:aws:sns:${REGION}:${ACCOUNT}:App-OtherTopic`, 'App/Fn': 'App-Fn' })[key],
  getAtt: (key, attribute) => (key === 'App/Queue' && attribute === 'Arn' ? `arn:aws:sqs:${REGION}:${ACCOUNT}:App-Queue` : undefined),
};

/** A policy document of stack `App`. */
export function policy(name: string, statements: unknown[]): TemplatePolicy {
  return { name, stackName: 'App', document: { Version: '2012-10-17', Statement: statements } };
}

/** `Fn::GetAtt` of a resource of the stack. */
export const getAtt = (logicalId: string, attribute = 'Arn'): unknown => ({ 'Fn::GetAtt': [logicalId, attribute] });

/** The account's root as CDK writes it in a key policy. */
export const rootPrincipal = { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] } };
