/**
 * Review r7 (seventh session, adversarial) of the flow's payload bucket (issue 42): findings as failing tests, by
 * Template assertions on the synthesized flow.
 */
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../lib';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

function built(): Template {
  const stack = newStack();
  const flow = new IdempotentEventFlow(stack, 'Orders', { offloadLargeEvents: true });
  flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
  flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
  return Template.fromStack(stack);
}

const actionsOf = (statement: Record<string, any>): string[] => [statement.Action].flat();

describe('R7-2: a producer may overwrite any event’s data under the prefix (unversioned bucket)', () => {
  test('PutObject under event-data/ is allowed only as a conditional write (s3:if-none-match), so deleting by overwrite is denied as DeleteObject is', () => {
    const template = built();
    // every PutObject allowed under the prefix, in any role policy
    const allows = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement as Record<string, any>[])
      .filter((statement) => statement.Effect === 'Allow' && actionsOf(statement).includes('s3:PutObject'));
    expect(allows.length, 'the producer and publishing subscribers are granted s3:PutObject').toBeGreaterThan(0);
    // the bucket policy's statements that deny a PutObject without If-None-Match (S3's condition key s3:if-none-match,
    // docs: "Enforce conditional writes on Amazon S3 buckets"), as it denies DeleteObject under the prefix
    const bucketStatements = Object.values(template.findResources('AWS::S3::BucketPolicy')).flatMap(
      (policy: any) => policy.Properties.PolicyDocument.Statement as Record<string, any>[],
    );
    const denyUnconditionalPut = bucketStatements.filter(
      (statement) => statement.Effect === 'Deny' && actionsOf(statement).includes('s3:PutObject') && JSON.stringify(statement.Condition ?? {}).includes('s3:if-none-match'),
    );
    const conditionalAllows = allows.filter((statement) => JSON.stringify(statement.Condition ?? {}).includes('s3:if-none-match'));
    // the runtime only ever writes with If-None-Match: * (payload-store.ts putOnce); a PutObject without it replaces an
    // event's only copy of its data (the bucket keeps no versions), and every subscriber yet to read the event
    // dead-letters it ('offloaded data altered'), or, with a body far over iefdatasize, runs out of memory reading it
    // whole (resolve-payload.ts reads the object before comparing its size) and fails the whole batch
    expect(
      denyUnconditionalPut.length + (conditionalAllows.length === allows.length ? 1 : 0),
      `bucket policy statements: ${JSON.stringify(bucketStatements.map((s) => ({ Effect: s.Effect, Action: s.Action, Condition: s.Condition })))}; PutObject allows: ${JSON.stringify(allows.map((s) => ({ Action: s.Action, Condition: s.Condition })))}`,
    ).toBeGreaterThan(0);
  });
});

describe('R7-8: a subscriber filtering on data.* silently never receives an offloaded event', () => {
  test('a flow that offloads refuses (or at least flags) a message-body filter policy on data, as lambda/contract/claim-check.ts says it does', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { offloadLargeEvents: true });
    flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    let refusal: string | undefined;
    try {
      flow.addSubscriber('EuBilling', {
        entry: HANDLER_ENTRY,
        filterPolicyWithMessageBody: {
          data: sns.FilterOrPolicy.policy({ region: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: ['eu'] })) }),
        },
      });
      Template.fromStack(stack);
    } catch (error) {
      refusal = (error as Error).message;
    }
    // an offloaded envelope has no 'data' (dataref, iefdatasha256, iefdatasize instead): SNS's message-body filter finds
    // no data.region and drops the message for this subscription, with no error, no dead letter and no alarm; every
    // event over the inline threshold is lost to this subscriber. The contract (claim-check.ts, 'Filters.') says the
    // constructs refuse such a policy; nothing does (lib/consumer has no check naming offloading), nor is there a warning
    const flagged = refusal ?? Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('offload')).concat(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('offload')))[0]?.entry.data;
    if (refusal === undefined) {
      // the subscription as deployed: a body filter on data.region
      Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', { FilterPolicyScope: 'MessageBody', FilterPolicy: { data: { region: ['eu'] } } });
    }
    expect(String(flagged ?? 'nothing: no refusal, no error, no warning')).toMatch(/offload/);
  });
});
