/**
 * The processing record as the runtime and the operator API read it: one item per subscriber and message in the inbox
 * table (`<subscriber>#<eventId>`). Pure: imports no AWS SDK.
 */
import { INBOX_ITEM, PROCESSING_RECORD as A, RECORD_STATUS, STEP_STATUS, TABLE_SCHEMA } from '../contract/wire-format';

/** One of the {@link RECORD_STATUS} values. */
export type RecordStatus = (typeof RECORD_STATUS)[keyof typeof RECORD_STATUS];

/** One of the {@link STEP_STATUS} values. */
export type StepStatus = (typeof STEP_STATUS)[keyof typeof STEP_STATUS];

/** The persisted state of one step. */
export interface StepState {
  readonly status: StepStatus;
  /** How often the step was started (marked PROCESSING). */
  readonly attempts: number;
  /** When the step's state last changed (ISO-8601). */
  readonly updatedAt: string;
}

/** An operator's resolution of a blocked step, kept on the record for audit. */
export interface Resolution {
  /** When (ISO-8601). */
  readonly at: string;
  /** Who, as the operator said. */
  readonly by: string;
  readonly step: string;
  readonly status: 'SUCCESS' | 'TRY_AGAIN';
  readonly reason?: string;
}

/** Why and since when a record is blocked. */
export interface BlockedState {
  /** The subscriber (the sparse index's partition key). */
  readonly subscriber: string;
  /** When it was blocked (ISO-8601; the sparse index's sort key). */
  readonly at: string;
  readonly reason: string;
  /** The SQS body of the delivery that blocked it, when it was small enough to keep. */
  readonly body?: string;
  /** The SQS message id of the delivery that blocked it (and dead-lettered it); absent on records of older writers. */
  readonly sqsMessageId?: string;
  /**
   * The SQS message id of a delivery whose dead letter of this message was sent and confirmed; absent until one was
   * (the send failed, or the invocation died before it). Another copy is acknowledged as already-blocked only when
   * this or `body` says the message is kept.
   */
  readonly deadLetterSqsMessageId?: string;
}

/** A processing record, read from the table. */
export interface ProcessingRecordView {
  /** The partition key value, `<subscriber>#<eventId>`. */
  readonly key: string;
  readonly eventId: string;
  readonly eventType?: string;
  readonly subscriber: string;
  /** The mode that wrote it (`lease` or `multi-step`). */
  readonly mode?: string;
  readonly status: RecordStatus;
  readonly payloadFingerprint?: string;
  /** The token of the delivery holding the lease; absent when none does. */
  readonly owner?: string;
  /** When the lease ends, in epoch milliseconds; 0 or absent when released. */
  readonly leaseExpiresAtEpochMilliseconds: number;
  /** The step marked PROCESSING; absent when none is. */
  readonly activeStep?: string;
  readonly stepOrder: readonly string[];
  readonly steps: Readonly<Record<string, StepState>>;
  /** What the steps stored for later steps. */
  readonly context: Readonly<Record<string, unknown>>;
  /** Incremented by every write. */
  readonly version: number;
  /** The TTL, in epoch seconds; absent while blocked. */
  readonly expiresAtEpochSeconds?: number;
  readonly deduplicationWindowSeconds?: number;
  readonly createdAt?: string;
  readonly updatedAt?: string;
  /** `<owner>:<version>` of the last write. */
  readonly lastWrite?: string;
  /** Present while the record is blocked. */
  readonly blocked?: BlockedState;
  /**
   * The message body kept on the record (`keepBlockedMessageBody`): while blocked, also in `blocked.body`; after an
   * operator resolved the record with steps left to run, kept until a delivery completes the record, as it may be the
   * message's only copy (the operator command sends it back to the subscriber's queue).
   */
  readonly keptMessageBody?: string;
  /** Operator resolutions, oldest first. */
  readonly resolutions: readonly Resolution[];
}


const STEP_STATUSES: ReadonlySet<string> = new Set(Object.values(STEP_STATUS));
const RECORD_STATUSES: ReadonlySet<string> = new Set(Object.values(RECORD_STATUS));

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function stepState(value: unknown): StepState {
  const raw = isObject(value) ? value : {};
  const status = text(raw.status);
  return {
    status: status !== undefined && STEP_STATUSES.has(status) ? (status as StepStatus) : STEP_STATUS.PENDING,
    attempts: num(raw.attempts) ?? 0,
    updatedAt: text(raw.updatedAt) ?? '',
  };
}

function resolution(value: unknown): Resolution | undefined {
  if (!isObject(value)) return undefined;
  const status = value.status === 'SUCCESS' || value.status === 'TRY_AGAIN' ? value.status : undefined;
  const step = text(value.step);
  if (status === undefined || step === undefined) return undefined;
  const reason = text(value.reason);
  return { at: text(value.at) ?? '', by: text(value.by) ?? '', step, status, ...(reason !== undefined ? { reason } : {}) };
}

/**
 * Reads a processing record item. Missing attributes get neutral values, so a record from an older writer still
 * reads; an item without a known status reads as COMPLETED (a transactional inbox record means "processed").
 */
export function parseProcessingRecord(item: Readonly<Record<string, unknown>>): ProcessingRecordView {
  const key = text(item[TABLE_SCHEMA.PARTITION_KEY]) ?? '';
  const separator = key.indexOf(INBOX_ITEM.KEY_SEPARATOR);
  const subscriber = text(item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE]) ?? (separator >= 0 ? key.slice(0, separator) : '');
  const eventId = text(item[INBOX_ITEM.EVENT_ID_ATTRIBUTE]) ?? (separator >= 0 ? key.slice(separator + 1) : key);
  const rawStatus = text(item[A.STATUS_ATTRIBUTE]);
  const status = rawStatus !== undefined && RECORD_STATUSES.has(rawStatus) ? (rawStatus as RecordStatus) : RECORD_STATUS.COMPLETED;
  const rawSteps = isObject(item[A.STEPS_ATTRIBUTE]) ? (item[A.STEPS_ATTRIBUTE] as Record<string, unknown>) : {};
  const steps: Record<string, StepState> = {};
  for (const [name, value] of Object.entries(rawSteps)) steps[name] = stepState(value);
  const rawOrder = item[A.STEP_ORDER_ATTRIBUTE];
  const stepOrder = Array.isArray(rawOrder) ? rawOrder.filter((name): name is string => typeof name === 'string') : Object.keys(steps);
  const blockedSubscriber = text(item[A.BLOCKED_SUBSCRIBER_ATTRIBUTE]);
  const blockedBody = text(item[A.BLOCKED_BODY_ATTRIBUTE]);
  const blockedSqsMessageId = text(item[A.BLOCKED_SQS_MESSAGE_ID_ATTRIBUTE]);
  const deadLetterSqsMessageId = text(item[A.BLOCKED_DEAD_LETTER_SQS_MESSAGE_ID_ATTRIBUTE]);
  const blocked: BlockedState | undefined =
    status === RECORD_STATUS.BLOCKED || blockedSubscriber !== undefined
      ? {
          subscriber: blockedSubscriber ?? subscriber,
          at: text(item[A.BLOCKED_AT_ATTRIBUTE]) ?? '',
          reason: text(item[A.BLOCKED_REASON_ATTRIBUTE]) ?? '',
          ...(blockedBody !== undefined ? { body: blockedBody } : {}),
          ...(blockedSqsMessageId !== undefined ? { sqsMessageId: blockedSqsMessageId } : {}),
          ...(deadLetterSqsMessageId !== undefined ? { deadLetterSqsMessageId } : {}),
        }
      : undefined;
  const rawResolutions = item[A.RESOLUTIONS_ATTRIBUTE];
  const resolutions = Array.isArray(rawResolutions) ? rawResolutions.map(resolution).filter((entry): entry is Resolution => entry !== undefined) : [];
  const optional = <T>(name: string, value: T | undefined): Record<string, T> => (value === undefined ? {} : { [name]: value });
  return {
    key,
    eventId,
    subscriber,
    status,
    stepOrder,
    steps,
    context: isObject(item[A.CONTEXT_ATTRIBUTE]) ? (item[A.CONTEXT_ATTRIBUTE] as Record<string, unknown>) : {},
    version: num(item[A.VERSION_ATTRIBUTE]) ?? 0,
    leaseExpiresAtEpochMilliseconds: num(item[A.LEASE_EXPIRES_AT_ATTRIBUTE]) ?? 0,
    resolutions,
    ...optional('eventType', text(item[INBOX_ITEM.EVENT_TYPE_ATTRIBUTE])),
    ...optional('mode', text(item[A.MODE_ATTRIBUTE])),
    ...optional('payloadFingerprint', text(item[INBOX_ITEM.FINGERPRINT_ATTRIBUTE])),
    ...optional('owner', text(item[A.OWNER_ATTRIBUTE])),
    ...optional('activeStep', text(item[A.ACTIVE_STEP_ATTRIBUTE])),
    ...optional('expiresAtEpochSeconds', num(item[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE])),
    ...optional('deduplicationWindowSeconds', num(item[A.DEDUPLICATION_WINDOW_SECONDS_ATTRIBUTE])),
    ...optional('createdAt', text(item[A.CREATED_AT_ATTRIBUTE])),
    ...optional('updatedAt', text(item[A.UPDATED_AT_ATTRIBUTE])),
    ...optional('lastWrite', text(item[A.LAST_WRITE_ATTRIBUTE])),
    ...optional('blocked', blocked),
    ...optional('keptMessageBody', blockedBody),
  };
}
