/**
 * Review r7, R7-6: runs one SQS batch through a transactional consumer in THIS process (started by
 * review-r7-large-batch.int.test.ts with a Lambda-sized heap), against DynamoDB Local and the local S3 named in the
 * environment. Prints the batch response as one JSON line. Not a test file.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const handler = createTransactionalConsumer<unknown>({
  handle: () => undefined,
  client: new DynamoDBClient({ endpoint: env('R7_DYNAMODB_ENDPOINT'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  config: JSON.parse(env('R7_INBOX_CONFIG')),
  metricsSink: () => undefined,
  payloadReader: new S3PayloadStore(
    new S3Client({
      endpoint: env('R7_S3_ENDPOINT'),
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
  ),
});

void (async () => {
  const response = await handler({ Records: JSON.parse(env('R7_RECORDS')) });
  process.stdout.write(`${JSON.stringify({ response })}\n`);
})();
