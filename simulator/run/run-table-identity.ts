/**
 * Which table is one a run made, for a served run's table clock (../aws/table-clock-proxy.ts): the run's tables as
 * DescribeTable names them when serving begins (their `TableId`, else their real creation time), so a table deleted
 * and made again under a run table's name while serving is told apart from it (review ro15b, RO15B-4).
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** What names one table, not its name: DynamoDB's `TableId` when DescribeTable gives one, and its real creation time (epoch ms). */
export interface TableIdentity {
  readonly tableId?: string;
  readonly createdAt: number;
}

/** The identity of each of `tableNames` as DescribeTable answers now, by name (a table it can not describe is left out). */
export async function runTableIdentities(client: DynamoDBClient, tableNames: readonly string[]): Promise<Map<string, TableIdentity>> {
  const identities = new Map<string, TableIdentity>();
  for (const tableName of tableNames) {
    const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    const createdAt = table?.CreationDateTime?.getTime();
    if (createdAt === undefined) continue;
    identities.set(tableName, { createdAt, ...(table?.TableId === undefined ? {} : { tableId: table.TableId }) });
  }
  return identities;
}

/** Whether the table described (its real creation time in epoch ms, its TableId when given) is `identity`'s. */
export function isRunTable(identity: TableIdentity | undefined, realCreatedAt: number, tableId: string | undefined): boolean {
  if (identity === undefined) return false;
  if (identity.tableId !== undefined && tableId !== undefined) return identity.tableId === tableId;
  return Math.round(identity.createdAt) === Math.round(realCreatedAt);
}

/**
 * The TTL attribute a served run's endpoint tells for a table (../aws/table-clock-proxy.ts): `attributes` (the
 * template's, by local table name) for a run table, undefined for any other, or for one made again under a run table's
 * name while serving (DynamoDB restores no TTL setting; DescribeTable failing: undefined).
 */
export function runTableTimeToLive(
  client: DynamoDBClient,
  identities: ReadonlyMap<string, TableIdentity>,
  attributes: ReadonlyMap<string, string>,
): (tableName: string) => Promise<string | undefined> {
  return async (tableName) => {
    const attributeName = attributes.get(tableName);
    if (attributeName === undefined) return undefined;
    try {
      const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
      const createdAt = table?.CreationDateTime?.getTime();
      return createdAt !== undefined && isRunTable(identities.get(tableName), createdAt, table?.TableId) ? attributeName : undefined;
    } catch {
      return undefined;
    }
  };
}
