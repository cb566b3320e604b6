/**
 * Who granted a permission, read from a synthesized app (issue 29 item 6): the IAM report named the user's own
 * `grantReadWriteData` on the outbox table as granted by the library (the table is the library's) and the relay's
 * `dynamodb:ListStreams` on `*` as granted by the user (`*` is no construct's). The library marks each statement it adds
 * with a Sid of its own, and the report reads the Sid: a statement of one of the library's `grant*` methods is named by
 * the method, one of a construct's own wiring by the construct, any other by "you".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { GrantedPermission } from '../../../simulator/iam/access-types';
import { IamNames } from '../../../simulator/iam/iam-names';
import { grantedPermissions, pathOr, resolveRole } from '../../../simulator/iam/resolved-roles';
import type { AccessModel } from '../../../simulator/model/access-model';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { iamLine } from '../../../simulator/report/summary';
import type { SimulationResult } from '../../../simulator/run/simulation';
import { synthesizeGrantAttributionApp } from '../fixtures/grant-attribution/app';
import { ACCOUNT, REGION } from './iam-test-kit';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-grant-attribution-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let access: AccessModel;
/** Per role (construct path): its granted permissions, resources named by construct path where one is the app's. */
let permissions: Record<string, GrantedPermission[]>;

beforeAll(() => {
  synthesizeGrantAttributionApp(directory);
  access = readAssembly(directory).access!;
  // every table with a stream, as the run creates them (the relay's pipe name is made from the stream's ARN)
  const tables = new Map(
    Object.values(access.resources)
      .filter(({ type }) => type === 'AWS::DynamoDB::Table')
      .map(({ key, logicalId }) => [key, { tableName: logicalId, streamLabel: '2026-01-01T00:00:00.000' }] as const),
  );
  const names = new IamNames({ region: REGION, accountId: ACCOUNT, ref: () => undefined, getAtt: () => undefined }, access.resources, tables);
  const byArn = new Map<string, string>();
  for (const key of Object.keys(access.resources)) {
    const arn = names.getAtt(key, 'Arn');
    if (arn !== undefined) byArn.set(arn, pathOr(access.resources[key], key));
  }
  permissions = {};
  for (const { key } of access.roles) {
    const role = resolveRole(access, names, key);
    if ('unresolved' in role) throw new Error(role.unresolved);
    permissions[role.path] = grantedPermissions(role).map((permission) => ({ ...permission, resource: byArn.get(permission.resource) ?? permission.resource }));
  }
});

/** The report's IAM lines for every permission unused, as the end of a run that used none of them shows them. */
function report(): string {
  const iam = { evaluated: true as const, requests: 0, authorized: 0, denied: 0, notEvaluated: 0, rolesEvaluated: Object.keys(permissions).length, denials: [], notEvaluatedReasons: [], unusedPermissions: permissions };
  return iamLine({ iam } as unknown as SimulationResult);
}

/** The report's line for `role`'s permissions granted by `who`. */
function lineOf(text: string, role: string, who: string): string | undefined {
  return text.split('\n').find((line) => line.startsWith(`  unused by ${role}, granted by ${who}:`));
}

describe('who granted a permission, from the synthesized templates', () => {
  test("the user's grantReadWriteData on the library's outbox table is the user's; the library's grantAppendEvents beside it is the library's", () => {
    const producer = permissions['Grants/Orders/PlaceOrder/Role']!;
    const onOutbox = producer.filter((permission) => permission.resource === 'Grants/Orders/OutboxTable');
    expect(onOutbox.filter((permission) => permission.grantedBy === "idempotent-event-flow's grantAppendEvents").map(({ action }) => action)).toEqual(['dynamodb:PutItem']);
    expect(onOutbox.filter((permission) => permission.grantedBy === 'you').map(({ action }) => action)).toEqual(expect.arrayContaining(['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:UpdateItem']));

    const text = report();
    expect(lineOf(text, 'Grants/Orders/PlaceOrder/Role', 'you')).toMatch(/on Grants\/Orders\/OutboxTable/);
  });

  test("the relay's dynamodb:ListStreams on * is the library's OutboxRelay's, and no statement of the relay's role is the user's", () => {
    const relay = permissions['Grants/Orders/Relay/Role']!;
    expect(relay.find((permission) => permission.action === 'dynamodb:ListStreams')).toMatchObject({ resource: '*', grantedBy: "idempotent-event-flow's OutboxRelay" });
    expect(relay.filter((permission) => permission.grantedBy === 'you')).toEqual([]);

    const text = report();
    expect(lineOf(text, 'Grants/Orders/Relay/Role', "idempotent-event-flow's OutboxRelay")).toBeDefined();
    expect(lineOf(text, 'Grants/Orders/Relay/Role', 'you')).toBeUndefined();
  });

  test("a subscriber's role: the user's grantReadWriteData on the ledger is the user's, the inbox's grant the library's; an operator's grantOperator is named", () => {
    const billing = permissions['Grants/Orders/Billing/Function/Role']!;
    const ledger = billing.filter((permission) => permission.resource === 'Grants/LedgerTable');
    expect(ledger.length).toBeGreaterThan(0);
    expect(new Set(ledger.map(({ grantedBy }) => grantedBy))).toEqual(new Set(['you']));
    const inbox = billing.filter((permission) => permission.resource === 'Grants/Orders/Billing/InboxTable');
    expect(new Set(inbox.map(({ grantedBy }) => grantedBy))).toEqual(new Set(["idempotent-event-flow's grantRecordMessages"]));
    const queue = billing.filter((permission) => permission.action.startsWith('sqs:'));
    expect(queue.length).toBeGreaterThan(0);
    expect(queue.map(({ action, resource, grantedBy }) => `${grantedBy}: ${action} on ${resource}`).sort()).toEqual([
      "idempotent-event-flow's ConsumerFunction: sqs:SendMessage on Grants/Orders/Billing/Queue/DeadLetterQueue",
      ...['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'].map((action) => `idempotent-event-flow's Subscriber: ${action} on Grants/Orders/Billing/Queue`),
    ]);

    const operator = permissions['Grants/Operator']!;
    expect(operator.length).toBeGreaterThan(0);
    expect(new Set(operator.map(({ grantedBy }) => grantedBy))).toEqual(new Set(["idempotent-event-flow's grantOperator"]));

    const text = report();
    expect(lineOf(text, 'Grants/Orders/Billing/Function/Role', 'you')).toMatch(/on Grants\/LedgerTable/);
    expect(lineOf(text, 'Grants/Orders/Billing/Function/Role', 'you')).not.toMatch(/InboxTable|Queue|Key/);
  });
});
