/** Accepts either DynamoDB client flavour and hands back the DocumentClient the runtime works with. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A low-level DynamoDB client or a DocumentClient; the runtime wraps the former. */
export type DynamoDBClientLike = DynamoDBClient | DynamoDBDocumentClient;

function isDocumentClient(client: DynamoDBClientLike): client is DynamoDBDocumentClient {
  // instanceof fails when two copies of lib-dynamodb are bundled, so also look for the DocumentClient's config. The SDK
  // keeps a DocumentClient's options in the config it shares with the low-level client it was made from, so a low-level
  // client someone already wrapped has them too: it is used as it is, and wrapping it again would change the options
  // of the caller's own DocumentClient.
  return client instanceof DynamoDBDocumentClient || 'translateConfig' in client.config;
}

/**
 * Returns `client` if it is a DocumentClient, or a low-level client already wrapped with `DynamoDBDocumentClient.from`
 * (then that DocumentClient's options apply, e.g. `wrapNumbers`); else wraps it, removing undefined attribute values
 * as a JSON-minded caller expects. Without a client, creates one from the Lambda environment.
 */
export function toDocumentClient(client?: DynamoDBClientLike): DynamoDBDocumentClient {
  if (client !== undefined && isDocumentClient(client)) return client;
  return DynamoDBDocumentClient.from(client ?? new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
