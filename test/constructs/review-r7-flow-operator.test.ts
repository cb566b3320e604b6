/**
 * Review r7 (seventh session, adversarial) of `flow.grantOperator` (issue 41): findings as failing tests, by Template
 * assertions and the returned grant.
 */
import { Annotations as CdkAnnotations, App, Stack, type StackProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../lib';

function flowStack(env?: StackProps['env']): { stack: Stack; flow: IdempotentEventFlow } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Payments', env === undefined ? {} : { env });
  const flow = new IdempotentEventFlow(stack, 'Payments');
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  return { stack, flow };
}

/** Every statement of the template that names the outbox read (dynamodb:GetItem), wherever it is. */
function outboxReadStatements(stack: Stack): unknown[] {
  const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, { Properties?: Record<string, unknown> }> };
  const statements: unknown[] = [];
  for (const resource of Object.values(template.Resources)) {
    const text = JSON.stringify(resource.Properties ?? {});
    if (text.includes('dynamodb:GetItem') && !text.includes('"Service"')) statements.push(resource);
  }
  return statements;
}

describe('R7-5: grantOperator to a principal named by its ARN grants nothing and says nothing', () => {
  test("a role of the flow's own account by ARN (e.g. an SSO role): the grant fails silently", () => {
    const { stack, flow } = flowStack({ account: '111111111111', region: 'eu-west-1' });
    const grant = flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::111111111111:role/oncall'));
    // an ArnPrincipal has no policy this stack can write (addToPrincipalPolicy: statementAdded false), and grantOperator
    // neither puts the read on a resource policy nor refuses: the operator's replay is refused AccessDenied at 3 a.m.
    expect({ success: grant.success, statementsNamingTheRead: outboxReadStatements(stack).length }).toEqual({ success: true, statementsNamingTheRead: 1 });
  });

  test('a role of another account by ARN, in an environment-agnostic stack: no role is made, nothing is granted, no error', () => {
    const { flow } = flowStack();
    const grant = flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall'));
    // flow-operator.ts: Token.isUnresolved(flowAccount) sends every principal down the same-account path
    // (grantOutboxRead on the ArnPrincipal itself), which adds nothing
    expect({
      success: grant.success,
      role: flow.crossAccountOperatorRole('222222222222') !== undefined,
    }).toEqual({ success: true, role: true });
  });

  test("a principal of the flow's account whose policy the stack can not write (the account's root by ARN) is refused at synth, naming it and what to do", () => {
    const { flow } = flowStack({ account: '111111111111', region: 'eu-west-1' });
    expect(() => flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::111111111111:root'))).toThrow(
      /grantOperator could not give .*arn:aws:iam::111111111111:root.*pass the role or user itself/,
    );
  });

  test('an SSO role of the flow\'s account by ARN (with its path) gets a policy attached to it by name', () => {
    const { stack, flow } = flowStack({ account: '111111111111', region: 'eu-west-1' });
    const grant = flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::111111111111:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_Oncall_0123456789abcdef'));
    expect(grant.success).toBe(true);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', { Roles: ['AWSReservedSSO_Oncall_0123456789abcdef'] });
  });
});
