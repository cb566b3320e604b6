/**
 * IAM for a run: authorizes each request the simulated flow makes the way AWS would, from the synthesized templates
 * (see ../model/access-model.ts), with the policy engine (./policy-engine.ts), and keeps the books: requests
 * authorized, denied and not evaluated, each denial with the principal, action, resource, decisive reason and the grant
 * that would fix it, and which granted permissions no request used (least privilege, measured).
 *
 * Requests are answered from a cache: the same principal, action and resource, with the same values of the context keys
 * its policies read, always get the same answer. A condition on a key the simulator does not fill makes the request
 * "not evaluated" (./context-keys.ts); a role's permissions boundary is evaluated with its identity policies.
 */
import type { AccessModel, EncryptionKey, TableKeys, TemplatePolicy } from '../model/access-model';
import type { ResourceKey } from '../model/flow-model';
import { resolveValue, UnresolvableValueError } from '../model/intrinsics';
import { DIRECT_ROLE_CALL_ABSENT, FORWARDED_ROLE_CALL_ABSENT, SERVICE_KMS_REQUEST_ABSENT, SERVICE_PRINCIPAL_ABSENT, firstUnfilledKey, keysRead, type Asker } from './context-keys';
import { grantHint, granteeOf } from './grant-hints';
import type { IamNames } from './iam-names';
import type { PolicyAnswer, PolicyEngine } from './policy-engine';
import { asList, resolvePolicy, statementId, type PolicyDocument } from './resolve-policy';

/** Who makes a request: a function or pipe under its execution role, or an AWS service principal on a resource's behalf. */
export type Caller =
  | { readonly kind: 'role'; /** the function or pipe (under its execution role), or a role itself */ readonly via: ResourceKey }
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
  readonly statement: string;
  readonly action: string;
  readonly resource: string;
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

/** Services whose requests the simulator makes, so whose unused permissions it can judge. */
const JUDGED_SERVICES = new Set(['dynamodb', 'sqs', 'sns', 'kms']);

/** The key policy CloudFormation gives a key without `KeyPolicy`: the account's IAM policies decide. */
function defaultKeyPolicy(accountId: string): PolicyDocument {
  return { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${accountId}:root` }, Action: 'kms:*', Resource: '*' }] };
}

interface ResolvedRole {
  readonly path: string;
  readonly arn: string;
  readonly policies: readonly { readonly name: string; readonly policy: PolicyDocument }[];
  readonly unevaluatedManagedPolicies: readonly string[];
  /** The permissions boundary, resolved, or the ARN of one from outside the app. */
  readonly boundary?: { readonly name: string; readonly policy: PolicyDocument } | { readonly external: string };
  readonly tags: Readonly<Record<string, string>>;
}

function pathOr(resource: { readonly constructPath?: string; readonly key: ResourceKey } | undefined, key: ResourceKey): string {
  let path = resource?.constructPath ?? key;
  // an L2 construct's CloudFormation resource is its `Resource` child (a function's, two levels down)
  while (path.endsWith('/Resource')) path = path.slice(0, -'/Resource'.length);
  return path;
}

/** Authorizes the requests of one run; see the module comment. */
export class AccessControl {
  private readonly roles = new Map<ResourceKey, ResolvedRole | { readonly unresolved: string }>();
  private readonly resourcePolicies = new Map<ResourceKey, PolicyDocument | { readonly unresolved: string } | undefined>();
  private readonly cache = new Map<string, Promise<AccessOutcome>>();
  private readonly keysReadCache = new Map<string, ReadonlySet<string> | 'unresolved'>();
  private readonly denials = new Map<string, AccessDenial>();
  private readonly used = new Set<string>();
  private readonly evaluatedRoles = new Set<ResourceKey>();
  private readonly notEvaluatedReasons = new Set<string>();
  private requests = 0;
  private denied = 0;
  private notEvaluated = 0;

  public constructor(
    private readonly access: AccessModel,
    private readonly names: IamNames,
    private readonly engine: PolicyEngine,
  ) {
    for (const line of access.notEvaluated) this.notEvaluatedReasons.add(line);
  }

  /** The ARN of a resource of the templates. */
  public arnOf(key: ResourceKey): string {
    return this.names.getAtt(key, 'Arn') ?? this.names.getAtt(key, 'TopicArn') ?? this.names.ref(key) ?? key;
  }

  /** The run's account id. */
  public get accountId(): string {
    return this.names.accountId;
  }

  /** The `Ref` of a resource of the templates (a table's name). */
  public refOf(key: ResourceKey): string {
    return this.names.ref(key) ?? key;
  }

  /** The key attributes of a table (for `dynamodb:LeadingKeys`), when the templates define them. */
  public tableKeysOf(key: ResourceKey): TableKeys | undefined {
    return this.access.tableKeys?.[key];
  }

  /** The customer-managed key that encrypts a table, queue or topic, if any. */
  public encryptionKeyOf(key: ResourceKey): EncryptionKey | undefined {
    return this.access.encryption[key];
  }

  /** Authorizes a request (answers from the cache when the same one was asked before) and counts it. */
  public async authorize(request: AccessRequest): Promise<AccessOutcome> {
    const { cacheKey, outcome } = await this.decide(request);
    return this.count(cacheKey, outcome);
  }

  /** Authorizes several requests that one call needs (a transaction's actions, an action and its key); the first denial wins. */
  public async authorizeAll(requests: readonly AccessRequest[]): Promise<AccessOutcome> {
    let outcome: AccessOutcome = { allowed: true, evaluated: true };
    for (const request of requests) {
      const next = await this.authorize(request);
      if (!next.allowed) return next;
      if (!next.evaluated) outcome = next;
    }
    return outcome;
  }

  /**
   * Decides `requests` now, without counting them, and returns a synchronous check that counts and answers them as
   * {@link authorizeAll} would, each time it is called: for the parts that work synchronously (SNS deliveries), whose
   * requests never change.
   */
  public async prepare(requests: readonly AccessRequest[]): Promise<() => AccessOutcome> {
    const decided: { readonly cacheKey: string; readonly outcome: AccessOutcome }[] = [];
    for (const request of requests) decided.push(await this.decide(request));
    return () => {
      let outcome: AccessOutcome = { allowed: true, evaluated: true };
      for (const { cacheKey, outcome: next } of decided) {
        this.count(cacheKey, next);
        if (!next.allowed) return next;
        if (!next.evaluated) outcome = next;
      }
      return outcome;
    };
  }

  private async decide(request: AccessRequest): Promise<{ readonly cacheKey: string; readonly outcome: AccessOutcome }> {
    const resourceArn = request.resourceArn ?? this.arnOf(request.resource);
    const cacheKey = JSON.stringify([request.caller, request.action, resourceArn, this.contextThatMatters(request), request.forwardedBy ?? null]);
    let pending = this.cache.get(cacheKey);
    if (pending === undefined) {
      pending = this.evaluate(request, resourceArn, cacheKey);
      this.cache.set(cacheKey, pending);
    }
    return { cacheKey, outcome: await pending };
  }

  /**
   * The request's own context keys that a policy it is evaluated with reads (all of them when its policies cannot be
   * resolved): two requests that differ only in keys no policy reads get the same answer, so share a cache entry.
   */
  private contextThatMatters(request: AccessRequest): Record<string, string | readonly string[] | null> {
    const context = request.context ?? {};
    const readKey = JSON.stringify([request.caller, request.action, request.resource]);
    let read = this.keysReadCache.get(readKey);
    if (read === undefined) {
      const policies = this.policiesOf(request);
      read = policies === undefined ? 'unresolved' : new Set(keysRead(policies, request.action, askerOf(request.caller)).map(({ key }) => key.toLowerCase()));
      this.keysReadCache.set(readKey, read);
    }
    if (read === 'unresolved') return { ...context };
    const relevant: Record<string, string | readonly string[] | null> = {};
    for (const [key, value] of Object.entries(context)) if (read.has(key.toLowerCase())) relevant[key] = value;
    // whether a key read is present matters as much as its value
    for (const key of read) if (!Object.keys(context).some((name) => name.toLowerCase() === key)) relevant[key] = null;
    return relevant;
  }

  /** The policies a request is evaluated with (identity, boundary, resource), when they resolve. */
  private policiesOf(request: AccessRequest): { readonly name: string; readonly policy: PolicyDocument }[] | undefined {
    const resourcePolicy = this.resourcePolicy(request.resource);
    if (resourcePolicy !== undefined && 'unresolved' in resourcePolicy) return undefined;
    const policies: { name: string; policy: PolicyDocument }[] = resourcePolicy === undefined ? [] : [{ name: this.resourcePolicyName(request.resource), policy: resourcePolicy }];
    if (request.caller.kind === 'service') return policies;
    const executionRole = this.access.executionRoles[request.caller.via] ?? (this.access.resources[request.caller.via]?.type === 'AWS::IAM::Role' ? { role: request.caller.via } : undefined);
    if (executionRole === undefined || 'external' in executionRole) return policies;
    const role = this.role(executionRole.role);
    if ('unresolved' in role) return undefined;
    return [...role.policies, ...(role.boundary !== undefined && 'policy' in role.boundary ? [role.boundary] : []), ...policies];
  }

  private resourcePolicyName(key: ResourceKey): string {
    return `${this.describe(key)} ${this.isKey(key) ? 'key' : 'resource'} policy`;
  }

  private count(cacheKey: string, outcome: AccessOutcome): AccessOutcome {
    this.requests += 1;
    if (!outcome.evaluated) this.notEvaluated += 1;
    else if (!outcome.allowed) {
      this.denied += 1;
      this.denials.get(cacheKey)!.count += 1;
    }
    return outcome;
  }

  /**
   * The request and, when `resource` is encrypted with a customer-managed key, the KMS requests the service makes with
   * the caller's permissions (`kms:ViaService` the service's endpoint, the encryption context it sets, `aws:ViaAWSService`).
   */
  public withKey(request: AccessRequest, kmsActions: readonly string[], viaService: string, encryptionContext: Readonly<Record<string, string>>): AccessRequest[] {
    const key = this.access.encryption[request.resource];
    const requests: AccessRequest[] = [request];
    if (key === undefined) return requests;
    if ('external' in key) {
      this.notEvaluatedReasons.add(`${pathOr(this.access.resources[request.resource], request.resource)} is encrypted with ${key.external}, a key outside the app: its key policy is not evaluated`);
      return requests;
    }
    const context: Record<string, string | readonly string[]> = {
      'kms:ViaService': `${viaService}.${this.names.region}.amazonaws.com`,
      'kms:CallerAccount': this.names.accountId,
      'kms:EncryptionContextKeys': Object.keys(encryptionContext),
    };
    for (const [name, value] of Object.entries(encryptionContext)) context[`kms:EncryptionContext:${name}`] = value;
    for (const action of kmsActions) requests.push({ caller: request.caller, action, resource: key.key, context, absent: SERVICE_KMS_REQUEST_ABSENT, forwardedBy: viaService });
    return requests;
  }

  /** The run's figures. */
  public figures(): IamFigures {
    const unusedPermissions: Record<string, GrantedPermission[]> = {};
    const named = this.resourcesByArn();
    for (const roleKey of this.evaluatedRoles) {
      const role = this.roles.get(roleKey);
      if (role === undefined || 'unresolved' in role) continue;
      const unused = this.grantedPermissions(role)
        .filter((permission) => !this.used.has(permissionKey(roleKey, permission)))
        .map((permission) => ({ ...permission, resource: describeArn(permission.resource, named) }));
      if (unused.length > 0) unusedPermissions[role.path] = unused;
    }
    return {
      requests: this.requests,
      authorized: this.requests - this.denied - this.notEvaluated,
      denied: this.denied,
      notEvaluated: this.notEvaluated,
      rolesEvaluated: this.evaluatedRoles.size,
      denials: [...this.denials.values()].filter((denial) => denial.count > 0),
      unusedPermissions,
      notEvaluatedReasons: [...this.notEvaluatedReasons],
    };
  }

  /** Each template resource by its ARN, for naming resources in the report. */
  private resourcesByArn(): Map<string, string> {
    const byArn = new Map<string, string>();
    for (const key of Object.keys(this.access.resources)) {
      const arn = this.names.getAtt(key, 'Arn');
      if (arn !== undefined) byArn.set(arn, this.describe(key));
      const stream = this.names.getAtt(key, 'StreamArn');
      if (stream !== undefined) byArn.set(stream, `the stream of ${this.describe(key)}`);
    }
    return byArn;
  }

  private async evaluate(request: AccessRequest, resourceArn: string, cacheKey: string): Promise<AccessOutcome> {
    const { caller } = request;
    let principal: string;
    let identityPolicies: { name: string; policy: PolicyDocument }[] = [];
    let roleKey: ResourceKey | undefined;
    let role: ResolvedRole | undefined;
    const context: Record<string, string | readonly string[]> = {
      'aws:SecureTransport': 'true',
      'aws:RequestedRegion': this.names.region,
      'aws:ResourceAccount': this.names.accountId,
    };
    let absent: readonly string[];
    if (caller.kind === 'role') {
      const executionRole = this.access.executionRoles[caller.via] ?? (this.access.resources[caller.via]?.type === 'AWS::IAM::Role' ? { role: caller.via } : undefined);
      if (executionRole === undefined || 'external' in executionRole) return this.skip(`${this.describe(caller.via)} runs under a role from outside the app: its requests are not evaluated`);
      roleKey = executionRole.role;
      const resolved = this.role(roleKey);
      if ('unresolved' in resolved) return this.skip(resolved.unresolved);
      role = resolved;
      principal = role.arn;
      identityPolicies = [...role.policies];
      context['aws:PrincipalArn'] = role.arn;
      context['aws:PrincipalAccount'] = this.names.accountId;
      context['aws:PrincipalType'] = 'AssumedRole';
      context['aws:PrincipalIsAWSService'] = 'false';
      context['aws:ViaAWSService'] = request.forwardedBy === undefined ? 'false' : 'true';
      for (const [key, value] of Object.entries(role.tags)) context[`aws:PrincipalTag/${key}`] = value;
      absent = request.forwardedBy === undefined ? DIRECT_ROLE_CALL_ABSENT : FORWARDED_ROLE_CALL_ABSENT;
      // Lambda sets lambda:SourceFunctionArn on what its functions' credentials sign; a pipe's or an operator's calls have none
      if (this.access.resources[caller.via]?.type === 'AWS::Lambda::Function') {
        context['lambda:SourceFunctionArn'] = this.names.arn('lambda', `function:${this.names.ref(caller.via) ?? caller.via}`);
      } else absent = [...absent, 'lambda:sourcefunctionarn'];
      this.evaluatedRoles.add(roleKey);
    } else {
      principal = caller.service;
      context['aws:SourceArn'] = this.arnOf(caller.source);
      context['aws:SourceAccount'] = this.names.accountId;
      context['aws:PrincipalServiceName'] = caller.service;
      context['aws:PrincipalIsAWSService'] = 'true';
      absent = SERVICE_PRINCIPAL_ABSENT;
    }
    Object.assign(context, request.context);
    const resourcePolicy = this.resourcePolicy(request.resource);
    if (resourcePolicy !== undefined && 'unresolved' in resourcePolicy) return this.skip(resourcePolicy.unresolved);
    const boundary = role?.boundary !== undefined && 'policy' in role.boundary ? role.boundary : undefined;

    // a condition on a key the simulator does not fill: no verdict (context-keys.ts)
    const evaluatedPolicies = [...identityPolicies, ...(boundary === undefined ? [] : [boundary]), ...(resourcePolicy === undefined ? [] : [{ name: this.resourcePolicyName(request.resource), policy: resourcePolicy }])];
    const read = keysRead(evaluatedPolicies, request.action, askerOf(caller));
    const who = role?.path ?? principal;
    const unfilled = firstUnfilledKey(read, { values: context, absent: [...absent, ...(request.absent ?? [])] });
    if (unfilled !== undefined) {
      return this.skip(`${request.action} by ${who} is not evaluated: ${unfilled.policy} reads ${unfilled.key}, which the simulator does not fill (docs/SIMULATOR.md, "Request context keys")`);
    }

    const answer = await this.engine.evaluate({
      principal,
      action: request.action,
      resourceArn,
      resourceAccount: this.names.accountId,
      identityPolicies,
      ...(resourcePolicy === undefined ? {} : { resourcePolicy }),
      ...(boundary === undefined ? {} : { permissionsBoundary: boundary }),
      context,
    });
    if (answer.error !== undefined) return this.skip(`${request.action} on ${resourceArn} by ${principal} could not be evaluated: ${answer.error}`);
    const ignored = new Set(answer.ignoredContextKeys.map((key) => key.toLowerCase()));
    const dropped = read.find(({ key }) => ignored.has(key.toLowerCase()));
    if (dropped !== undefined) {
      return this.skip(`${request.action} by ${who} is not evaluated: ${dropped.policy} reads ${dropped.key}, which the policy engine does not take for ${request.action}`);
    }
    if (answer.decision === 'Allowed') {
      if (role?.boundary !== undefined && 'external' in role.boundary) {
        return this.skip(`the permissions boundary ${role.boundary.external} of ${role.path} is not a policy of the app: requests its identity policies allow are not evaluated`);
      }
      if (roleKey !== undefined) for (const statement of answer.identityAllows) for (const action of statement.actions) for (const resource of statement.resources) this.used.add(permissionKey(roleKey, { policy: statement.policy, statement: statement.statement, action, resource }));
      return { allowed: true, evaluated: true };
    }
    const denial = this.denial(request, resourceArn, answer, role);
    this.denials.set(cacheKey, denial);
    const sessionPrincipal = role !== undefined ? `arn:aws:sts::${this.names.accountId}:assumed-role/${role.arn.split('/').pop()}/${this.names.ref(request.caller.kind === 'role' ? request.caller.via : '') ?? 'session'}` : principal;
    return { allowed: false, evaluated: true, message: `User: ${sessionPrincipal} is not authorized to perform: ${request.action} on resource: ${resourceArn} because ${denial.reason} (simulated IAM evaluation)` };
  }

  private isKey(key: ResourceKey): boolean {
    return this.access.resources[key]?.type === 'AWS::KMS::Key';
  }

  private skip(reason: string): AccessOutcome {
    this.notEvaluatedReasons.add(reason);
    return { allowed: true, evaluated: false };
  }

  private describe(key: ResourceKey): string {
    return pathOr(this.access.resources[key], key);
  }

  private denial(request: AccessRequest, resourceArn: string, answer: PolicyAnswer, role: ResolvedRole | undefined): AccessDenial {
    const { caller } = request;
    const resource = this.access.resources[request.resource];
    const resourcePath = this.describe(request.resource);
    const explicit = answer.denies[0];
    const isKey = resource?.type === 'AWS::KMS::Key';
    let reason: string;
    if (answer.decision === 'ExplicitlyDenied' && explicit !== undefined) reason = `an explicit Deny in ${explicit.policy} (statement ${explicit.statement}) matches it`;
    else if (answer.deniedByBoundary && role?.boundary !== undefined && 'name' in role.boundary) reason = `the permissions boundary ${role.boundary.name} of the role does not allow ${request.action}`;
    else if (caller.kind === 'service') reason = `the ${isKey ? 'key policy' : 'resource policy'} of ${resourcePath} does not allow ${caller.service} to ${request.action} for ${this.describe(caller.source)} (aws:SourceArn)`;
    else if (isKey && answer.identityAllows.length > 0) reason = `the key policy of ${resourcePath} neither allows the role nor delegates to the account's IAM policies`;
    else reason = `no identity-based policy allows the ${request.action} action${isKey ? ` (the key policy of ${resourcePath} leaves it to IAM policies)` : ''}`;
    if (role !== undefined && role.unevaluatedManagedPolicies.length > 0) reason += `; the role's managed policies ${role.unevaluatedManagedPolicies.join(', ')} were not evaluated`;
    const callerPath = caller.kind === 'role' ? this.describe(caller.via) : caller.service;
    const fix = grantHint({
      action: request.action,
      resourceType: resource?.type ?? 'unknown',
      resourcePath,
      callerPath,
      ...(caller.kind === 'role' ? { grantee: granteeOf(callerPath, Object.values(this.access.resources)) } : {}),
      service: caller.kind === 'service',
      ...(caller.kind === 'service' ? { sourcePath: this.describe(caller.source) } : {}),
      ...(answer.decision === 'ExplicitlyDenied' && explicit !== undefined ? { explicitDeny: `${explicit.policy}, statement ${explicit.statement}` } : {}),
      ...(answer.deniedByBoundary && role?.boundary !== undefined && 'name' in role.boundary ? { permissionsBoundary: role.boundary.name } : {}),
    });
    return {
      principal: role?.path ?? (caller.kind === 'service' ? caller.service : callerPath),
      caller: caller.kind === 'role' ? callerPath : this.describe(caller.source),
      action: request.action,
      resource: resourcePath,
      resourceArn,
      reason,
      fix,
      count: 0,
    };
  }

  private role(key: ResourceKey): ResolvedRole | { readonly unresolved: string } {
    let role = this.roles.get(key);
    if (role !== undefined) return role;
    const model = this.access.roles.find((candidate) => candidate.key === key);
    const path = pathOr(model, key);
    if (model === undefined) role = { unresolved: `role ${key} is not in the templates` };
    else {
      try {
        const boundary = model.permissionsBoundary;
        role = {
          path,
          arn: this.names.getAtt(key, 'Arn')!,
          policies: model.policies.map((policy) => ({ name: policy.name, policy: resolvePolicy(policy, this.names) })),
          unevaluatedManagedPolicies: model.unevaluatedManagedPolicies,
          ...(boundary === undefined ? {} : { boundary: 'external' in boundary ? boundary : { name: boundary.policy.name, policy: resolvePolicy(boundary.policy, this.names) } }),
          tags: Object.fromEntries(Object.entries(model.tags ?? {}).map(([tag, value]) => [tag, resolveValue(value, model.stackName, this.names, `tag ${tag} of role ${path}`)])),
        };
      } catch (error) {
        if (!(error instanceof UnresolvableValueError) && !(error instanceof Error)) throw error;
        role = { unresolved: `the policies of role ${path} are not evaluated: ${error.message}` };
      }
    }
    this.roles.set(key, role);
    return role;
  }

  private resourcePolicy(key: ResourceKey): PolicyDocument | { readonly unresolved: string } | undefined {
    if (this.resourcePolicies.has(key)) return this.resourcePolicies.get(key);
    const keyModel = this.access.keys.find((candidate) => candidate.key === key);
    const policies: readonly TemplatePolicy[] = keyModel !== undefined ? [keyModel.keyPolicy] : (this.access.resourcePolicies[key] ?? []);
    let resolved: PolicyDocument | { readonly unresolved: string } | undefined;
    try {
      const documents = policies.filter((policy) => policy.document !== undefined).map((policy) => resolvePolicy(policy, this.names));
      if (keyModel !== undefined && documents.length === 0) resolved = defaultKeyPolicy(this.names.accountId);
      else if (documents.length > 0) resolved = { Version: '2012-10-17', Statement: documents.flatMap((document) => document.Statement) };
    } catch (error) {
      resolved = { unresolved: `the policy of ${this.describe(key)} is not evaluated: ${error instanceof Error ? error.message : String(error)}` };
    }
    this.resourcePolicies.set(key, resolved);
    return resolved;
  }

  /** The dynamodb/sqs/sns/kms permissions a role's Allow statements grant. */
  private grantedPermissions(role: ResolvedRole): GrantedPermission[] {
    return role.policies.flatMap(({ name, policy }) =>
      policy.Statement.flatMap((statement, index) => {
        if (statement.Effect !== 'Allow' || statement.Action === undefined || statement.Resource === undefined) return [];
        const id = statementId(statement, index);
        return asList(statement.Action)
          .filter((action) => JUDGED_SERVICES.has(action.split(':')[0]!.toLowerCase()))
          .flatMap((action) => asList(statement.Resource).map((resource) => ({ policy: name, statement: id, action, resource })));
      }),
    );
  }
}

function askerOf(caller: Caller): Asker {
  return caller.kind === 'role' ? { kind: 'role' } : { kind: 'service', service: caller.service };
}

/** A resource pattern of a statement, named by construct path when it is one resource's ARN (or its indexes). */
function describeArn(pattern: string, byArn: ReadonlyMap<string, string>): string {
  const exact = byArn.get(pattern);
  if (exact !== undefined) return exact;
  const index = /^(.*)\/index\/(.+)$/.exec(pattern);
  const table = index === null ? undefined : byArn.get(index[1]!);
  return table !== undefined ? `index ${index![2]} of ${table}` : pattern;
}

function permissionKey(role: ResourceKey, permission: GrantedPermission): string {
  return JSON.stringify([role, permission.policy, permission.statement, permission.action, permission.resource]);
}
