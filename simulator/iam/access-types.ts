/** What IAM of a run takes (a request and its caller) and gives (an outcome, a denial, the run's figures). */
import type { ResourceKey } from '../model/flow-model';

/**
 * Who makes a request: a function or pipe under its execution role, an AWS service principal on a resource's behalf,
 * or a principal from outside the app (an operator's own role or account root, named by a served run's access key).
 */
export type Caller =
  | { readonly kind: 'role'; /** the function or pipe (under its execution role), or a role itself */ readonly via: ResourceKey }
  | {
      readonly kind: 'principal';
      /** `arn:aws:iam::<account>:role/<name>` or `arn:aws:iam::<account>:root` */
      readonly arn: string;
      readonly account: string;
    }
  | {
      readonly kind: 'service';
      /** e.g. `sns.amazonaws.com` */
      readonly service: string;
      /** The resource the service acts for (its ARN is the request's `aws:SourceArn`), e.g. the topic. */
      readonly source: ResourceKey;
    };

/** One request to authorize. */
export interface AccessRequest {
  readonly caller: Caller;
  readonly action: string;
  /** The resource of the templates it is made on (a table, queue, topic or key). */
  readonly resource: ResourceKey;
  /** The ARN when it is not the resource's own (an index or stream of a table). @default the resource's ARN */
  readonly resourceArn?: string;
  /** Request context keys beyond those every request carries. @default none */
  readonly context?: Readonly<Record<string, string | readonly string[]>>;
  /** Lower-case keys (or families ending in `/` or `:`) AWS does not set for this request, beyond those of its kind of caller (./context-keys.ts). @default none */
  readonly absent?: readonly string[];
  /** The service that makes the request with the caller's credentials (`dynamodb` calling KMS for it), when it is forwarded. @default a direct call */
  readonly forwardedBy?: string;
}

/** A denied request, as the report and the violation show it. */
export interface AccessDenial {
  /** Construct path of the role (or the service principal). */
  readonly principal: string;
  /** Construct path of the function or pipe that made the request, or of the resource a service acted for. */
  readonly caller: string;
  readonly action: string;
  /** Construct path of the resource, and its ARN. */
  readonly resource: string;
  readonly resourceArn: string;
  /** The decisive reason: no statement allows it, an explicit deny, or the key policy. */
  readonly reason: string;
  /** The CDK grant that would fix it. */
  readonly fix: string;
  /** How many requests were denied for this. */
  count: number;
}

/** What became of one request. */
export interface AccessOutcome {
  readonly allowed: boolean;
  /** False when IAM could not judge it (an imported role, a key from outside the app, an engine error): then allowed. */
  readonly evaluated: boolean;
  /** The error message AWS would answer with, when denied. */
  readonly message?: string;
}

/** A permission an identity policy grants: one action pattern on one resource pattern of one statement. */
export interface GrantedPermission {
  readonly policy: string;
  /** The statement's Sid, else its 1-based position in the policy. */
  readonly statement: string;
  readonly action: string;
  readonly resource: string;
  /**
   * Who added the statement, read from its Sid (lambda/contract/statement-ids.ts): `idempotent-event-flow's <grant
   * method>` for a grant method of the library (one the user called, e.g. `grantAppendEvents`, or one a construct called
   * for its own wiring), `idempotent-event-flow's <construct>` for a construct's own wiring, else `you`.
   */
  readonly grantedBy: string;
}

/** The IAM figures of a run. */
export interface IamFigures {
  readonly requests: number;
  readonly authorized: number;
  readonly denied: number;
  readonly notEvaluated: number;
  /** Roles whose requests were evaluated. */
  readonly rolesEvaluated: number;
  readonly denials: readonly AccessDenial[];
  /** Per role (construct path): the permissions it was granted for dynamodb, sqs, sns and kms that no request used. */
  readonly unusedPermissions: Readonly<Record<string, readonly GrantedPermission[]>>;
  /** Why some requests or policies were not evaluated, one line each. */
  readonly notEvaluatedReasons: readonly string[];
}
