/**
 * `IdempotentEventFlow.grantOperator` and `OrderedRelay.grantOperator`: what an operator needs of the flow's account
 * to run `idempotent-event-flow replay` (it reads events back from the outbox by id, `GetItem`, or by time, `Scan`;
 * to an ordered subscriber, the relay's history items the same way). A principal of the flow's account
 * gets it in its own policy. A principal of another account (a subscriber's team, docs/CROSS-ACCOUNT.md) can not be
 * given an identity policy here: it gets a role in the flow's account, trusted by exactly that principal (never `*`),
 * holding the outbox read; the principal assumes it to read the outbox.
 */
import { createHash } from 'node:crypto';
import { CfnOutput, PhysicalName, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { IOutboxTable } from '../outbox/outbox-table';
import { grantKeyViaService } from './kms-actions';
import { libraryGrant } from './library-statements';
import { validationError } from './validation-error';

const ORIGIN = 'grantOperator';
/**
 * What `replay` and `fence replay` send to the outbox table: GetItem (`--event-id`), Scan (`--since`),
 * DescribeTimeToLive (which attribute the table's TTL reads: an item past it is never sent) and DescribeTable (when
 * the TTL is off and nothing names the attribute, whether the table was restored, from its RestoreSummary: a
 * restored table is refused, one never restored is read under `expiresAt`). DescribeTable reads the table's
 * description, no item. Nothing that writes.
 */
export const OUTBOX_OPERATOR_ACTIONS: readonly string[] = ['dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTimeToLive', 'dynamodb:DescribeTable'];

/** The construct id of the role `grantOperator` creates for principals of `account`. */
export function crossAccountOperatorRoleId(account: string): string {
  return `CrossAccountOperator${account}`;
}

/** The literal account of `principal`, when synth knows it: its `principalAccount`, or the account of a literal IAM ARN. */
export function literalPrincipalAccount(principal: iam.IPrincipal): string | undefined {
  const fromArn = principal instanceof iam.ArnPrincipal && !Token.isUnresolved(principal.arn) ? /^arn:[^:]+:(?:iam|sts)::(\d{12}):/.exec(principal.arn)?.[1] : undefined;
  const account = principal.principalAccount ?? fromArn;
  return account === undefined || Token.isUnresolved(account) || account === '' ? undefined : account;
}

/** Whether the principal's policy fragment names every principal (`*`, also `OrganizationPrincipal`'s). */
function isWildcard(principal: iam.IPrincipal): boolean {
  const aws = principal.policyFragment.principalJson.AWS;
  return (Array.isArray(aws) ? aws : [aws]).some((value) => value === '*');
}

/** Who grants the outbox read: named in refusals and in the role's description. */
export interface OperatorGrantOwner {
  /** How refusals name it, e.g. `IdempotentEventFlow 'Payments'`. */
  readonly description: string;
  /** What the role's description calls it, before its construct path, e.g. `flow`. */
  readonly kind: string;
}

/**
 * Grants `grantee` the outbox read `replay` needs (see the module comment). For a principal of another account it
 * creates (once per account) the role `CrossAccountOperator<account>` under `flow` (the flow or ordered relay `owner` describes), with a generated physical name
 * (so a stack of another environment can name its ARN) and a `RoleArn` output; further principals of that account are
 * added to its trust policy. A role or user this app builds in the other account also gets `sts:AssumeRole` on that role
 * in its own policy; an imported one (`Role.fromRoleArn`) is only trusted: its own account grants it the assume.
 */
export function grantFlowOperator(flow: Construct, owner: OperatorGrantOwner, outboxTable: IOutboxTable, grantee: iam.IGrantable): iam.Grant {
  const principal = grantee.grantPrincipal;
  if (isWildcard(principal)) {
    throw validationError(`${owner.description}: grantOperator takes one principal, but ${principal.toString()} is any principal ('*'); name an account or a role of it`);
  }
  const flowAccount = Stack.of(flow).account;
  const account = literalPrincipalAccount(principal);
  // A literal account that is not (or, in an environment-agnostic stack, may not be) the flow's: a role to assume.
  if (account !== undefined && (Token.isUnresolved(flowAccount) || account !== flowAccount)) {
    const role = crossAccountOperatorRole(flow, owner, account, principal);
    // A role or user this app builds (in a stack of the other account) also gets sts:AssumeRole in its own policy. An
    // imported one is trusted only: its policy is the other account's to write, and in an environment-agnostic flow
    // stack CDK would take it for a role of the flow's account and attach the grant to a same-named role there.
    if (principal instanceof iam.Role || principal instanceof iam.User) role.grantAssumeRole(principal);
    return grantOutboxRead(outboxTable, role);
  }
  const grant = grantOutboxRead(outboxTable, ownAccountGrantee(flow, principal) ?? grantee);
  if (!grant.success) {
    throw validationError(
      `${owner.description}: grantOperator could not give ${principal.toString()} the outbox read (${OUTBOX_OPERATOR_ACTIONS.join(', ')}): it is a principal of ` +
        "the flow's account whose policy this stack can not write (not a role or user of the app, nor a literal role or user ARN); " +
        'pass the role or user itself (e.g. iam.Role.fromRoleArn(scope, id, arn)), or grant those actions on the outbox table in its own policy',
    );
  }
  return grant;
}

/**
 * A principal of the flow's account named by a literal role or user ARN (an `ArnPrincipal`, e.g. an SSO role) has no
 * policy the stack can write; imported as a role or user of this account, it gets an `AWS::IAM::Policy` attached to it.
 */
function ownAccountGrantee(flow: Construct, principal: iam.IPrincipal): iam.IGrantable | undefined {
  if (!(principal instanceof iam.ArnPrincipal) || Token.isUnresolved(principal.arn) || principal instanceof iam.AccountPrincipal) return undefined;
  const kind = /^arn:[^:]+:iam::\d{12}:(role|user)\//.exec(principal.arn)?.[1];
  if (kind === undefined) return undefined;
  // one imported principal per ARN: a second grant reuses it (its construct id is the ARN's digest)
  const id = `OperatorPrincipal${createHash('sha256').update(principal.arn).digest('hex').slice(0, 16)}`;
  const existing = flow.node.tryFindChild(id);
  if (existing !== undefined) return existing as unknown as iam.IGrantable;
  return kind === 'role' ? iam.Role.fromRoleArn(flow, id, principal.arn, { mutable: true }) : iam.User.fromUserArn(flow, id, principal.arn);
}

/** The role of the flow's account that principals of `account` assume to read the outbox; `principal` added to its trust. */
function crossAccountOperatorRole(flow: Construct, owner: OperatorGrantOwner, account: string, principal: iam.IPrincipal): iam.Role {
  const id = crossAccountOperatorRoleId(account);
  const existing = flow.node.tryFindChild(id);
  if (existing instanceof iam.Role) {
    existing.assumeRolePolicy?.addStatements(new iam.PolicyStatement({ actions: ['sts:AssumeRole'], principals: [principal] }));
    return existing;
  }
  const role = new iam.Role(flow, id, {
    assumedBy: principal,
    roleName: PhysicalName.GENERATE_IF_NEEDED,
    description: `Operators of account ${account}: read the outbox of ${owner.kind} ${flow.node.path} (idempotent-event-flow replay), nothing else`,
  });
  new CfnOutput(role, 'RoleArn', {
    description: `The role operators of account ${account} assume to read the outbox of ${owner.kind} ${flow.node.path} (idempotent-event-flow replay; docs/CROSS-ACCOUNT.md)`,
    value: role.roleArn,
  });
  return role;
}

function grantOutboxRead(outboxTable: IOutboxTable, grantee: iam.IGrantable): iam.Grant {
  const grant = libraryGrant(ORIGIN, { grantee, actions: [...OUTBOX_OPERATOR_ACTIONS], resourceArns: [outboxTable.table.tableArn] });
  grantKeyViaService(ORIGIN, outboxTable.encryptionKey, grantee, 'dynamodb', ['kms:Decrypt']);
  return grant;
}
