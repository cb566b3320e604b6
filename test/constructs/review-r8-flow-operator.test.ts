/**
 * Review r8 (issue 41's R7-5 fix, grantOperator across accounts). A role of another account, imported as an IRole
 * (`iam.Role.fromRoleArn`, as the docs of grantOperator suggest for principals by ARN), granted on a flow whose stack
 * is environment-agnostic: CDK imports it as mutable (one account unresolved), so grantOperator's `grantAssumeRole`
 * writes an AWS::IAM::Policy into the FLOW's stack attached to the role NAME 'oncall', which at deploy resolves to a
 * role of the flow's account (another role of that name, or none: the deploy fails). Failed on s8-rv8 (27b8873) when
 * committed. Synth only.
 */
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../lib';

describe('review r8: grantOperator to an imported role of another account', () => {
  test("R8-7: an environment-agnostic flow stack attaches no policy to a role of the flow's own account named like the other account's role", () => {
    // GIVEN a flow in an environment-agnostic stack, and the on-call role of account 222222222222, imported by ARN
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Payments');
    const flow = new IdempotentEventFlow(stack, 'Payments');
    CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    const oncall = iam.Role.fromRoleArn(stack, 'LedgerOncall', 'arn:aws:iam::222222222222:role/oncall');

    // WHEN it is granted the operator's outbox read
    flow.grantOperator(oncall);

    // THEN the role of account 222222222222 is trusted by the CrossAccountOperator role, and nothing in this stack (the
    // flow's account) is attached to a role called 'oncall'; instead a policy granting sts:AssumeRole is attached by
    // name to 'oncall' of whatever account the stack deploys into
    const template = Template.fromStack(stack);
    expect(flow.crossAccountOperatorRole('222222222222')).toBeDefined();
    const attachedToOncall = Object.entries(template.findResources('AWS::IAM::Policy'))
      .filter(([, policy]) => JSON.stringify((policy as { Properties: { Roles?: unknown } }).Properties.Roles ?? []).includes('oncall'))
      .map(([id]) => id);
    expect(attachedToOncall).toEqual([]);
  });
});
