/**
 * Reviewer r38 (issue 38, IAM): red on purpose at 443a206, no library change. `grantAppendOrderedEvents` scopes the
 * head read to head items (`dynamodb:LeadingKeys`), but the PutItem it combines (the outbox's `grantAppendEvents`) is
 * unconditioned on the whole table: a producer can put ANY item of the outbox table by its key, so on a shared table
 * (docs/ORDERED-DELIVERY.md speaks of business items of a shared table) it overwrites business items it has no grant
 * for. Every item `OrderedOutbox` puts is keyed `OUTBOX#...` (history `OUTBOX#<eventId>`, head `OUTBOX#AGGREGATE#<id>`),
 * so the Put can be conditioned on `dynamodb:LeadingKeys` as the read is.
 *
 * R38-8 (in this file for its synthesis): an OrderedSubscriber takes any `deduplicationWindow` of 1 second or more, and
 * its doc says the window "only bounds payload checks of reused ids". Since review F1's fix the window is also what
 * tells a NEW event below the fence (the heads went back: `SequenceReusedError`, dead-lettered) from a copy of an
 * applied one (`duplicate`, acknowledged): an unrecorded event below the fence older than the window is acknowledged
 * unapplied. With a window shorter than a message can wait (the FIFO queue's and dead-letter queue's retention, the
 * relay's queues), such an event is lost silently; the standard Subscriber refuses a window below that sum at synth.
 */
import * as path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { expect, test } from 'vitest';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
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

test('R38-8: an OrderedSubscriber refuses a deduplicationWindow shorter than a message can wait (it is what tells a new event below the fence from a copy)', () => {
  const stack = new Stack(new App(), 'Ledger');
  const outboxTable = new OutboxTable(stack, 'Outbox');
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable });
  expect(
    () =>
      new OrderedSubscriber(stack, 'Ledger', {
        relay,
        subscriberName: 'Ledger',
        entry: path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts'),
        deduplicationWindow: Duration.hours(1),
      }),
  ).toThrow(/deduplicationWindow/);
});
