/**
 * `AWS::DynamoDB::Table` and `AWS::DynamoDB::GlobalTable` (CDK's `TableV2`): both declare keys, indexes, stream and
 * TTL with the same properties, so both become a {@link TableModel}.
 */
import type { TableModel } from '../flow-model';
import type { TemplateResource } from '../stack-template';
import { InvalidTemplateValueError, readBoolean, readEnum, readList, readObject, readString } from '../template-values';

const KEY_TYPES = ['HASH', 'RANGE'] as const;
const ATTRIBUTE_TYPES = ['S', 'N', 'B'] as const;
const STREAM_VIEW_TYPES = ['KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES'] as const;

/** Reads a table resource. */
export function readTable(resource: TemplateResource): TableModel {
  const properties = resource.properties;
  const keySchema = readList(resource, 'KeySchema', properties.KeySchema).map((element, index) => {
    const property = `KeySchema[${index}]`;
    const entry = objectEntry(resource, property, element);
    return {
      AttributeName: requiredString(resource, `${property}.AttributeName`, entry.AttributeName),
      KeyType: readEnum(resource, `${property}.KeyType`, entry.KeyType, KEY_TYPES) ?? missing(resource, `${property}.KeyType`),
    };
  });
  if (keySchema.length === 0 || keySchema.length > 2 || keySchema[0].KeyType !== 'HASH' || keySchema[1]?.KeyType === 'HASH') {
    throw new InvalidTemplateValueError(resource, 'KeySchema', properties.KeySchema, 'it must be a HASH key, optionally followed by a RANGE key');
  }
  const attributeDefinitions = readList(resource, 'AttributeDefinitions', properties.AttributeDefinitions).map((element, index) => {
    const property = `AttributeDefinitions[${index}]`;
    const entry = objectEntry(resource, property, element);
    return {
      AttributeName: requiredString(resource, `${property}.AttributeName`, entry.AttributeName),
      AttributeType: readEnum(resource, `${property}.AttributeType`, entry.AttributeType, ATTRIBUTE_TYPES) ?? missing(resource, `${property}.AttributeType`),
    };
  });
  const stream = readObject(resource, 'StreamSpecification', properties.StreamSpecification);
  const streamViewType = readEnum(resource, 'StreamSpecification.StreamViewType', stream?.StreamViewType, STREAM_VIEW_TYPES);
  const timeToLive = readObject(resource, 'TimeToLiveSpecification', properties.TimeToLiveSpecification);
  const timeToLiveEnabled = readBoolean(resource, 'TimeToLiveSpecification.Enabled', timeToLive?.Enabled, false);
  const timeToLiveAttribute = timeToLiveEnabled
    ? requiredString(resource, 'TimeToLiveSpecification.AttributeName', timeToLive?.AttributeName)
    : undefined;
  const tableName = properties.TableName;
  return {
    ...resource.modelled(),
    ...(typeof tableName === 'string' ? { tableName } : {}),
    keySchema,
    attributeDefinitions,
    globalSecondaryIndexes: indexes(resource, 'GlobalSecondaryIndexes'),
    localSecondaryIndexes: indexes(resource, 'LocalSecondaryIndexes'),
    ...(streamViewType === undefined ? {} : { streamViewType }),
    ...(timeToLiveAttribute === undefined ? {} : { timeToLiveAttribute }),
  };
}

function indexes(resource: TemplateResource, property: string): Record<string, unknown>[] {
  return readList(resource, property, resource.properties[property]).map((element, index) => objectEntry(resource, `${property}[${index}]`, element));
}

function objectEntry(resource: TemplateResource, property: string, value: unknown): Record<string, unknown> {
  return readObject(resource, property, value) ?? missing(resource, property);
}

function requiredString(resource: TemplateResource, property: string, value: unknown): string {
  return readString(resource, property, value) ?? missing(resource, property);
}

function missing(resource: TemplateResource, property: string): never {
  throw new InvalidTemplateValueError(resource, property, undefined, 'it is required');
}
