/**
 * The name of the attribute an outbox table's TTL reads: `expiresAt` on the flow's own table, the user's
 * `timeToLiveAttributeName` on an existing one. Replay and `fence replay` read an item's expiry under it, so an item
 * past its TTL is never sent, whatever the attribute is called.
 *
 * The attribute given (`--outbox-ttl-attribute`, else the Operator output's `outboxTimeToLiveAttribute`) is checked
 * against the table's TTL (DescribeTimeToLive, and DescribeTable when it is off, which `grantOperator` grants). It is not guessed where the table can not
 * say it: where its TTL can not be read, and on a restored table, whose TTL is off because DynamoDB restores no TTL
 * setting ("You must manually set up the following on the restored table: ... Time to Live (TTL) settings",
 * RestoreTableToPointInTime). A wrong guess reads every item as having no TTL, and sends items past it.
 */
import { DescribeTableCommand, DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { terminalText } from './terminal-text';

/** The option of replay and `fence replay` that names the outbox's TTL attribute (parseArgs format). */
export const OUTBOX_TTL_ATTRIBUTE_OPTION = { 'outbox-ttl-attribute': { type: 'string' } } as const;

/** `--outbox-ttl-attribute none`: the outbox's items never expire (a table deployed without `timeToLiveAttributeName`). */
export const NO_TTL_ATTRIBUTE = 'none';

/** The start of the refusal when the table's TTL can not be read and nothing names the attribute. */
export const OUTBOX_TTL_UNKNOWN_TEXT = 'the TTL attribute of the outbox table';

/** The start of the refusal when the attribute given is not the one the table's TTL is on. */
export const OUTBOX_TTL_DISAGREES_TEXT = 'the outbox TTL attribute given';

/** The help text of `--outbox-ttl-attribute`, its description from column `column` (the command's other options'). */
export function outboxTtlAttributeHelp(column: number): string {
  const flag = '  --outbox-ttl-attribute <name|none>';
  const lines = [
    "the attribute the outbox's items expire under (the flow's",
    "timeToLiveAttributeName, expiresAt on its own table; none: they never expire);",
    "default: the Operator output's outboxTimeToLiveAttribute. Must be the table's own",
    'when its TTL is on; needed when its TTL is off on a restored table (DynamoDB',
    'restores no TTL setting) or can not be read',
  ];
  const indent = ' '.repeat(column);
  return (flag.length < column ? [flag.padEnd(column) + lines[0], ...lines.slice(1).map((line) => indent + line)] : [flag, ...lines.map((line) => indent + line)]).join('\n');
}

/**
 * The attribute an item's expiry is read under (undefined: items never expire), or why it can not be known (a
 * refusal's text).
 */
export type OutboxTimeToLive = { readonly attributeName?: string } | { readonly refusal: string };

const enableLine = (tableName: string): string =>
  `turn TTL back on for it on the attribute the flow writes (aws dynamodb update-time-to-live --table-name ${terminalText(tableName)} ` +
  '--time-to-live-specification Enabled=true,AttributeName=<attribute>), or pass --outbox-ttl-attribute <attribute> (none: its items never expire); nothing sent';

const givenAttribute = (given: string): OutboxTimeToLive => (given === NO_TTL_ATTRIBUTE ? {} : { attributeName: given });

const errorParts = (error: unknown): { name: string; message: string } => {
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  return { name, message: terminalText(message) };
};

/**
 * The TTL attribute of `tableName` for a command that sends its items. `given` is `--outbox-ttl-attribute`, else the
 * Operator output's `outboxTimeToLiveAttribute` (`none`: items never expire).
 * - TTL enabled (or being enabled): its attribute; a `given` one that differs is refused.
 * - TTL off: `given`; without it, refused on a restored table (DescribeTable's RestoreSummary, or DescribeTable
 *   refused), `expiresAt`, the flow's own, on a table never restored (one deployed without a TTL attribute writes none).
 * - TTL unreadable (DescribeTimeToLive denied or failed): `given`; without it, refused.
 */
export async function outboxTimeToLive(client: DynamoDBClient, tableName: string, given?: string): Promise<OutboxTimeToLive> {
  let description;
  try {
    description = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  } catch (error) {
    // no such table (with these credentials): the command fails naming it, as its read of the items would
    if (error instanceof Error && error.name === 'ResourceNotFoundException') throw error;
    if (given !== undefined) return givenAttribute(given);
    const { name, message } = errorParts(error);
    return {
      refusal:
        `${OUTBOX_TTL_UNKNOWN_TEXT} ${terminalText(tableName)} could not be read (DescribeTimeToLive: ${name}: ${message}), so which of its ` +
        'items are past their TTL (and may have lost their offloaded data) can not be told; nothing was sent. Give --outbox-ttl-attribute ' +
        "(the outbox table's timeToLiveAttributeName; expiresAt on the flow's own table; none: its items never expire), or an Operator output " +
        'that names it (outboxTimeToLiveAttribute), or grant dynamodb:DescribeTimeToLive on the table (flow.grantOperator does)',
    };
  }
  const enabled = description?.TimeToLiveStatus === 'ENABLED' || description?.TimeToLiveStatus === 'ENABLING';
  if (enabled && description?.AttributeName !== undefined) {
    if (given !== undefined && given !== description.AttributeName) {
      return {
        refusal:
          `${OUTBOX_TTL_DISAGREES_TEXT}, '${terminalText(given)}' (--outbox-ttl-attribute, else the Operator output's outboxTimeToLiveAttribute), disagrees with ` +
          `outbox table '${terminalText(tableName)}', whose TTL reads '${terminalText(description.AttributeName)}'; pass --outbox-ttl-attribute ${terminalText(description.AttributeName)}; nothing sent`,
      };
    }
    return { attributeName: description.AttributeName };
  }
  if (given !== undefined) return givenAttribute(given);
  let restoredFrom: string | undefined;
  try {
    const summary = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.RestoreSummary;
    restoredFrom = summary === undefined ? undefined : (summary.SourceTableArn ?? summary.SourceBackupArn ?? 'a backup');
  } catch (error) {
    const { name, message } = errorParts(error);
    return { refusal: `outbox table '${terminalText(tableName)}' has its TTL off, and whether it was restored (DynamoDB restores no TTL setting) could not be read (DescribeTable: ${name}: ${message}); ${enableLine(tableName)}` };
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
 * {@link outboxTimeToLive} with nothing given, with `expiresAt`, the flow's own, where that refuses.
 */
export async function outboxTimeToLiveAttribute(client: DynamoDBClient, tableName: string): Promise<string> {
  const timeToLive = await outboxTimeToLive(client, tableName);
  return 'attributeName' in timeToLive && timeToLive.attributeName !== undefined ? timeToLive.attributeName : TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE;
}
