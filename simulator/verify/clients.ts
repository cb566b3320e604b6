/**
 * The AWS clients of a verify run, made the way the SDK makes them by default: credentials from the default chain,
 * the Region from `--region` or the environment (`AWS_REGION`, the profile), the endpoint from the SDK's endpoint
 * settings (`AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_<SERVICE>`, a profile's `endpoint_url`), so the same command reaches
 * an account or a served run (`simulate --serve` prints `AWS_ENDPOINT_URL`).
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** One client per service a verify run calls. */
export interface VerifyClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  readonly dynamoDb: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
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
  return {
    cloudFormation,
    lambda,
    sqs,
    dynamoDb,
    documents,
    destroy: () => {
      for (const client of [cloudFormation, lambda, sqs, dynamoDb]) client.destroy();
    },
  };
}
