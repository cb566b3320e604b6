/**
 * Creates the tables of the flow in DynamoDB Local, as the templates define them.
 *
 * Kept from the template: `KeySchema`, `AttributeDefinitions`, the secondary indexes (`IndexName`, `KeySchema`,
 * `Projection`), `StreamSpecification.StreamViewType` and `TimeToLiveSpecification`. Dropped, because they change
 * nothing a flow can observe locally: throughput, billing (every table is on-demand), encryption, point-in-time
 * recovery, contributor insights, deletion protection, tags.
 *
 * Time to Live is kept in the model (`timeToLiveAttribute`: the runtime writes it, the operator's endpoint tells it) but
 * never turned on in DynamoDB Local. DynamoDB Local 3.3.0 deletes expired items by its own (real) clock within
 * seconds, while a run writes each item's TTL on its virtual clock: a run started more than the retention in the past
 * (a replayed `--start-time`) would have its items deleted at a moment the machine sets, not the seed. AWS deletes an
 * expired item "typically within a few days" and returns it to reads until then, so an item never deleted within a
 * run is what AWS may do. The served endpoint answers DescribeTimeToLive as the template defines it
 * (./table-clock-proxy.ts).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  type LocalSecondaryIndex,
  type Projection,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import type { ResourceKey, TableModel } from '../model/flow-model';

/** A table as created in DynamoDB Local. */
export interface LocalTable {
  readonly tableName: string;
  readonly tableArn: string;
  /** `LatestStreamArn`, when the table has a stream. */
  readonly streamArn?: string;
}

/** How long to wait for a table (and its indexes) to become ACTIVE: a hang catcher (DynamoDB Local is usually at once; a loaded machine must not fail it). */
const ACTIVE_TIMEOUT_MS = 600_000;
const ACTIVE_POLL_INTERVAL_MS = 50;

/**
 * Creates every table of the model in DynamoDB Local, as the template defines it; resolves when all are ACTIVE.
 * Errors name the table's resource key and local name.
 */
export async function createTables(
  client: DynamoDBClient,
  tables: readonly TableModel[],
  tableNameOf: (table: TableModel) => string,
): Promise<ReadonlyMap<ResourceKey, LocalTable>> {
  const created = await Promise.all(tables.map(async (table) => [table.key, await createTable(client, table, tableNameOf(table))] as const));
  return new Map(created);
}

async function createTable(client: DynamoDBClient, table: TableModel, tableName: string): Promise<LocalTable> {
  const failed = (step: string, error: unknown): Error =>
    new Error(`table ${table.key}: ${step} '${tableName}' in DynamoDB Local failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  const input = createTableInput(table, tableName);
  try {
    await client.send(new CreateTableCommand(input));
  } catch (error) {
    const inUse = error instanceof Error && error.name === 'ResourceInUseException';
    throw failed('creating', inUse ? new Error(`${error.message} (a table of that name exists already: local table names must be unique in one DynamoDB Local)`, { cause: error }) : error);
  }
  let description: TableDescription;
  try {
    description = await waitUntilActive(client, tableName);
  } catch (error) {
    throw failed('waiting for', error);
  }
  if (description.TableArn === undefined) throw failed('describing', new Error('DescribeTable returned no TableArn'));
  if (table.streamViewType !== undefined && description.LatestStreamArn === undefined) {
    throw failed('enabling the stream of', new Error('DescribeTable returned no LatestStreamArn'));
  }
  return {
    tableName,
    tableArn: description.TableArn,
    ...(description.LatestStreamArn !== undefined && { streamArn: description.LatestStreamArn }),
  };
}

/** The `CreateTable` request for a table of the model: what the template defines, on-demand. */
export function createTableInput(table: TableModel, tableName: string): CreateTableCommandInput {
  const globalIndexes = table.globalSecondaryIndexes.map((index, position) => secondaryIndex(table, 'GlobalSecondaryIndexes', index, position));
  const localIndexes = table.localSecondaryIndexes.map((index, position) => secondaryIndex(table, 'LocalSecondaryIndexes', index, position));
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: table.keySchema.map(({ AttributeName, KeyType }) => ({ AttributeName, KeyType })),
    AttributeDefinitions: table.attributeDefinitions.map(({ AttributeName, AttributeType }) => ({ AttributeName, AttributeType })),
    ...(globalIndexes.length > 0 && { GlobalSecondaryIndexes: globalIndexes satisfies GlobalSecondaryIndex[] }),
    ...(localIndexes.length > 0 && { LocalSecondaryIndexes: localIndexes satisfies LocalSecondaryIndex[] }),
    ...(table.streamViewType !== undefined && { StreamSpecification: { StreamEnabled: true, StreamViewType: table.streamViewType } }),
  };
}

/** `IndexName`, `KeySchema` and `Projection` of a template index, checked; its other settings are dropped. */
function secondaryIndex(
  table: TableModel,
  property: 'GlobalSecondaryIndexes' | 'LocalSecondaryIndexes',
  index: Readonly<Record<string, unknown>>,
  position: number,
): { IndexName: string; KeySchema: { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[]; Projection: Projection } {
  const where = `table ${table.key}: ${property}[${position}]`;
  const { IndexName, KeySchema, Projection } = index;
  if (typeof IndexName !== 'string') throw new Error(`${where} has no literal IndexName (got ${JSON.stringify(IndexName)})`);
  if (!Array.isArray(KeySchema) || KeySchema.length === 0) throw new Error(`${where} (${IndexName}) has no literal KeySchema (got ${JSON.stringify(KeySchema)})`);
  const keySchema = KeySchema.map((element: unknown): { AttributeName: string; KeyType: 'HASH' | 'RANGE' } => {
    const { AttributeName, KeyType } = (element ?? {}) as Record<string, unknown>;
    if (typeof AttributeName !== 'string' || (KeyType !== 'HASH' && KeyType !== 'RANGE')) {
      throw new Error(`${where} (${IndexName}) has a KeySchema element that is not { AttributeName, KeyType: HASH | RANGE }: ${JSON.stringify(element)}`);
    }
    return { AttributeName, KeyType };
  });
  return { IndexName, KeySchema: keySchema, Projection: projection(`${where} (${IndexName})`, Projection) };
}

function projection(where: string, value: unknown): Projection {
  const { ProjectionType, NonKeyAttributes } = (value ?? {}) as Record<string, unknown>;
  if (ProjectionType !== 'ALL' && ProjectionType !== 'KEYS_ONLY' && ProjectionType !== 'INCLUDE') {
    throw new Error(`${where} has a Projection whose ProjectionType is not ALL, KEYS_ONLY or INCLUDE: ${JSON.stringify(value)}`);
  }
  if (NonKeyAttributes === undefined) return { ProjectionType };
  if (!Array.isArray(NonKeyAttributes) || !NonKeyAttributes.every((name): name is string => typeof name === 'string')) {
    throw new Error(`${where} has Projection.NonKeyAttributes that are not a list of names: ${JSON.stringify(NonKeyAttributes)}`);
  }
  return { ProjectionType, NonKeyAttributes };
}

/** Describes the table until it and all its global secondary indexes are ACTIVE. */
async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<TableDescription> {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
  for (;;) {
    const { Table: description } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const active = description?.TableStatus === 'ACTIVE' && (description.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (description !== undefined && active) return description;
    if (Date.now() > deadline) throw new Error(`not ACTIVE after ${ACTIVE_TIMEOUT_MS} ms (status ${String(description?.TableStatus)})`);
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_INTERVAL_MS));
  }
}
