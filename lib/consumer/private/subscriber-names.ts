import { Stack, Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { IInboxTable } from '../inbox-table';
import { validationError } from '../../private/validation-error';

/**
 * Which subscriber names are in use on which inbox table, per app.
 *
 * The subscriber name is part of every inbox key (`<subscriberName>#<eventId>`): two subscribers of one name on one
 * table share their records, and the second skips as a duplicate every message the first recorded. A table is
 * identified by what can be known at synth (see {@link tableIdentities}), so a table shared across flows and stacks of
 * one app, or imported more than once, is recognised too.
 */

/** One subscriber name in use on one inbox table. */
interface NameClaim {
  readonly subscriberName: string;
  /** The construct path of the subscriber (or consumer function) that uses the name. */
  readonly claimantPath: string;
  /** The construct path of the inbox table (or import) it was claimed through, for the message. */
  readonly tablePath: string;
}

/** Per app (its root construct), per table identity: the names in use. */
const claimsByApp = new WeakMap<IConstruct, Map<string, NameClaim[]>>();

/**
 * Records that `claimantPath` uses `subscriberName` on `inboxTable`, and throws if another subscriber already uses that
 * name on the same table. A construct and its descendants count as one subscriber (a `Subscriber` claims its name, then
 * its `ConsumerFunction` does).
 *
 * @param owner the construct named at the start of the message, e.g. `Subscriber 'Billing'`
 * @param claimantPath the construct path of the subscriber (or consumer function) claiming the name
 */
export function claimSubscriberName(owner: string, inboxTable: IInboxTable, subscriberName: string, claimantPath: string): void {
  const root = inboxTable.node.root;
  let claims = claimsByApp.get(root);
  if (claims === undefined) {
    claims = new Map();
    claimsByApp.set(root, claims);
  }
  const identities = tableIdentities(inboxTable);
  for (const identity of identities) {
    const existing = claims.get(identity)?.find((claim) => claim.subscriberName === subscriberName);
    if (existing === undefined || isSameSubscriber(existing.claimantPath, claimantPath)) continue;
    throw validationError(
      `${owner}: subscriberName '${subscriberName}' is already used on inbox table ${existing.tablePath} by ${existing.claimantPath}; ` +
        `${claimantPath} would skip every message ${existing.claimantPath} recorded (the name is part of every inbox key, ` +
        '<subscriberName>#<eventId>). Give one of them a different subscriberName, or its own inbox table',
    );
  }
  const claim: NameClaim = { subscriberName, claimantPath, tablePath: inboxTable.node.path };
  for (const identity of identities) {
    const onTable = claims.get(identity) ?? [];
    onTable.push(claim);
    claims.set(identity, onTable);
  }
}

/** A consumer function inside the subscriber that claimed the name is that subscriber. */
function isSameSubscriber(existingPath: string, claimantPath: string): boolean {
  return claimantPath === existingPath || claimantPath.startsWith(`${existingPath}/`) || existingPath.startsWith(`${claimantPath}/`);
}

/**
 * Strings that identify the table behind `table`, whichever way it was referred to:
 * - a token name or ARN (an `InboxTable` of the app, or an import of its `tableName` or `tableArn`): the token itself,
 *   which stands for exactly one resource;
 * - a literal name: the name in its account and region (known for an import by ARN, or in a stack with an explicit
 *   environment). In an environment-agnostic stack the account is not known at synth, so a literal name only
 *   identifies the table within that stack: two such stacks may well be deployed to different accounts.
 */
function tableIdentities(table: IInboxTable): string[] {
  if (Token.isUnresolved(table.tableName)) {
    return [`token:${table.tableName}`, ...(Token.isUnresolved(table.tableArn) ? [`token:${table.tableArn}`] : [])];
  }
  const { account, region } = table.env;
  const where = Token.isUnresolved(account) || Token.isUnresolved(region) ? `stack:${Stack.of(table).node.path}` : `env:${account}/${region}`;
  return [`${where}/${table.tableName}`];
}
