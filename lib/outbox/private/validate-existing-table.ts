import { Stack, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { validateNotStronglyConsistent } from '../../private/strong-consistency';
import { validationError } from '../../private/validation-error';

/**
 * Checks an existing table passed to `OutboxTable.fromTableAttributes` against what the outbox needs, as far as it can
 * be known at synth: for a table defined in this app (an L2 `Table` or `TableV2`, whose default child is its
 * CloudFormation resource) its stream view type, key schema, key attribute types and TTL attribute. A table imported by
 * name or ARN has no CloudFormation resource here, so nothing is checked (the producer runtime recognises a key-schema
 * mismatch at its first write; see `Outbox.transactWrite`). Values that are tokens are not checked.
 */

/** What the outbox is told about the table. */
export interface OutboxTableLayout {
  readonly tableStreamArnGiven: boolean;
  readonly partitionKeyName: string;
  readonly sortKeyName?: string;
  readonly timeToLiveAttributeName?: string;
}

/** The stream view types whose records carry the new image, which the relay reads the envelope from. */
const NEW_IMAGE_VIEW_TYPES: readonly string[] = [dynamodb.StreamViewType.NEW_IMAGE, dynamodb.StreamViewType.NEW_AND_OLD_IMAGES];

/** The properties of `CfnTable` and `CfnGlobalTable` checked here, resolved (`TableV2` computes some lazily). */
interface TableResource {
  readonly keySchema?: unknown;
  readonly attributeDefinitions?: unknown;
  readonly streamSpecification?: unknown;
  readonly timeToLiveSpecification?: unknown;
  /** `CfnGlobalTable` only: `STRONG` for a multi-Region strongly consistent (MRSC) global table. */
  readonly multiRegionConsistency?: unknown;
}

/** The resolved CloudFormation properties of `table` when it was defined in this app; undefined for an imported table. */
function tableResource(table: dynamodb.ITable): TableResource | undefined {
  const child = table.node.defaultChild;
  if (!(child instanceof dynamodb.CfnTable || child instanceof dynamodb.CfnGlobalTable)) return undefined;
  const stack = Stack.of(child);
  return {
    keySchema: stack.resolve(child.keySchema),
    attributeDefinitions: stack.resolve(child.attributeDefinitions),
    streamSpecification: stack.resolve(child.streamSpecification),
    timeToLiveSpecification: stack.resolve(child.timeToLiveSpecification),
    multiRegionConsistency: child instanceof dynamodb.CfnGlobalTable ? stack.resolve(child.multiRegionConsistency) : undefined,
  };
}

/** `value[key]` if it is a string: a token resolves to an object (`{ Ref: ... }`), which is not known at synth. */
function stringAt(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : undefined;
}

/** Throws if `table` (when defined in this app) does not fit the outbox `layout`, naming the prop, expected and actual values. */
export function validateExistingOutboxTable(owner: string, table: dynamodb.ITable, layout: OutboxTableLayout): void {
  const resource = tableResource(table);
  if (resource === undefined) return;
  const path = table.node.path;

  validateNotStronglyConsistent(owner, 'table', path, resource.multiRegionConsistency, 'producers append each event in the transaction of their business writes, and outbox items expire through TTL');
  validateStream(owner, path, resource, layout);
  const keySchema = Array.isArray(resource.keySchema) ? resource.keySchema : [];
  const keyOf = (keyType: string) => stringAt(keySchema.find((key) => stringAt(key, 'keyType') === keyType), 'attributeName');
  const hash = keyOf('HASH');
  if (hash !== undefined) {
    const definitions = Array.isArray(resource.attributeDefinitions) ? resource.attributeDefinitions : [];
    const attributeTypes = new Map(definitions.map((definition) => [stringAt(definition, 'attributeName'), stringAt(definition, 'attributeType')]));
    const range = keyOf('RANGE');
    validateKey(owner, path, 'partitionKeyName', 'partition key', hash, layout.partitionKeyName, attributeTypes);
    if (range === undefined) {
      if (layout.sortKeyName !== undefined && !Token.isUnresolved(layout.sortKeyName)) {
        throw validationError(`${owner}: sortKeyName must be omitted (${path} has no sort key), but '${layout.sortKeyName}' was provided`);
      }
    } else if (layout.sortKeyName === undefined) {
      throw validationError(`${owner}: sortKeyName must be the sort key of ${path} ('${range}'), but none was provided`);
    } else {
      validateKey(owner, path, 'sortKeyName', 'sort key', range, layout.sortKeyName, attributeTypes);
    }
  }
  validateTimeToLive(owner, path, resource, layout.timeToLiveAttributeName);
}

function validateStream(owner: string, path: string, resource: TableResource, layout: OutboxTableLayout): void {
  const expected = `table must have a stream with new images (${NEW_IMAGE_VIEW_TYPES.join(' or ')})`;
  if (resource.streamSpecification === undefined) {
    // A Table without a stream has no tableStreamArn (fromTableAttributes has failed for want of one); a TableV2 always
    // has one (its StreamArn attribute), which the pipe would be wired to although the table has no stream.
    const given = layout.tableStreamArnGiven ? ' (tableStreamArn was given, but names no stream of it)' : '';
    throw validationError(`${owner}: ${expected}, but ${path} has no stream${given}; set dynamoStream (TableV2) or stream (Table)`);
  }
  const viewType = stringAt(resource.streamSpecification, 'streamViewType');
  if (viewType !== undefined && !NEW_IMAGE_VIEW_TYPES.includes(viewType)) {
    throw validationError(`${owner}: ${expected}, but the stream of ${path} is ${viewType}; the relay reads each event from the new image`);
  }
}

function validateKey(
  owner: string,
  path: string,
  prop: string,
  role: string,
  actual: string | undefined,
  given: string,
  attributeTypes: ReadonlyMap<string | undefined, string | undefined>,
): void {
  if (actual === undefined || Token.isUnresolved(actual) || Token.isUnresolved(given)) return;
  if (actual !== given) {
    throw validationError(`${owner}: ${prop} must be the ${role} of ${path} ('${actual}'), but '${given}' was provided`);
  }
  const type = attributeTypes.get(actual);
  if (type !== undefined && !Token.isUnresolved(type) && type !== dynamodb.AttributeType.STRING) {
    throw validationError(
      `${owner}: ${prop} must name a key of type S (string), but '${actual}' of ${path} is of type ${type}; outbox items use 'OUTBOX#<eventId>' as its value`,
    );
  }
}

function validateTimeToLive(owner: string, path: string, resource: TableResource, given: string | undefined): void {
  if (given === undefined || Token.isUnresolved(given)) return;
  const specification = resource.timeToLiveSpecification;
  const enabled = typeof specification === 'object' && specification !== null ? (specification as Record<string, unknown>).enabled : undefined;
  const actual = specification === undefined || enabled === false ? undefined : stringAt(specification, 'attributeName');
  if (actual === undefined && specification !== undefined && enabled !== false) return; // a token: not known at synth
  if (actual === undefined) {
    throw validationError(
      `${owner}: timeToLiveAttributeName must be the TTL attribute of ${path} (none: enable TTL on the table or omit timeToLiveAttributeName), but '${given}' was provided`,
    );
  }
  if (actual !== given) {
    throw validationError(`${owner}: timeToLiveAttributeName must be the TTL attribute of ${path} ('${actual}'), but '${given}' was provided`);
  }
}

