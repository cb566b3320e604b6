/**
 * The name of the attribute an outbox table's TTL reads: `expiresAt` on the flow's own table, the user's
 * `timeToLiveAttributeName` on an existing one. Replay and `fence replay` read an item's expiry under it, so an item
 * past its TTL is never sent, whatever the attribute is called. Known, in order, from `--outbox-ttl-attribute`, from
 * the Operator output (`outboxTimeToLiveAttribute`), or from the table (DescribeTimeToLive, which `grantOperator`
 * grants). When none of them says it (the table's TTL can not be read: a role without `dynamodb:DescribeTimeToLive`),
 * it is not guessed: a guess that is wrong reads every item as having no TTL, and sends items past it.
 */
import { DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';

/** The option (parseArgs format). */
export const OUTBOX_TTL_ATTRIBUTE_OPTION = { 'outbox-ttl-attribute': { type: 'string' } } as const;

/** Its help text. */
export const OUTBOX_TTL_ATTRIBUTE_HELP = `  --outbox-ttl-attribute <name>      the attribute the outbox table's TTL reads (its timeToLiveAttributeName;
                                     expiresAt on the flow's own table); default: the Operator output's
                                     outboxTimeToLiveAttribute, else the table's TTL (DescribeTimeToLive)`;

/** The start of the refusal when the attribute can not be known. */
export const OUTBOX_TTL_UNKNOWN_TEXT = 'the TTL attribute of the outbox table';

/** The attribute, or why it can not be known (a refusal's text). */
export type OutboxTimeToLive = { readonly attribute: string } | { readonly unknown: string };

/**
 * The TTL attribute of `tableName`: `known` when given (the flag's or the output's); else the one the table's TTL is
 * enabled (or being enabled) on; `expiresAt`, the flow's own, when the table says its TTL is off (DynamoDB expires
 * none of its items). `unknown` when the table's TTL can not be read (denied, or any other failure).
 */
export async function outboxTimeToLiveAttribute(client: DynamoDBClient, tableName: string, known?: string): Promise<OutboxTimeToLive> {
  if (known !== undefined) return { attribute: known };
  try {
    const description = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
    const enabled = description?.TimeToLiveStatus === 'ENABLED' || description?.TimeToLiveStatus === 'ENABLING';
    return { attribute: enabled && description?.AttributeName !== undefined ? description.AttributeName : TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE };
  } catch (error) {
    return {
      unknown:
        `${OUTBOX_TTL_UNKNOWN_TEXT} ${tableName} could not be read (DescribeTimeToLive: ${(error as Error).name}: ${(error as Error).message}), so which of its ` +
        'items are past their TTL (and may have lost their offloaded data) can not be told; nothing was sent. Give --outbox-ttl-attribute ' +
        "(the outbox table's timeToLiveAttributeName; expiresAt on the flow's own table), or an Operator output that names it (outboxTimeToLiveAttribute), " +
        'or grant dynamodb:DescribeTimeToLive on the table (flow.grantOperator does)',
    };
  }
}
