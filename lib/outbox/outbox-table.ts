import { Duration, Lazy, RemovalPolicy, Tokenization } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct, type IConstruct } from 'constructs';
import { ENV } from '../../lambda/contract/environment';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { validateDurationInRange, validateStringPattern } from '../private/validate-props';
import { grantKeyViaService } from '../private/kms-actions';
import { secureTableProps } from '../private/secure-table-props';
import { validateEventSource } from '../private/shared-limits';
import { outboxMaxEventBytes } from './private/event-size';
import { validateExistingOutboxTable } from './private/validate-existing-table';
import { validationError } from '../private/validation-error';
import { libraryGrant } from '../private/library-statements';

/** Outbox items must outlive every replay path of their stream record, and the stream keeps records for 24 hours. */
const MIN_EVENT_RETENTION = Duration.days(1);
const DEFAULT_EVENT_RETENTION = Duration.days(7);

/** DynamoDB attribute names are 1 to 255 bytes long. */
const ATTRIBUTE_NAME_PATTERN = /^.{1,255}$/su;
/** DynamoDB table names: 3 to 255 of `a-z A-Z 0-9 _ - .`. */
const TABLE_NAME_PATTERN = /^[a-zA-Z0-9_.-]{3,255}$/;

/**
 * A DynamoDB table that producers append outbox events to, and whose stream the outbox relay reads.
 *
 * Implemented by {@link OutboxTable} (a table created for the outbox) and by {@link OutboxTable.fromTableAttributes}
 * (an existing table, e.g. a single-table design that keeps outbox items beside its business items).
 */
export interface IOutboxTable extends IConstruct {
  /** The DynamoDB table. */
  readonly table: dynamodb.ITable;

  /** ARN of the table's DynamoDB stream, the source of the outbox relay. */
  readonly tableStreamArn: string;

  /** Name of the table's partition key attribute (type S); outbox items use `OUTBOX#<eventId>` as its value. */
  readonly partitionKeyName: string;

  /**
   * Name of the table's sort key attribute (type S); outbox items use `OUTBOX#<eventId>` as its value.
   *
   * @default - the table has no sort key
   */
  readonly sortKeyName?: string;

  /**
   * Name of the table's TTL attribute (epoch seconds) that producers set on outbox items.
   *
   * @default - outbox items carry no expiry and are kept until deleted
   */
  readonly timeToLiveAttributeName?: string;

  /** How long producers keep an outbox item (through the TTL attribute) after appending it. */
  readonly eventRetention: Duration;

  /** The CloudEvents `source` producers put on the events they append, unless they pass their own. */
  readonly eventSource: string;

  /**
   * The customer-managed KMS key the table (and so its stream) is encrypted with.
   *
   * @default - the table is encrypted with an AWS owned or AWS managed key, which needs no grants
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Environment variables a producer function needs to append events to this table
   * (names from `ENV` in the runtime's `contract/environment.ts`): table name, key names, TTL attribute, retention, event source, and
   * the largest event its relay's batches let a producer append.
   */
  readonly producerEnvironment: Record<string, string>;

  /**
   * Grants a producer what appending outbox events in a `TransactWriteItems` takes.
   *
   * The outbox `Put` of a transaction is authorized as `dynamodb:PutItem` on the table; its
   * `attribute_not_exists` condition needs no further action. With a customer-managed key, also `kms:Encrypt` and
   * `kms:Decrypt` on that key. The producer's own business writes in the same transaction need their own grants.
   *
   * @param grantee the producer (e.g. its Lambda function)
   */
  grantAppendEvents(grantee: iam.IGrantable): iam.Grant;
}

/** Attributes of an existing table to use as the outbox (see {@link OutboxTable.fromTableAttributes}). */
export interface OutboxTableAttributes {
  /**
   * The existing table. Its stream must include new images (`NEW_IMAGE` or `NEW_AND_OLD_IMAGES`), because the
   * relay reads the envelope from the new image; a `KEYS_ONLY` or `OLD_IMAGE` stream relays nothing.
   *
   * A `Table` or `TableV2` of this app is checked at synth against `partitionKeyName`, `sortKeyName` and
   * `timeToLiveAttributeName` and for its stream view type. A table imported by name or ARN can not be: its key schema
   * is checked by the producer runtime when a write is refused (`OutboxKeySchemaError`); its stream view type and TTL
   * attribute are not checked at all.
   */
  readonly table: dynamodb.ITable;

  /**
   * ARN of the table's stream.
   *
   * @default - `table.tableStreamArn` (set when the table was created in this app with a stream, or imported with
   * `Table.fromTableAttributes({ tableStreamArn })`)
   */
  readonly tableStreamArn?: string;

  /** Name of the table's partition key attribute; it must be of type S. */
  readonly partitionKeyName: string;

  /**
   * Name of the table's sort key attribute; it must be of type S. Required when the table has a sort key.
   *
   * @default - the table has no sort key
   */
  readonly sortKeyName?: string;

  /**
   * Name of the table's TTL attribute, set by producers to the outbox item's expiry in epoch seconds. It must be the
   * attribute the table's TTL is enabled on, or outbox items never expire.
   *
   * @default - producers set no expiry and outbox items stay in the table until you delete them
   */
  readonly timeToLiveAttributeName?: string;

  /**
   * How long producers keep an outbox item after appending it. Only takes effect with `timeToLiveAttributeName`.
   * At least 1 day, so an item outlives the 24 hours its stream record can be read and replayed.
   *
   * @default Duration.days(7)
   */
  readonly eventRetention?: Duration;

  /**
   * The CloudEvents `source` producers put on the events they append, unless they pass their own.
   *
   * @default - `/` followed by the URI-encoded construct path of the imported outbox table, e.g. `/OrdersStack/Outbox`
   */
  readonly eventSource?: string;

  /**
   * The customer-managed KMS key the table is encrypted with.
   *
   * @default - `table.encryptionKey`
   */
  readonly encryptionKey?: kms.IKey;
}

/** Properties of an {@link OutboxTable}. */
export interface OutboxTableProps {
  /**
   * Physical name of the table.
   *
   * A fixed name prevents CloudFormation from replacing the table, and two stacks in one account and Region from
   * using the same name.
   *
   * @default - CloudFormation generates a unique name
   */
  readonly tableName?: string;

  /**
   * Customer-managed KMS key to encrypt the table and its stream with.
   *
   * The relay and every producer are granted use of it automatically.
   *
   * @default - the AWS managed key for DynamoDB (`aws/dynamodb`)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * What happens to the table when it is removed from the stack or the stack is deleted.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * How long producers keep an outbox item after appending it, through the TTL attribute `expiresAt`.
   *
   * At least 1 day: a stream record can be read (and a dead-lettered one replayed) for 24 hours, and the item should
   * still be there to inspect. TTL deletes expired items within a few days, not at the exact time.
   *
   * @default Duration.days(7)
   */
  readonly eventRetention?: Duration;

  /**
   * The CloudEvents `source` producers put on the events they append, unless they pass their own.
   *
   * @default - `/` followed by the URI-encoded construct path of this table, e.g. `/OrdersStack/Outbox`
   */
  readonly eventSource?: string;
}

/**
 * Behaviour shared by outbox tables created here and outbox tables imported with
 * {@link OutboxTable.fromTableAttributes}: the producer grant and the producer environment.
 */
export abstract class OutboxTableBase extends Construct implements IOutboxTable {
  public abstract readonly table: dynamodb.ITable;
  public abstract readonly tableStreamArn: string;
  public abstract readonly partitionKeyName: string;
  public abstract readonly sortKeyName?: string;
  public abstract readonly timeToLiveAttributeName?: string;
  public abstract readonly eventRetention: Duration;
  public abstract readonly eventSource: string;
  public abstract readonly encryptionKey?: kms.IKey;

  /**
   * Grants `dynamodb:PutItem` on the table, and `kms:Encrypt` and `kms:Decrypt` on a customer-managed key.
   *
   * A `Put` inside `TransactWriteItems` is authorized as `dynamodb:PutItem` (DynamoDB developer guide, "Using IAM
   * with DynamoDB transactions"); the outbox writes nothing else. The Put is conditioned on `dynamodb:LeadingKeys`
   * (`ForAllValues:StringLike`, `OUTBOX#*`): every item the runtime writes to the outbox (an event `OUTBOX#<eventId>`,
   * an ordered head `OUTBOX#AGGREGATE#<aggregateId>`) has a partition key value with that prefix, so a producer can not
   * put the business items of a shared table; grant those writes separately.
   */
  public grantAppendEvents(grantee: iam.IGrantable): iam.Grant {
    const grant = libraryGrant('grantAppendEvents', {
      grantee,
      actions: ['dynamodb:PutItem'],
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${OUTBOX_ITEM.KEY_PREFIX}*`] } },
    });
    grantKeyViaService('grantAppendEvents', this.encryptionKey, grantee, 'dynamodb', ['kms:Encrypt', 'kms:Decrypt']);
    return grant;
  }

  public get producerEnvironment(): Record<string, string> {
    const environment: Record<string, string> = {
      [ENV.OUTBOX_TABLE_NAME]: this.table.tableName,
      [ENV.OUTBOX_PARTITION_KEY_NAME]: this.partitionKeyName,
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: Tokenization.stringifyNumber(this.eventRetention.toSeconds()),
      [ENV.EVENT_SOURCE]: this.eventSource,
      // Known once every relay of this outbox exists: the largest event a full batch of its relay fits the topic with.
      [ENV.MAX_EVENT_BYTES]: Lazy.string({ produce: () => String(outboxMaxEventBytes(this)) }),
    };
    if (this.sortKeyName !== undefined) environment[ENV.OUTBOX_SORT_KEY_NAME] = this.sortKeyName;
    if (this.timeToLiveAttributeName !== undefined) {
      environment[ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME] = this.timeToLiveAttributeName;
    }
    return environment;
  }

  /** `/` + the URI-encoded construct path, so each outbox gets a stable, distinct default source. */
  protected defaultEventSource(): string {
    return '/' + this.node.path.split('/').map(encodeURIComponent).join('/');
  }
}

/**
 * A DynamoDB table for the transactional outbox.
 *
 * Producers write their business items and one outbox item per event in a single `TransactWriteItems`; the table's
 * stream (new images) feeds the {@link OutboxRelay}. The table is on-demand, keyed `pk`/`sk` (both S), expires
 * outbox items through the TTL attribute `expiresAt`, has point-in-time recovery on, is encrypted with KMS and is
 * retained when removed from the stack.
 */
export class OutboxTable extends OutboxTableBase {
  /**
   * Uses an existing table as the outbox, e.g. a single-table design whose business items and outbox items share
   * the table. The relay's filter passes only outbox items (inserts marked as outbox events), so business items
   * never reach the topic. The table must have a stream with new images.
   *
   * @param scope the parent construct
   * @param id the construct id
   * @param attrs the table and how outbox items fit its key schema
   */
  public static fromTableAttributes(scope: Construct, id: string, attrs: OutboxTableAttributes): IOutboxTable {
    const owner = `OutboxTable '${id}'`;
    const tableStreamArn = attrs.tableStreamArn ?? attrs.table.tableStreamArn;
    if (tableStreamArn === undefined) {
      throw validationError(
        `${owner}: the table has no stream ARN. Enable a stream with new images (NEW_IMAGE or NEW_AND_OLD_IMAGES) on the ` +
          'table and pass tableStreamArn, or import the table with Table.fromTableAttributes({ tableStreamArn })',
      );
    }
    validateStringPattern(owner, 'partitionKeyName', attrs.partitionKeyName, ATTRIBUTE_NAME_PATTERN, '1 to 255 characters');
    validateStringPattern(owner, 'sortKeyName', attrs.sortKeyName, ATTRIBUTE_NAME_PATTERN, '1 to 255 characters');
    validateStringPattern(
      owner,
      'timeToLiveAttributeName',
      attrs.timeToLiveAttributeName,
      ATTRIBUTE_NAME_PATTERN,
      '1 to 255 characters',
    );
    validateDurationInRange(owner, 'eventRetention', attrs.eventRetention, { min: MIN_EVENT_RETENTION });
    validateEventSource(owner, 'eventSource', attrs.eventSource);
    validateExistingOutboxTable(owner, attrs.table, {
      tableStreamArnGiven: attrs.tableStreamArn !== undefined,
      partitionKeyName: attrs.partitionKeyName,
      sortKeyName: attrs.sortKeyName,
      timeToLiveAttributeName: attrs.timeToLiveAttributeName,
    });

    class Import extends OutboxTableBase {
      public readonly table = attrs.table;
      public readonly tableStreamArn: string = tableStreamArn as string;
      public readonly partitionKeyName = attrs.partitionKeyName;
      public readonly sortKeyName = attrs.sortKeyName;
      public readonly timeToLiveAttributeName = attrs.timeToLiveAttributeName;
      public readonly eventRetention = attrs.eventRetention ?? DEFAULT_EVENT_RETENTION;
      public readonly eventSource: string;
      public readonly encryptionKey = attrs.encryptionKey ?? attrs.table.encryptionKey;

      public constructor() {
        super(scope, id);
        this.eventSource = attrs.eventSource ?? this.defaultEventSource();
      }
    }
    return new Import();
  }

  public readonly table: dynamodb.ITable;
  public readonly tableStreamArn: string;
  public readonly partitionKeyName: string = TABLE_SCHEMA.PARTITION_KEY;
  public readonly sortKeyName?: string = TABLE_SCHEMA.SORT_KEY;
  public readonly timeToLiveAttributeName?: string = TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE;
  public readonly eventRetention: Duration;
  public readonly eventSource: string;
  public readonly encryptionKey?: kms.IKey;

  public constructor(scope: Construct, id: string, props: OutboxTableProps = {}) {
    super(scope, id);
    const owner = `OutboxTable '${id}'`;
    validateStringPattern(owner, 'tableName', props.tableName, TABLE_NAME_PATTERN, '3 to 255 of a-z, A-Z, 0-9, _, - and .');
    validateDurationInRange(owner, 'eventRetention', props.eventRetention, { min: MIN_EVENT_RETENTION });
    validateEventSource(owner, 'eventSource', props.eventSource);

    const table = new dynamodb.Table(this, 'Resource', {
      ...secureTableProps(props.encryptionKey, props.removalPolicy),
      tableName: props.tableName,
      sortKey: { name: TABLE_SCHEMA.SORT_KEY, type: dynamodb.AttributeType.STRING },
      // The relay reads the envelope from the new image; old images would only add cost.
      stream: dynamodb.StreamViewType.NEW_IMAGE,
    });

    this.table = table;
    // Always defined: the stream is enabled above.
    this.tableStreamArn = table.tableStreamArn as string;
    this.eventRetention = props.eventRetention ?? DEFAULT_EVENT_RETENTION;
    this.eventSource = props.eventSource ?? this.defaultEventSource();
    this.encryptionKey = props.encryptionKey;
  }
}
