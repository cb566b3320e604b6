/**
 * The AWS clients of a verify run, made the way the SDK makes them by default: credentials from the default chain,
 * the Region from `--region` or the environment (`AWS_REGION`, the profile), the endpoint from the SDK's endpoint
 * settings (`AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_<SERVICE>`, a profile's `endpoint_url`), so the same command reaches
 * an account or a served run (`simulate --serve` prints `AWS_ENDPOINT_URL`).
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';

/** One client per service a verify run calls. */
export interface VerifyClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  /** Lists the flow topic's subscriptions (./topic-subscriptions.ts). */
  readonly sns: SNSClient;
  readonly dynamoDb: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  /**
   * Reads an offloaded event's data from the flow's payload bucket (S3 GetObject, the runtime's reader: ./offloaded-data.ts).
   * @default none: an offloaded event's data is not read (it says so)
   */
  readonly payloads?: PayloadReader;
  destroy(): void;
}

/** The clients, in `region` when given (else the SDK's default Region). */
export function verifyClients(region?: string): VerifyClients {
  const config = region === undefined ? {} : { region };
  const cloudFormation = new CloudFormationClient(config);
  // a producer may run up to its timeout: Lambda's synchronous invocations take up to 15 minutes
  const lambda = new LambdaClient(config);
  // behind one endpoint (AWS_ENDPOINT_URL, e.g. a served run), a queue URL names the queue and the request goes to
  // the endpoint; on AWS the queue URL's host is the endpoint (the SDK's default)
  const sqs = new SQSClient({ ...config, useQueueUrlAsEndpoint: process.env.AWS_ENDPOINT_URL === undefined && process.env.AWS_ENDPOINT_URL_SQS === undefined });
  const dynamoDb = new DynamoDBClient(config);
  const documents = DynamoDBDocumentClient.from(dynamoDb);
  // the flow topic's subscriptions: a subscriber in another account or Region is not in the stacks verify reads
  const sns = new SNSClient(config);
  // an offloaded event's data (claim-check): S3 GetObject, and ListObjectsV2 of its key after a 403 (a missing object)
  const s3 = new S3Client(config);
  return {
    cloudFormation,
    lambda,
    sqs,
    sns,
    dynamoDb,
    documents,
    payloads: new S3PayloadStore(s3),
    destroy: () => {
      for (const client of [cloudFormation, lambda, sqs, sns, dynamoDb, s3]) client.destroy();
    },
  };
}
