import { Arn, ArnFormat, IResource, RemovalPolicy, Resource, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { INBOX_ITEM, PROCESSING_RECORD } from '../../lambda/contract/wire-format';
import { grantKeyViaService } from '../private/kms-actions';
import { libraryGrant } from '../private/library-statements';
import { secureTableProps } from '../private/secure-table-props';
import { validationError } from '../private/validation-error';

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
   * Lets `grantee` record processed messages, what a `ProcessingMode.TRANSACTIONAL` consumer needs:
   * `dynamodb:PutItem` on this table (which also covers a Put inside `TransactWriteItems`; a duplicate's stored payload
   * fingerprint comes back with the failed condition, `ReturnValuesOnConditionCheckFailure: ALL_OLD`) and
   * `dynamodb:BatchGetItem` (one read per batch answers redeliveries before any write). With a customer-managed key also
   * `kms:Decrypt` and `kms:GenerateDataKey` on that key, through DynamoDB only.
   */
  grantRecordMessages(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets `grantee` claim, update and complete processing records, what a `ProcessingMode.LEASE` or
   * `ProcessingMode.MULTI_STEP` consumer needs: `dynamodb:GetItem`, `dynamodb:PutItem` and `dynamodb:UpdateItem` on
   * this table. With a customer-managed key also `kms:Decrypt` and `kms:GenerateDataKey` on that key, through DynamoDB
   * only. The batch read is off by default in these modes; a consumer created with `batchRead: true` also needs
   * {@link grantBatchRead}.
   */
  grantProcessingRecords(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets `grantee` read the records of a batch in one request: `dynamodb:BatchGetItem` on this table (with a
   * customer-managed key also `kms:Decrypt` and `kms:GenerateDataKey` on that key, through DynamoDB only). A lease or
   * multi-step consumer created with `batchRead: true` makes that read (e.g.
   * `subscriber.inboxTable?.grantBatchRead(subscriber.consumerFunction)`); {@link grantRecordMessages} includes it.
   */
  grantBatchRead(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets `grantee` (e.g. the role an operator uses with the operator CLI) list, inspect and resolve blocked messages:
   * {@link grantOperatorRead} and {@link grantOperatorResolve} together, i.e. `dynamodb:Query` and `dynamodb:Scan` on
   * the `BlockedMessages` index, `dynamodb:GetItem` and `dynamodb:UpdateItem` on this table. With a customer-managed
   * key also `kms:Decrypt` and `kms:GenerateDataKey` on that key, through DynamoDB only.
   *
   * An imported table must have the `BlockedMessages` index (see `InboxTable`) for listing to work.
   *
   * What IAM then allows is wider than what the CLI does: `GetItem` and `UpdateItem` of ANY item of the table, with any
   * update expression (every subscriber's inbox and processing records, their context, kept bodies and TTL), not only
   * the conditional resolution of a blocked record that the CLI sends. No IAM condition narrows it usefully: inbox and
   * processing records share one key shape (`<subscriber>#<eventId>`), so `dynamodb:LeadingKeys` can only narrow to one
   * subscriber, and a resolution writes the same attributes the runtime does (`dynamodb:Attributes` could not tell
   * them apart). Give it to operator roles only, or use {@link grantOperatorRead} where no one resolves.
   */
  grantOperator(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets `grantee` list and show blocked messages (the CLI's `blocked list` and `blocked show`), and change nothing:
   * `dynamodb:Query` and `dynamodb:Scan` on the `BlockedMessages` index (listing every subscriber's blocked messages
   * scans the sparse index, which holds only blocked records) and `dynamodb:GetItem` on this table. With a
   * customer-managed key also the key actions DynamoDB needs, through DynamoDB only.
   */
  grantOperatorRead(grantee: iam.IGrantable): iam.Grant;

  /**
   * Lets `grantee` resolve a blocked message (the CLI's `blocked resolve`): `dynamodb:GetItem` (the record is read
   * first) and `dynamodb:UpdateItem` (a conditional update of the record) on this table. With a customer-managed key
   * also the key actions DynamoDB needs, through DynamoDB only. As with {@link grantOperator}, IAM allows both on any
   * item of the table with any update expression, not only the CLI's conditional update of a blocked record.
   */
  grantOperatorResolve(grantee: iam.IGrantable): iam.Grant;
}

/** Properties of an {@link InboxTable}. */
export interface InboxTableProps {
  /**
   * Customer-managed key that encrypts the table at rest.
   *
   * What the table stores: per processed message its key (`<subscriber>#<eventId>`), event type, a SHA-256
   * fingerprint of the payload and timestamps; for lease and multi-step subscribers also the processing record: the
   * steps and their status, the context the handler's steps return (which may hold business data), the operators'
   * resolutions and, while a message is blocked, the reason, and its body only for a subscriber with
   * `keepBlockedMessageBody`. A customer-managed key adds KMS requests but lets you control and audit access;
   * `Subscriber` (and so `IdempotentEventFlow`) passes its key to the inbox table it creates.
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
    // The inbox write is a conditional Put (alone, or inside TransactWriteItems). A duplicate's stored payload
    // fingerprint is returned by the failed condition itself (ReturnValuesOnConditionCheckFailure: ALL_OLD), which
    // needs no permission beyond the Put. BatchGetItem: the one read per batch that answers redeliveries before any write.
    return this.grantTable('grantRecordMessages', grantee, [{ actions: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], resourceArns: [this.tableArn] }]);
  }

  public grantProcessingRecords(grantee: iam.IGrantable): iam.Grant {
    // Put claims a new record; Update takes over an expired lease, moves steps and completes, each fenced by a
    // condition on the owner; Get reads the record to decide what to do. No BatchGetItem: the batch read is off unless
    // the consumer sets `batchRead: true` (grantBatchRead), and a grant no request uses is a permission too many.
    return this.grantTable('grantProcessingRecords', grantee, [{ actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], resourceArns: [this.tableArn] }]);
  }

  public grantBatchRead(grantee: iam.IGrantable): iam.Grant {
    return this.grantTable('grantBatchRead', grantee, [{ actions: ['dynamodb:BatchGetItem'], resourceArns: [this.tableArn] }]);
  }

  public grantOperator(grantee: iam.IGrantable): iam.Grant {
    return this.grantTable('grantOperator', grantee, [
      { actions: OPERATOR_LIST_ACTIONS, resourceArns: [this.blockedIndexArn] },
      { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resourceArns: [this.tableArn] },
    ]);
  }

  public grantOperatorRead(grantee: iam.IGrantable): iam.Grant {
    return this.grantTable('grantOperatorRead', grantee, [
      { actions: OPERATOR_LIST_ACTIONS, resourceArns: [this.blockedIndexArn] },
      // `blocked show`: a consistent read of one record.
      { actions: ['dynamodb:GetItem'], resourceArns: [this.tableArn] },
    ]);
  }

  public grantOperatorResolve(grantee: iam.IGrantable): iam.Grant {
    // Resolving reads the record, then updates it under a condition (mark a step done or retryable).
    return this.grantTable('grantOperatorResolve', grantee, [{ actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resourceArns: [this.tableArn] }]);
  }

  private get blockedIndexArn(): string {
    return `${this.tableArn}/index/${PROCESSING_RECORD.BLOCKED_INDEX_NAME}`;
  }

  /**
   * Adds `statements` to `grantee`, plus the key actions DynamoDB needs when a customer-managed key encrypts the table,
   * marked as the library's from the grant method `origin`.
   */
  private grantTable(
    origin: string,
    grantee: iam.IGrantable,
    statements: ReadonlyArray<{ readonly actions: string[]; readonly resourceArns: string[] }>,
  ): iam.Grant {
    const grant = statements
      .map((statement) => libraryGrant(origin, { grantee, ...statement }))
      .reduce((combined, next) => combined.combine(next));
    grantKeyViaService(origin, this.encryptionKey, grantee, 'dynamodb', INBOX_KMS_ACTIONS);
    return grant;
  }
}

/**
 * The attributes the `BlockedMessages` index projects besides the keys: what the operator's listing reads
 * (`BlockedMessages.list` of `@idempotent-event-flow/operator`). `blocked show` reads the record from the table.
 */
const BLOCKED_INDEX_ATTRIBUTES = [
  PROCESSING_RECORD.STATUS_ATTRIBUTE,
  PROCESSING_RECORD.MODE_ATTRIBUTE,
  PROCESSING_RECORD.ACTIVE_STEP_ATTRIBUTE,
  PROCESSING_RECORD.VERSION_ATTRIBUTE,
  PROCESSING_RECORD.BLOCKED_REASON_ATTRIBUTE,
  INBOX_ITEM.SUBSCRIBER_ATTRIBUTE,
  INBOX_ITEM.EVENT_ID_ATTRIBUTE,
  INBOX_ITEM.EVENT_TYPE_ATTRIBUTE,
] as const;

/** `blocked list`: a Query of the BlockedMessages index for one subscriber, a Scan of it for all. */
const OPERATOR_LIST_ACTIONS = ['dynamodb:Query', 'dynamodb:Scan'];

/**
 * What DynamoDB needs of a customer-managed key for reads and writes on the principal's behalf. Not `kms:Encrypt` or
 * `kms:DescribeKey`: no read or write of the table requests them (DescribeKey is for whoever creates the table).
 */
const INBOX_KMS_ACTIONS: readonly string[] = ['kms:Decrypt', 'kms:GenerateDataKey'];

/**
 * A DynamoDB table that records which messages a subscriber has processed.
 *
 * Partition key `pk` (string), TTL attribute `expiresAt`, on-demand capacity, point-in-time recovery on and
 * encryption at rest. The consumer runtime writes the inbox record in the same transaction as the handler's
 * business writes, so a redelivered message is recognised and skipped. Lease and multi-step consumers keep their
 * processing records here too.
 *
 * It has a sparse global secondary index, `BlockedMessages` (partition key `blockedSubscriber`, sort key
 * `blockedAt`, both strings, all attributes projected): only records of blocked messages carry `blockedSubscriber`,
 * so the index lists exactly the messages waiting for an operator, per subscriber, oldest first. An imported inbox
 * table used by lease or multi-step subscribers needs the same index for the operator to list blocked messages.
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
      throw validationError(`InboxTable '${id}': exactly one of tableArn and tableName must be provided`);
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
    // Sparse: the runtime sets blockedSubscriber only while a message is blocked and removes it when it is resolved.
    table.addGlobalSecondaryIndex({
      indexName: PROCESSING_RECORD.BLOCKED_INDEX_NAME,
      partitionKey: { name: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, type: dynamodb.AttributeType.STRING },
      sortKey: { name: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, type: dynamodb.AttributeType.STRING },
      // Only what `blocked list` reads: never the message body or the handler's context.
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...BLOCKED_INDEX_ATTRIBUTES],
    });
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
