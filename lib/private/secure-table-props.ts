import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';

/**
 * The settings every table this library creates shares (the outbox and the inbox), in one place so they cannot
 * drift apart: a string partition key `pk`, on-demand billing, the TTL attribute `expiresAt`, point-in-time recovery,
 * encryption with the given customer-managed key or else the AWS managed key, and RETAIN unless told otherwise.
 */
export function secureTableProps(
  encryptionKey: kms.IKey | undefined,
  removalPolicy: RemovalPolicy | undefined,
): dynamodb.TableProps {
  return {
    partitionKey: { name: TABLE_SCHEMA.PARTITION_KEY, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: encryptionKey ? dynamodb.TableEncryption.CUSTOMER_MANAGED : dynamodb.TableEncryption.AWS_MANAGED,
    encryptionKey,
    removalPolicy: removalPolicy ?? RemovalPolicy.RETAIN,
  };
}
