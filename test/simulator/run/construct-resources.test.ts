/** The resources the library's constructs make, found from the flow, by the construct paths the IAM report names them by. */
import { describe, expect, test } from 'vitest';
import type { FlowModel } from '../../../simulator/model/flow-model';
import { constructResourcePaths } from '../../../simulator/run/construct-resources';

const resource = (key: string, type: string) => [key, { key, stackName: 'App', logicalId: key, type, constructPath: `App/${key}/Resource` }] as const;

describe('constructResourcePaths', () => {
  test('lists the outbox, the pipe and its dead-letter queue, the topic, the consumer queues, the inbox the consumer names, and their keys; not the user\'s tables', () => {
    const model = {
      relays: [{ key: 'Orders/Relay', sourceTable: 'Orders/OutboxTable', targetTopic: 'Orders/EventTopic', deadLetterQueue: 'Orders/RelayDlq' }],
      subscriptions: [{ key: 'Orders/Billing/Subscription', topic: 'Orders/EventTopic', queue: 'Orders/Billing/Queue', deadLetterQueue: 'Orders/Billing/SubscriptionDlq' }],
      queues: [{ key: 'Orders/Billing/Queue', redrive: { deadLetterQueue: 'Orders/Billing/Queue/DeadLetterQueue', maxReceiveCount: 5 } }],
      access: {
        encryption: { 'Orders/EventTopic': { key: 'Orders/EventTopic/Key' }, 'Orders/Billing/InboxTable': { key: 'Orders/EventTopic/Key' }, LedgerTable: { key: 'LedgerKey' } },
        resources: Object.fromEntries([
          resource('Orders/Relay', 'AWS::Pipes::Pipe'),
          resource('Orders/OutboxTable', 'AWS::DynamoDB::Table'),
          resource('Orders/EventTopic', 'AWS::SNS::Topic'),
          resource('Orders/EventTopic/Key', 'AWS::KMS::Key'),
          resource('Orders/RelayDlq', 'AWS::SQS::Queue'),
          resource('Orders/Billing/Queue', 'AWS::SQS::Queue'),
          resource('Orders/Billing/Queue/DeadLetterQueue', 'AWS::SQS::Queue'),
          resource('Orders/Billing/SubscriptionDlq', 'AWS::SQS::Queue'),
          resource('Orders/Billing/InboxTable', 'AWS::DynamoDB::Table'),
          resource('LedgerTable', 'AWS::DynamoDB::Table'),
          resource('LedgerKey', 'AWS::KMS::Key'),
        ]),
      },
    } as unknown as FlowModel;
    const flow = {
      tables: new Map([
        ['Orders/Billing/InboxTable', { tableName: 'inbox-local' }],
        ['LedgerTable', { tableName: 'ledger-local' }],
      ]),
      subscribers: [{ environment: { IEF_INBOX_TABLE_NAME: 'inbox-local', LEDGER_TABLE_NAME: 'ledger-local' } }],
    } as unknown as Parameters<typeof constructResourcePaths>[1];

    expect(constructResourcePaths(model, flow).sort()).toEqual(
      [
        'App/Orders/Relay',
        'App/Orders/OutboxTable',
        'App/Orders/EventTopic',
        'App/Orders/RelayDlq',
        'App/Orders/Billing/Queue',
        'App/Orders/Billing/SubscriptionDlq',
        'App/Orders/Billing/Queue/DeadLetterQueue',
        'App/Orders/Billing/InboxTable',
        'App/Orders/EventTopic/Key',
      ].sort(),
    );
  });
});
