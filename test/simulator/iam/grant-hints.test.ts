/** The Fix hint names a grantee that compiles: a Subscriber's function is its `consumerFunction`, found from construct paths. */
import { describe, expect, test } from 'vitest';
import { EVENT_TOPIC_PUBLISH_HINT, grantHint, granteeOf } from '../../../simulator/iam/grant-hints';

const RESOURCES = [
  { type: 'AWS::SNS::Subscription', constructPath: 'App/Orders/Billing/Subscription/Resource' },
  { type: 'AWS::SQS::Queue', constructPath: 'App/Orders/Billing/Queue/Resource' },
  { type: 'AWS::Lambda::Function', constructPath: 'App/Orders/Billing/Function/Resource' },
  { type: 'AWS::Lambda::Function', constructPath: 'App/Reports/Function/Resource' },
];

describe('granteeOf', () => {
  test("names a Subscriber's function by the subscriber's consumerFunction, with the subscriber's construct path", () => {
    expect(granteeOf('App/Orders/Billing/Function', RESOURCES)).toEqual({ expression: 'billing.consumerFunction', note: 'billing: the Subscriber App/Orders/Billing' });
  });

  test('names any other caller by its own construct', () => {
    expect(granteeOf('App/Reports/Function', RESOURCES)).toEqual({ expression: 'reportsFunction' });
  });
});

describe('grantHint', () => {
  test("puts a Subscriber's consumerFunction in the grant, and says which subscriber it is", () => {
    const hint = grantHint({
      action: 'dynamodb:UpdateItem',
      resourceType: 'AWS::DynamoDB::Table',
      resourcePath: 'App/LedgerTable',
      callerPath: 'App/Orders/Billing/Function',
      service: false,
      grantee: granteeOf('App/Orders/Billing/Function', RESOURCES),
    });

    expect(hint).toBe("ledgerTable.grant(billing.consumerFunction, 'dynamodb:UpdateItem') (or ledgerTable.grantWriteData(billing.consumerFunction) for every write) (billing: the Subscriber App/Orders/Billing)");
  });

  test("answers an app function refused sns:Publish on a flow's event topic with the outbox, not with grantPublish", () => {
    const subject = { action: 'sns:Publish', resourceType: 'AWS::SNS::Topic', resourcePath: 'App/Orders/EventTopic/Resource', callerPath: 'App/Reserve', service: false };

    const toEventTopic = grantHint({ ...subject, eventTopic: true });
    const toAppTopic = grantHint(subject);

    expect(toEventTopic).toBe(EVENT_TOPIC_PUBLISH_HINT('ordersEventTopic', 'reserve'));
    expect(toEventTopic).not.toContain('grantPublish(');
    expect(toAppTopic).toBe('ordersEventTopic.grantPublish(reserve)');
  });
});
