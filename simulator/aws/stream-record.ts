/**
 * Converts a DynamoDB stream record as the SDK returns it (`GetRecords`) into the event an EventBridge Pipe (or a
 * Lambda event source mapping) receives for it: the shape filters match and input templates read.
 *
 * The shape is the one AWS documents for Pipes with a DynamoDB stream source ("Amazon DynamoDB stream as a source for
 * EventBridge Pipes", example event) and for Lambda ("Using AWS Lambda with Amazon DynamoDB"): attribute values stay
 * in DynamoDB JSON, binary values are base64 strings as on the wire, and `ApproximateCreationDateTime` is epoch seconds.
 */
import type { AttributeValue, _Record } from '@aws-sdk/client-dynamodb-streams';

/** An attribute value in DynamoDB JSON, as the wire (and so a pipe) carries it. */
export type DynamoDbJson =
  | { readonly S: string }
  | { readonly N: string }
  | { readonly B: string }
  | { readonly SS: readonly string[] }
  | { readonly NS: readonly string[] }
  | { readonly BS: readonly string[] }
  | { readonly M: Readonly<Record<string, DynamoDbJson>> }
  | { readonly L: readonly DynamoDbJson[] }
  | { readonly NULL: boolean }
  | { readonly BOOL: boolean };

/** An item (or key) in DynamoDB JSON. */
export type DynamoDbJsonItem = Readonly<Record<string, DynamoDbJson>>;

/** The `dynamodb` part of a pipe's stream event. Absent images are absent keys, not `undefined` values. */
export interface PipeStreamChange {
  /** Epoch seconds. */
  readonly ApproximateCreationDateTime?: number;
  readonly Keys?: DynamoDbJsonItem;
  readonly NewImage?: DynamoDbJsonItem;
  readonly OldImage?: DynamoDbJsonItem;
  readonly SequenceNumber: string;
  readonly SizeBytes?: number;
  readonly StreamViewType?: string;
}

/** One DynamoDB stream record as a pipe receives it. */
export interface PipeStreamEvent {
  readonly eventID: string;
  readonly eventName: string;
  readonly eventVersion?: string;
  readonly eventSource: 'aws:dynamodb';
  readonly awsRegion: string;
  readonly dynamodb: PipeStreamChange;
  readonly eventSourceARN: string;
  /** Only on deletions made by Time to Live: `{ type: 'Service', principalId: 'dynamodb.amazonaws.com' }`. */
  readonly userIdentity?: { readonly type: string; readonly principalId: string };
}

/** What a record's event names, beyond the record itself. */
export interface StreamEventContext {
  /** `awsRegion` of the event (DynamoDB Local reports `ddblocal`; the pipe's region is what AWS would show). */
  readonly region: string;
  /** `eventSourceARN`: the stream's ARN. */
  readonly streamArn: string;
}

const TIME_TO_LIVE_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** An SDK attribute value back in DynamoDB JSON (binary as base64). Throws on a value of a type DynamoDB does not have. */
export function toDynamoDbJson(value: AttributeValue): DynamoDbJson {
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.B !== undefined) return { B: base64(value.B) };
  if (value.SS !== undefined) return { SS: [...value.SS] };
  if (value.NS !== undefined) return { NS: [...value.NS] };
  if (value.BS !== undefined) return { BS: value.BS.map(base64) };
  if (value.M !== undefined) return { M: toDynamoDbJsonItem(value.M) };
  if (value.L !== undefined) return { L: value.L.map(toDynamoDbJson) };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  throw new TypeError(`unknown DynamoDB attribute value type: ${JSON.stringify(Object.keys(value))}`);
}

/** An SDK item (or key) back in DynamoDB JSON. */
export function toDynamoDbJsonItem(item: Readonly<Record<string, AttributeValue>>): DynamoDbJsonItem {
  const converted: Record<string, DynamoDbJson> = {};
  for (const [name, value] of Object.entries(item)) converted[name] = toDynamoDbJson(value);
  return converted;
}

/**
 * The pipe event of an SDK stream record. Fields keep the order AWS shows. Two corrections for DynamoDB Local
 * (3.3.0, verified): a deletion by Time to Live comes with `eventName` `UNKNOWN_TO_SDK_VERSION` and no `userIdentity`;
 * AWS sends `REMOVE` with the Time to Live service identity, so that is what this returns. `awsRegion` is the pipe's.
 */
export function toPipeStreamEvent(record: _Record, context: StreamEventContext): PipeStreamEvent {
  const change = record.dynamodb;
  if (record.eventID === undefined || change?.SequenceNumber === undefined) {
    throw new TypeError(`a stream record of ${context.streamArn} has no eventID or SequenceNumber: ${JSON.stringify(record)}`);
  }
  const knownName = record.eventName === 'INSERT' || record.eventName === 'MODIFY' || record.eventName === 'REMOVE';
  const deletedByTimeToLive = !knownName && change.NewImage === undefined;
  const eventName = deletedByTimeToLive ? 'REMOVE' : String(record.eventName);
  const identity =
    record.userIdentity?.Type !== undefined && record.userIdentity.PrincipalId !== undefined
      ? { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId }
      : deletedByTimeToLive
        ? TIME_TO_LIVE_IDENTITY
        : undefined;
  const dynamodb: PipeStreamChange = {
    ...(change.ApproximateCreationDateTime !== undefined && { ApproximateCreationDateTime: Math.floor(change.ApproximateCreationDateTime.getTime() / 1000) }),
    ...(change.Keys !== undefined && { Keys: toDynamoDbJsonItem(change.Keys) }),
    ...(change.NewImage !== undefined && { NewImage: toDynamoDbJsonItem(change.NewImage) }),
    ...(change.OldImage !== undefined && { OldImage: toDynamoDbJsonItem(change.OldImage) }),
    SequenceNumber: change.SequenceNumber,
    ...(change.SizeBytes !== undefined && { SizeBytes: change.SizeBytes }),
    ...(change.StreamViewType !== undefined && { StreamViewType: change.StreamViewType }),
  };
  return {
    eventID: record.eventID,
    eventName,
    ...(record.eventVersion !== undefined && { eventVersion: record.eventVersion }),
    eventSource: 'aws:dynamodb',
    awsRegion: context.region,
    dynamodb,
    eventSourceARN: context.streamArn,
    ...(identity !== undefined && { userIdentity: identity }),
  };
}
