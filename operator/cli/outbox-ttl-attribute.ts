/**
 * The name of the attribute an outbox table's TTL reads, as the table says (DescribeTimeToLive): `expiresAt` on the
 * flow's own table, the user's `timeToLiveAttributeName` on an existing one. Replay and `fence replay` read an item's
 * expiry under it, so an item past its TTL is never sent, whatever the attribute is called.
 *
 * A restored table has its TTL off: DynamoDB restores no TTL setting ("You must manually set up the following on the
 * restored table: ... Time to Live (TTL) settings", RestoreTableToPointInTime). There the attribute is not guessed (review ro15b,
 * RO15B-1: `expiresAt` guessed on a table whose items expire under `ttl` sent every item past its TTL): the operator names it (`--ttl-attribute`), or the command refuses.
 */
import { DescribeTableCommand, DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { terminalText } from './terminal-text';

/** The option of replay and `fence replay` that names the outbox's TTL attribute when the table does not say it (parseArgs format). */
export const TTL_ATTRIBUTE_OPTION = { 'ttl-attribute': { type: 'string' } } as const;

/** `--ttl-attribute none`: the outbox's items never expire (a table deployed without `timeToLiveAttributeName`). */
export const NO_TTL_ATTRIBUTE = 'none';

/** The help text of `--ttl-attribute`, its description from column `column` (the command's other options'). */
export function ttlAttributeHelp(column: number): string {
  const lines = [
    "the attribute the outbox's items expire under (the flow's timeToLiveAttributeName,",
    'expiresAt on its own table; none: they never expire) when the table\'s TTL is off (a',
    'restored table: DynamoDB restores no TTL setting) or can not be read; must be the',
    "table's own when its TTL is on",
  ];
  return lines.map((line, index) => (index === 0 ? '  --ttl-attribute <name|none>'.padEnd(column) : ' '.repeat(column)) + line).join('\n');
}

/**
 * The attribute an item's expiry is read under (undefined: items never expire), with a note when it was assumed, or
 * why it can not be known.
 */
export type OutboxTimeToLive = { readonly attributeName?: string; readonly note?: string } | { readonly refusal: string };

const enableLine = (tableName: string): string =>
  `turn TTL back on for it on the attribute the flow writes (aws dynamodb update-time-to-live --table-name ${terminalText(tableName)} ` +
  '--time-to-live-specification Enabled=true,AttributeName=<attribute>), or pass --ttl-attribute <attribute> (none: its items never expire); nothing sent';

const typedAttribute = (typed: string): OutboxTimeToLive => (typed === NO_TTL_ATTRIBUTE ? {} : { attributeName: typed });

/**
 * The TTL attribute of `tableName` for a command that sends its items: the one its TTL is enabled (or being enabled)
 * on, which `typed` (--ttl-attribute) must then be; `typed` when the TTL is off or can not be read; without it, refused
 * when the TTL is off on a restored table (DescribeTable's RestoreSummary, or DescribeTable refused); `expiresAt`, the
 * flow's own, on a table never restored whose TTL is off (one deployed without a TTL attribute writes none), and, with
 * a note, when the TTL can not be read (the cross-account operator role reads only the items).
 */
export async function outboxTimeToLive(client: DynamoDBClient, tableName: string, typed?: string): Promise<OutboxTimeToLive> {
  let description;
  try {
    description = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  } catch (error) {
    if (typed !== undefined) return typedAttribute(typed);
    // the role flow.grantOperator makes for another account reads the items only (no DescribeTimeToLive): the flow's
    // own attribute, said in a note; a restored table's TTL, read, is refused above
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    return {
      attributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
      note:
        `could not read the TTL of outbox table '${terminalText(tableName)}' (DescribeTimeToLive: ${name}: ${terminalText(message)}): items past their TTL are told by ` +
        `'${TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE}', the flow's own attribute; for a table whose items expire under another, pass --ttl-attribute <attribute>`,
    };
  }
  const enabled = description?.TimeToLiveStatus === 'ENABLED' || description?.TimeToLiveStatus === 'ENABLING';
  if (enabled && description?.AttributeName !== undefined) {
    if (typed !== undefined && typed !== description.AttributeName) {
      return { refusal: `--ttl-attribute ${terminalText(typed)} disagrees with outbox table '${terminalText(tableName)}', whose TTL reads '${terminalText(description.AttributeName)}'; leave the flag out; nothing sent` };
    }
    return { attributeName: description.AttributeName };
  }
  if (typed !== undefined) return typedAttribute(typed);
  let restoredFrom: string | undefined;
  try {
    const summary = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.RestoreSummary;
    restoredFrom = summary === undefined ? undefined : (summary.SourceTableArn ?? summary.SourceBackupArn ?? 'a backup');
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    return { refusal: `outbox table '${terminalText(tableName)}' has its TTL off, and whether it was restored (DynamoDB restores no TTL setting) could not be read (DescribeTable: ${name}: ${terminalText(message)}); ${enableLine(tableName)}` };
  }
  if (restoredFrom !== undefined) {
    return {
      refusal:
        `outbox table '${terminalText(tableName)}' was restored (from ${terminalText(restoredFrom)}) and its TTL is off: DynamoDB restores no TTL setting, so the attribute its items expire under ` +
        `is not known and items past their TTL (past the retention the payload bucket's lifecycle counts on) would be sent; ${enableLine(tableName)}`,
    };
  }
  return { attributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE };
}

/**
 * The TTL attribute of `tableName` for a command that only reads its items (`fence skip`, `fence carry`'s proof): as
 * {@link outboxTimeToLive}, with `expiresAt`, the flow's own, where that refuses.
 */
export async function outboxTimeToLiveAttribute(client: DynamoDBClient, tableName: string): Promise<string> {
  const timeToLive = await outboxTimeToLive(client, tableName);
  return 'attributeName' in timeToLive && timeToLive.attributeName !== undefined ? timeToLive.attributeName : TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE;
}
