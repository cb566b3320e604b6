import { Arn, ArnFormat, IResource, RemovalPolicy, Resource, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { secureTableProps } from '../private/secure-table-props';

/**
 * An inbox table: one record per processed message and subscriber, keyed `<subscriberName>#<eventId>`, kept until
 * its TTL (`expiresAt`, epoch seconds) passes. Several subscribers may share one.
 */
export interface IInboxTable extends IResource {
  /**
   * The ARN of the table.
   *
   * @attribute
   */
  readonly tableArn: string;

  /**
   * The name of the table.
   *
   * @attribute
   */
  readonly tableName: string;

  /** The customer-managed key that encrypts the table, if any. */
  readonly encryptionKey?: kms.IKey;

  /**
   * Lets `grantee` record processed messages: `dynamodb:PutItem` on this table, which also covers a Put inside
   * `TransactWriteItems`. With a customer-managed key also `kms:Decrypt`, `kms:DescribeKey`, `kms:Encrypt` and
   * `kms:GenerateDataKey` on that key.
   */
  grantRecordMessages(grantee: iam.IGrantable): iam.Grant;
}

/** Properties of an {@link InboxTable}. */
export interface InboxTableProps {
  /**
   * Customer-managed key that encrypts the table at rest.
   *
   * The table holds only event ids, types and timestamps; a customer-managed key adds KMS requests but lets you
   * control and audit access.
   *
   * @default - the AWS-managed key for DynamoDB (`alias/aws/dynamodb`)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * What happens to the table when it is removed from the stack.
   *
   * Deleting the inbox forgets which messages were processed, so redelivered messages would be applied again.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** How to refer to an inbox table that exists outside this construct. Give `tableArn` or `tableName`. */
export interface InboxTableAttributes {
  /**
   * The ARN of the table.
   *
   * @default - built from `tableName` in the importing stack's account and region
   */
  readonly tableArn?: string;

  /**
   * The name of the table.
   *
   * @default - taken from `tableArn`
   */
  readonly tableName?: string;

  /**
   * The customer-managed key that encrypts the table, so that grants include it.
   *
   * @default - the table is encrypted with a key that needs no grant (AWS-owned or AWS-managed)
   */
  readonly encryptionKey?: kms.IKey;
}

abstract class InboxTableBase extends Resource implements IInboxTable {
  public abstract readonly tableArn: string;
  public abstract readonly tableName: string;
  public abstract readonly encryptionKey?: kms.IKey;

  public grantRecordMessages(grantee: iam.IGrantable): iam.Grant {
    // The inbox write is a conditional Put (alone, or inside TransactWriteItems); the runtime never reads the table.
    const grant = iam.Grant.addToPrincipal({ grantee, actions: ['dynamodb:PutItem'], resourceArns: [this.tableArn] });
    this.encryptionKey?.grant(grantee, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey');
    return grant;
  }
}

/**
 * A DynamoDB table that records which messages a subscriber has processed.
 *
 * Partition key `pk` (string), TTL attribute `expiresAt`, on-demand capacity, point-in-time recovery on and
 * encryption at rest. The consumer runtime writes the inbox record in the same transaction as the handler's
 * business writes, so a redelivered message is recognised and skipped.
 */
export class InboxTable extends InboxTableBase {
  /** Imports an inbox table by ARN; its encryption key is unknown, so grants cover the table only. */
  public static fromTableArn(scope: Construct, id: string, tableArn: string): IInboxTable {
    return InboxTable.fromInboxTableAttributes(scope, id, { tableArn });
  }

  /** Imports an inbox table in the importing stack's account and region by name. */
  public static fromTableName(scope: Construct, id: string, tableName: string): IInboxTable {
    return InboxTable.fromInboxTableAttributes(scope, id, { tableName });
  }

  /** Imports an inbox table, including its customer-managed key if it has one. */
  public static fromInboxTableAttributes(scope: Construct, id: string, attrs: InboxTableAttributes): IInboxTable {
    if ((attrs.tableArn === undefined) === (attrs.tableName === undefined)) {
      throw new Error(`InboxTable '${id}': exactly one of tableArn and tableName must be provided`);
    }
    const stack = Stack.of(scope);
    const tableArn =
      attrs.tableArn ?? stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: attrs.tableName });
    const tableName = attrs.tableName ?? Arn.split(tableArn, ArnFormat.SLASH_RESOURCE_NAME).resourceName!;

    class Import extends InboxTableBase {
      public readonly tableArn = tableArn;
      public readonly tableName = tableName;
      public readonly encryptionKey = attrs.encryptionKey;
    }
    return new Import(scope, id, { environmentFromArn: tableArn });
  }

  public readonly tableArn: string;
  public readonly tableName: string;
  public readonly encryptionKey?: kms.IKey;

  /** The underlying DynamoDB table, e.g. for its metrics. */
  public readonly table: dynamodb.ITable;

  public constructor(scope: Construct, id: string, props: InboxTableProps = {}) {
    super(scope, id);

    const table = new dynamodb.Table(this, 'Resource', secureTableProps(props.encryptionKey, props.removalPolicy));
    this.table = table;
    this.tableArn = table.tableArn;
    this.tableName = table.tableName;
    this.encryptionKey = props.encryptionKey;
  }

  /** Applies `policy` to the table (the primary resource is a nested construct, not this one). */
  public override applyRemovalPolicy(policy: RemovalPolicy): void {
    this.table.applyRemovalPolicy(policy);
  }
}
