/**
 * A transactional consumer's world for runtime tests: a {@link Testbed}, a ledger table of account balances and an
 * inbox, and the ledger credit that a deposit must apply exactly once. Not a test file.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { ConsumerConfig } from '../../../lambda/config';
import type { TransactionBuilder } from '../../../lambda/consumer/transaction-builder';
import type { EventEnvelope } from '../../../lambda/envelope';
import { createInbox, createKeyedTable } from './tables';
import { startTestbed, type Testbed } from './testbed';

/** The payload of a deposit event. */
export interface Deposit {
  readonly account: string;
  readonly amount: number;
}

/** A {@link Testbed} with a ledger table and an inbox for one subscriber. */
export interface LedgerTestbed extends Testbed {
  readonly ledgerTable: string;
  /** The transactional consumer config of the inbox. */
  readonly config: ConsumerConfig;
  /** Stages the deposit's credit to its account: `ADD balance :amount`. */
  credit(envelope: EventEnvelope<Deposit>, tx: TransactionBuilder): void;
  /** The account's balance (strongly consistent), undefined when nothing was ever credited. */
  balance(account: string): Promise<number | undefined>;
}

/** Starts a {@link LedgerTestbed}; stop its proxy when the file is done. */
export async function startLedgerTestbed(subscriberName: string, deduplicationWindowSeconds = 3600): Promise<LedgerTestbed> {
  const testbed = await startTestbed();
  const [ledgerTable, config] = await Promise.all([
    createKeyedTable(testbed.client, 'ledger'),
    createInbox(testbed.client, { subscriberName, deduplicationWindowSeconds }),
  ]);
  return {
    ...testbed,
    ledgerTable,
    config,
    credit: (envelope, tx) =>
      tx.update({
        TableName: ledgerTable,
        Key: { pk: envelope.data.account },
        UpdateExpression: 'ADD balance :amount',
        ExpressionAttributeValues: { ':amount': envelope.data.amount },
      }),
    balance: async (account) => {
      const { Item } = await testbed.client.send(new GetItemCommand({ TableName: ledgerTable, Key: { pk: { S: account } }, ConsistentRead: true }));
      return Item?.balance?.N === undefined ? undefined : Number(Item.balance.N);
    },
  };
}
