/**
 * The parts of the processing record's conditional writes: their conditions (held by the writer, or unchanged with the
 * lease over), the update expression of a write with the names and values it uses, and what a refused write says
 * (the record it met, whether it was too large). Pure: no client.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { PutCommand, type DynamoDBDocumentClient, type UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PROCESSING_RECORD as A, RECORD_STATUS, TABLE_SCHEMA } from '../contract/wire-format';
import { conditionalCheckItem, isConditionalCheckFailed } from '../transaction/cancellation';
import { fromAttributeMap } from './attribute-values';
import { parseProcessingRecord, type ProcessingRecordView } from './processing-record';

/** The holder's writes: still the owner, and nobody wrote since. */
export const HELD_BY_ME = '#owner = :owner AND #version = :observedVersion';
/**
 * The lease is over, allowance for clock skew included, at the time the request carries (`:leaseOverBy` = the
 * writer's now minus the allowance, epoch milliseconds): checked by DynamoDB in the write itself, not only by the client
 * that read the record. A released lease is 0; a record of an older writer may have none.
 */
const LEASE_OVER = '(attribute_not_exists(#lease) OR #lease <= :leaseOverBy)';

/**
 * A takeover or an expired-lease block: nobody wrote since the record was read, and its lease is over
 * ({@link LEASE_OVER}). The version alone can not say the former: a record that expired is claimed afresh at version 1
 * again, so the condition also names the last write read (`<owner>:<version>`, unique to its writer).
 */
export function unchangedInProgressAndLeaseOver(existing: ProcessingRecordView, leaseOverByEpochMilliseconds: number): Pick<Write, 'condition' | 'conditionValues'> {
  const lastWrite = existing.lastWrite === undefined ? 'attribute_not_exists(#lastWrite)' : '#lastWrite = :observedLastWrite';
  return {
    condition: `#version = :observedVersion AND #status = :inProgress AND ${lastWrite} AND ${LEASE_OVER}`,
    conditionValues: {
      ':observedVersion': existing.version,
      ':inProgress': RECORD_STATUS.IN_PROGRESS,
      ':leaseOverBy': leaseOverByEpochMilliseconds,
      ...(existing.lastWrite === undefined ? {} : { ':observedLastWrite': existing.lastWrite }),
    },
  };
}

/** An item or a part of one, in the document client's format. */
export type Item = Record<string, unknown>;

/** The parts of a write: attributes to set and to remove, and the condition. */
export interface Write {
  readonly set: Item;
  readonly remove: readonly string[];
  readonly condition: string;
  readonly conditionValues: Item;
}

/** A conditional write's outcome: applied, or refused with the record it found (when there is one). */
export type WriteResult = { readonly applied: true } | { readonly applied: false; readonly current?: ProcessingRecordView };

/** The placeholders of attribute names that the conditions use. */
const CONDITION_NAMES: Readonly<Record<string, string>> = {
  '#pk': TABLE_SCHEMA.PARTITION_KEY,
  '#expiresAt': TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
  '#owner': A.OWNER_ATTRIBUTE,
  '#version': A.VERSION_ATTRIBUTE,
  '#status': A.STATUS_ATTRIBUTE,
  '#lastWrite': A.LAST_WRITE_ATTRIBUTE,
  '#lease': A.LEASE_EXPIRES_AT_ATTRIBUTE,
};

/** The parts of an UpdateItem request: its expression and the names and values it references. */
export interface UpdateParts {
  readonly UpdateExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Item;
}

/**
 * Builds `SET #s0 = :s0, ... REMOVE #r0, ...` with placeholders, so any attribute name is safe (the record store's
 * writes and the operator's resolution).
 */
export function setRemoveExpression(set: Readonly<Item>, remove: readonly string[]): UpdateParts {
  const names: Record<string, string> = {};
  const values: Item = {};
  const sets = Object.entries(set).map(([name, value], index) => {
    names[`#s${index}`] = name;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  const removes = remove.map((name, index) => {
    names[`#r${index}`] = name;
    return `#r${index}`;
  });
  const expression = [sets.length > 0 ? `SET ${sets.join(', ')}` : '', removes.length > 0 ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' ');
  return { UpdateExpression: expression, ExpressionAttributeNames: names, ExpressionAttributeValues: values };
}

/** {@link setRemoveExpression} of a write, with the names its condition uses and its condition values. */
export function updateParts(write: Write): UpdateParts {
  const parts = setRemoveExpression(write.set, write.remove);
  for (const [placeholder, name] of Object.entries(CONDITION_NAMES)) if (write.condition.includes(placeholder)) parts.ExpressionAttributeNames[placeholder] = name;
  return { ...parts, ExpressionAttributeValues: { ...parts.ExpressionAttributeValues, ...write.conditionValues } };
}

/**
 * The record a conditional write failed on: `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` puts it on the error, in
 * the low-level format. Undefined when the error carries none.
 */
export function failedConditionRecord(error: unknown): ProcessingRecordView | undefined {
  const old = conditionalCheckItem(error);
  return old === undefined ? undefined : parseProcessingRecord(fromAttributeMap(old as Readonly<Record<string, AttributeValue>>));
}

/**
 * True for DynamoDB's refusal of a write whose item would exceed the 400 KB item limit (nothing was written). A blocked
 * record keeps the message body next to the context and the audit list, which together can exceed it.
 */
export function isItemTooLarge(error: unknown): boolean {
  return error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message);
}

/** A short description of a record's state, for error messages. */
export function describeRecord(record: ProcessingRecordView | undefined): string {
  if (record === undefined) return 'the record is gone';
  const holder = record.owner === undefined ? 'no owner' : `owner '${record.owner}'`;
  return `the record is ${record.status} at version ${record.version} with ${holder}`;
}

/**
 * Sends a conditional write. A failed condition whose existing item carries `expectedLastWrite` means this very
 * write was applied and its response lost (the SDK retried it): that counts as applied. After any other error the
 * outcome is unknown, so the record is read once: if it carries `expectedLastWrite` the write was applied,
 * otherwise the error is rethrown. `readCurrent` reads the record consistently.
 */
export async function sendConditionalWrite(
  client: DynamoDBDocumentClient,
  command: PutCommand | UpdateCommand,
  expectedLastWrite: string,
  readCurrent: () => Promise<ProcessingRecordView | undefined>,
): Promise<WriteResult> {
  try {
    if (command instanceof PutCommand) await client.send(command);
    else await client.send(command);
    return { applied: true };
  } catch (error) {
    if (isConditionalCheckFailed(error)) {
      const current = failedConditionRecord(error) ?? (await readCurrent());
      if (current?.lastWrite === expectedLastWrite) return { applied: true };
      return { applied: false, ...(current !== undefined ? { current } : {}) };
    }
    let current: ProcessingRecordView | undefined;
    try {
      current = await readCurrent();
    } catch {
      throw error;
    }
    if (current?.lastWrite === expectedLastWrite) return { applied: true };
    throw error;
  }
}
