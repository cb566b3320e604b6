import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KeySchemaResolver } from '../../simulator/aws/transaction-conflicts';

/**
 * A {@link KeySchemaResolver} that asks DynamoDB (Local) through `client` with DescribeTable, once per table. A table
 * that does not exist (yet) is unknown, and asked about again next time.
 */
export function describedKeySchemas(client: DynamoDBClient): KeySchemaResolver {
  const known = new Map<string, Promise<readonly string[] | undefined>>();
  return (tableName) => {
    let schema = known.get(tableName);
    if (schema === undefined) {
      schema = client.send(new DescribeTableCommand({ TableName: tableName })).then(
        ({ Table }) => Table?.KeySchema?.map(({ AttributeName }) => AttributeName!),
        (error: unknown) => {
          known.delete(tableName);
          if (error instanceof Error && error.name === 'ResourceNotFoundException') return undefined;
          throw error;
        },
      );
      known.set(tableName, schema);
    }
    return schema;
  };
}
