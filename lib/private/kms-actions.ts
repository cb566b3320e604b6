/**
 * Exact KMS actions a sender needs to put a message on an SSE-KMS encrypted SNS topic or SQS queue: generate a data
 * key and decrypt a cached one (SNS and SQS developer guides, encryption at rest). Named exactly (no
 * `GenerateDataKey*`) so grants hold no wildcard actions and cdk-nag IAM5 has nothing to flag.
 */
export const KMS_SEND_MESSAGE_ACTIONS: readonly string[] = ['kms:Decrypt', 'kms:GenerateDataKey'];
