/** Accepts either DynamoDB client flavour and hands back the DocumentClient the runtime works with. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A low-level DynamoDB client or a DocumentClient; the runtime wraps the former. */
export type DynamoDBClientLike = DynamoDBClient | DynamoDBDocumentClient;

function isDocumentClient(client: DynamoDBClientLike): client is DynamoDBDocumentClient {
  // instanceof fails when two copies of lib-dynamodb are bundled, so also look for the DocumentClient's config
  return client instanceof DynamoDBDocumentClient || 'translateConfig' in client.config;
}

/**
 * Returns `client` if it is a DocumentClient, else wraps it (undefined attribute values are removed, as a
 * JSON-minded caller expects). Without a client, creates one from the Lambda environment.
 */
export function toDocumentClient(client?: DynamoDBClientLike): DynamoDBDocumentClient {
  if (client !== undefined && isDocumentClient(client)) return client;
  return DynamoDBDocumentClient.from(client ?? new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
