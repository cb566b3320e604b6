/**
 * Reviewer r38 (issue 38, IAM): red on purpose at 443a206, no library change. `grantAppendOrderedEvents` scopes the
 * head read to head items (`dynamodb:LeadingKeys`), but the PutItem it combines (the outbox's `grantAppendEvents`) is
 * unconditioned on the whole table: a producer can put ANY item of the outbox table by its key, so on a shared table
 * (docs/ORDERED-DELIVERY.md speaks of business items of a shared table) it overwrites business items it has no grant
 * for. Every item `OrderedOutbox` puts is keyed `OUTBOX#...` (history `OUTBOX#<eventId>`, head `OUTBOX#AGGREGATE#<id>`),
 * so the Put can be conditioned on `dynamodb:LeadingKeys` as the read is.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { expect, test } from 'vitest';
import { OrderedRelay } from '../../lib/ordered';
import { OutboxTable } from '../../lib/outbox';

test("R38-7: grantAppendOrderedEvents' PutItem is scoped to outbox items (dynamodb:LeadingKeys OUTBOX#*), not every item of the table", () => {
  const stack = new Stack(new App(), 'Producer');
  const outboxTable = new OutboxTable(stack, 'Outbox');
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable });
  const role = new iam.Role(stack, 'ProducerRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });

  relay.grantAppendOrderedEvents(role);

  const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: stack.getLogicalId(role.node.defaultChild as iam.CfnRole) }] } });
  const statements = Object.values(policies).flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Condition?: unknown }[]);
  const puts = statements.filter((statement) => [statement.Action].flat().includes('dynamodb:PutItem'));
  expect(puts.map((statement) => statement.Condition)).toEqual([{ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } }]);
});
