/**
 * The name of the attribute an outbox table's TTL reads, as the table says (DescribeTimeToLive): `expiresAt` on the
 * flow's own table, the user's `timeToLiveAttributeName` on an existing one. Replay and `fence replay` read an item's
 * expiry under it, so an item past its TTL is never sent, whatever the attribute is called.
 */
import { DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';

/**
 * The TTL attribute of `tableName`: the one its TTL is enabled (or being enabled) on; `expiresAt`, the flow's own, when
 * TTL is off or the table's TTL can not be read (a role without `dynamodb:DescribeTimeToLive`).
 */
export async function outboxTimeToLiveAttribute(client: DynamoDBClient, tableName: string): Promise<string> {
  try {
    const description = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
    const enabled = description?.TimeToLiveStatus === 'ENABLED' || description?.TimeToLiveStatus === 'ENABLING';
    return enabled && description?.AttributeName !== undefined ? description.AttributeName : TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE;
  } catch {
    return TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE;
  }
}
