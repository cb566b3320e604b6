import { Stack, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { IConstruct } from 'constructs';
import { validationError } from './validation-error';

/**
 * Multi-Region strongly consistent (MRSC) global tables support neither transactions nor TTL (DynamoDB developer guide,
 * global tables, "How it works": consistency modes; see docs/DESIGN.md, "AWS facts the constructs enforce at synth"). The outbox
 * and the inbox rely on both, so neither may live on one.
 */

/**
 * Fails when `multiRegionConsistency` (a `CfnGlobalTable`'s, resolved) is `STRONG`.
 *
 * @param prop the prop that named the table, e.g. `table` or `inboxTable`
 * @param path the table's construct path, for the message
 * @param why what the table is used for that needs transactions and TTL
 */
export function validateNotStronglyConsistent(owner: string, prop: string, path: string, multiRegionConsistency: unknown, why: string): void {
  if (multiRegionConsistency !== dynamodb.MultiRegionConsistency.STRONG) return;
  throw validationError(
    `${owner}: ${prop} must not be a multi-Region strongly consistent (MRSC) global table, because MRSC tables support neither ` +
      `transactions nor TTL (${why}), but ${path} has multiRegionConsistency ${multiRegionConsistency}; use a table with ` +
      'multiRegionConsistency EVENTUAL (the default) or without replicas',
  );
}

/**
 * The `TableV2` of this app with `multiRegionConsistency: STRONG` that `table` (an import by name or ARN) refers to,
 * recognised by the same token (an import of `tableV2.tableName` or `tableV2.tableArn`) or, for a table with a name of
 * its own, the same literal name; undefined when there is none (or the import names a table outside the app).
 */
export function stronglyConsistentTableBehind(table: { readonly tableName: string; readonly tableArn: string } & IConstruct): dynamodb.TableV2 | undefined {
  for (const candidate of table.node.root.node.findAll()) {
    if (!(candidate instanceof dynamodb.TableV2)) continue;
    const resource = candidate.node.defaultChild as dynamodb.CfnGlobalTable;
    if (Stack.of(resource).resolve(resource.multiRegionConsistency) !== dynamodb.MultiRegionConsistency.STRONG) continue;
    const literalName = resource.tableName !== undefined && !Token.isUnresolved(resource.tableName) ? resource.tableName : undefined;
    if (candidate.tableName === table.tableName || candidate.tableArn === table.tableArn || (literalName !== undefined && literalName === table.tableName)) {
      return candidate;
    }
  }
  return undefined;
}
