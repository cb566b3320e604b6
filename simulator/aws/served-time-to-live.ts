/**
 * The TTL setting a served run's DynamoDB endpoint keeps for each table (./table-clock-proxy.ts): UpdateTimeToLive is
 * answered here, never by DynamoDB Local, which would delete expired items by the machine's clock from then on (the
 * run writes expiry on its own clock, often in the past), and DescribeTimeToLive then tells what the operator set.
 * Checked as DynamoDB checks it, with its texts (DynamoDB Local answers the same ones): enabling a table whose TTL is
 * on is refused (`TimeToLive is already enabled`), disabling one whose TTL is off too (`TimeToLive is already
 * disabled`), and a different attribute while TTL is on (`TimeToLive is active on a different AttributeName`). Not
 * modelled: DynamoDB's hour during which the change settles (`ENABLING`, `DISABLING`) and refuses another update of
 * the table; here the change is told at once.
 */

/** A table's TTL as DescribeTimeToLive tells it (`TimeToLiveDescription`). */
export interface TimeToLiveDescription {
  /** `ENABLED`, `DISABLED` (or, for a table DynamoDB Local itself has TTL on, as it tells). */
  readonly TimeToLiveStatus: string;
  /** The attribute, when TTL is on. @default none */
  readonly AttributeName?: string;
}

/** An UpdateTimeToLive's `TimeToLiveSpecification`, checked. */
export interface TimeToLiveSpecification {
  readonly AttributeName: string;
  readonly Enabled: boolean;
}

/** What an UpdateTimeToLive is answered: its specification (accepted), or DynamoDB's `ValidationException` text. */
export type TimeToLiveUpdate = { readonly accepted: TimeToLiveSpecification } | { readonly refused: string };

/** DynamoDB's refusals of an UpdateTimeToLive that would change nothing or change the attribute of a TTL that is on. */
export const TIME_TO_LIVE_REFUSALS = {
  alreadyEnabled: 'TimeToLive is already enabled',
  alreadyDisabled: 'TimeToLive is already disabled',
  otherAttribute: 'TimeToLive is active on a different AttributeName',
} as const;

/**
 * The `ValidationException` text for a malformed UpdateTimeToLive request (its table name or specification missing, an
 * attribute name outside 1 to 255 characters), in DynamoDB's constraint wording (an approximation of its exact text),
 * or undefined when it is well formed.
 */
export function malformedUpdate(request: Readonly<Record<string, unknown>>): string | undefined {
  const error = (value: string, member: string, constraint: string) => `1 validation error detected: Value ${value} at '${member}' failed to satisfy constraint: ${constraint}`;
  if (typeof request.TableName !== 'string' || request.TableName === '') return error('null', 'tableName', 'Member must not be null');
  const specification = request.TimeToLiveSpecification;
  if (typeof specification !== 'object' || specification === null) return error('null', 'timeToLiveSpecification', 'Member must not be null');
  const { AttributeName, Enabled } = specification as Record<string, unknown>;
  if (typeof Enabled !== 'boolean') return error('null', 'timeToLiveSpecification.enabled', 'Member must not be null');
  if (typeof AttributeName !== 'string') return error('null', 'timeToLiveSpecification.attributeName', 'Member must not be null');
  if (AttributeName.length < 1 || AttributeName.length > 255) return error(`'${AttributeName}'`, 'timeToLiveSpecification.attributeName', 'Member must have length between 1 and 255');
  return undefined;
}

/** The TTL set through a served endpoint, per table (see the module comment). */
export class ServedTimeToLive {
  /** By table name: the table it was set for (its identity) and what DescribeTimeToLive tells since. */
  private readonly set = new Map<string, { readonly identity: string; readonly description: TimeToLiveDescription }>();

  /** Whether an UpdateTimeToLive was accepted for a table of this name (its identity is then worth asking). */
  public has(tableName: string): boolean {
    return this.set.has(tableName);
  }

  /**
   * What DescribeTimeToLive tells for the table `tableName` whose identity is `identity` (its `TableId` and creation
   * time) after an UpdateTimeToLive accepted here; undefined when none was, or it was for another table of that name
   * (one deleted and made again: DynamoDB restores no TTL setting).
   */
  public told(tableName: string, identity: string | undefined): TimeToLiveDescription | undefined {
    const entry = this.set.get(tableName);
    return entry !== undefined && entry.identity === identity ? entry.description : undefined;
  }

  /**
   * Answers an UpdateTimeToLive of the table `tableName` (identity `identity`) whose TTL is `current`, with a well-formed
   * `specification` (see {@link malformedUpdate}); an accepted one is told by {@link told} from then on.
   */
  public update(tableName: string, identity: string, current: TimeToLiveDescription, specification: TimeToLiveSpecification): TimeToLiveUpdate {
    const on = current.TimeToLiveStatus === 'ENABLED' || current.TimeToLiveStatus === 'ENABLING';
    if (on && current.AttributeName !== undefined && current.AttributeName !== specification.AttributeName) return { refused: TIME_TO_LIVE_REFUSALS.otherAttribute };
    if (specification.Enabled && on) return { refused: TIME_TO_LIVE_REFUSALS.alreadyEnabled };
    if (!specification.Enabled && !on) return { refused: TIME_TO_LIVE_REFUSALS.alreadyDisabled };
    const description: TimeToLiveDescription = specification.Enabled ? { TimeToLiveStatus: 'ENABLED', AttributeName: specification.AttributeName } : { TimeToLiveStatus: 'DISABLED' };
    this.set.set(tableName, { identity, description });
    return { accepted: { AttributeName: specification.AttributeName, Enabled: specification.Enabled } };
  }
}
