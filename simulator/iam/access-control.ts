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
import type { AccessModel, EncryptionKey, TableKeys } from '../model/access-model';
import type { ResourceKey } from '../model/flow-model';
import { DIRECT_ROLE_CALL_ABSENT, FORWARDED_ROLE_CALL_ABSENT, SERVICE_KMS_REQUEST_ABSENT, SERVICE_PRINCIPAL_ABSENT, firstUnfilledKey, keysRead, type Asker } from './context-keys';
import { grantHint, granteeOf } from './grant-hints';
import type { IamNames } from './iam-names';
import type { PolicyAnswer, PolicyEngine } from './policy-engine';
import type { PolicyDocument } from './resolve-policy';
import type { AccessDenial, AccessOutcome, AccessRequest, Caller, GrantedPermission, IamFigures } from './access-types';
import { grantedPermissions, pathOr, resolveResourcePolicy, resolveRole, type ResolvedRole } from './resolved-roles';

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
    /** The flows' event topics and who publishes to them (the Pipes, the ordered fan-outs), for the hint of a refused publish. @default none known */
    private readonly eventTopics?: { readonly topics: ReadonlySet<ResourceKey>; readonly relays: ReadonlySet<ResourceKey> },
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
    if (request.caller.kind === 'principal') return [outsideIdentityPolicy(request.caller.arn), ...policies];
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
      'kms:ViaService': `${viaService}.${this.names.regionOf(key.key)}.amazonaws.com`,
      'kms:CallerAccount': this.callerAccount(request.caller),
      'kms:EncryptionContextKeys': Object.keys(encryptionContext),
    };
    for (const [name, value] of Object.entries(encryptionContext)) context[`kms:EncryptionContext:${name}`] = value;
    for (const action of kmsActions) requests.push({ caller: request.caller, action, resource: key.key, context, absent: SERVICE_KMS_REQUEST_ABSENT, forwardedBy: viaService });
    return requests;
  }

  /** The account a request's caller signs in: its role's, a service's resource's, or the outside principal's own. */
  private callerAccount(caller: Caller): string {
    if (caller.kind === 'principal') return caller.account;
    return this.names.accountOf(caller.kind === 'role' ? caller.via : caller.source);
  }

  /** The account a resource of the templates lives in (its stack's, in a run that spans environments). */
  public accountOf(key: ResourceKey): string {
    return this.names.accountOf(key);
  }

  /** The Region a resource of the templates lives in (its stack's, in a run that spans environments). */
  public regionOf(key: ResourceKey): string {
    return this.names.regionOf(key);
  }

  /**
   * Authorizes the `sns:Subscribe` that creates `subscription` of `queue` to `topic` when the queue is in another
   * account than the topic (a subscriber of another account: docs/CROSS-ACCOUNT.md). The subscription is created by
   * the queue's account, with its stack's deployment: CloudFormation under the CDK bootstrap's execution role of that
   * account and Region, whose identity policy is taken to allow everything (the bootstrap's default
   * `--cloudformation-execution-policies`, AdministratorAccess). Across accounts the topic's policy must allow that
   * account `sns:Subscribe` too, with `sns:Protocol` and `sns:Endpoint` as SNS sets them (/work/shared/AWS-FACTS.md
   * section 7, "Subscribers in other accounts and regions" and "Cross-account access"). Undefined (nothing asked) when
   * the queue is in the topic's account: the deployer's own policies decide there, as before.
   */
  public async authorizeSubscribe(subscription: ResourceKey, topic: ResourceKey, queue: ResourceKey): Promise<AccessOutcome | undefined> {
    const account = this.names.accountOf(subscription);
    if (account === this.names.accountOf(topic)) return undefined;
    const region = this.names.regionOf(subscription);
    const principal = `arn:aws:iam::${account}:role/cdk-hnb659fds-cfn-exec-role-${account}-${region}`;
    const action = 'sns:Subscribe';
    const resourceArn = this.arnOf(topic);
    const cacheKey = JSON.stringify(['deployer', subscription, action, resourceArn]);
    const resourcePolicy = this.resourcePolicy(topic);
    let outcome: AccessOutcome;
    if (resourcePolicy !== undefined && 'unresolved' in resourcePolicy) outcome = this.skip(resourcePolicy.unresolved);
    else {
      const identityPolicies = [{ name: `the CloudFormation execution role of ${account} (AdministratorAccess)`, policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] } as PolicyDocument }];
      const context: Record<string, string | readonly string[]> = {
        'aws:SecureTransport': 'true',
        'aws:RequestedRegion': this.names.regionOf(topic),
        'aws:ResourceAccount': this.names.accountOf(topic),
        'aws:PrincipalArn': principal,
        'aws:PrincipalAccount': account,
        'aws:PrincipalType': 'AssumedRole',
        'aws:PrincipalIsAWSService': 'false',
        'aws:ViaAWSService': 'false',
        'sns:Protocol': 'sqs',
        'sns:Endpoint': this.arnOf(queue),
      };
      const policyName = this.resourcePolicyName(topic);
      const read = keysRead([...identityPolicies, ...(resourcePolicy === undefined ? [] : [{ name: policyName, policy: resourcePolicy }])], action, { kind: 'role' });
      const unfilled = firstUnfilledKey(read, { values: context, absent: [...DIRECT_ROLE_CALL_ABSENT, 'lambda:sourcefunctionarn'] });
      if (unfilled !== undefined) outcome = this.skip(`${action} of ${this.describe(subscription)} is not evaluated: ${unfilled.policy} reads ${unfilled.key}, which the simulator does not fill (docs/SIMULATOR.md, "Request context keys")`);
      else {
        const answer = await this.engine.evaluate({ principal, action, resourceArn, resourceAccount: this.names.accountOf(topic), identityPolicies, ...(resourcePolicy === undefined ? {} : { resourcePolicy }), context });
        if (answer.error !== undefined) outcome = this.skip(`${action} on ${resourceArn} by ${principal} could not be evaluated: ${answer.error}`);
        else if (answer.decision === 'Allowed') outcome = { allowed: true, evaluated: true };
        else {
          const explicit = answer.denies[0];
          const topicPath = this.describe(topic);
          const queuePath = this.describe(queue);
          const reason =
            answer.decision === 'ExplicitlyDenied' && explicit !== undefined
              ? `an explicit Deny in ${explicit.policy} (statement ${explicit.statement}) matches it`
              : `the topic policy of ${topicPath} has no statement that allows account ${account} (arn:aws:iam::${account}:root) ${action} ` +
                `with sns:Protocol sqs and sns:Endpoint ${this.arnOf(queue)}: a subscription of a queue in another account is created by the queue's account, ` +
                "and needs the topic owner's grant as well as its own";
          this.denials.set(cacheKey, {
            principal: `the deployment of ${this.describe(subscription).split('/')[0]!} (${principal})`,
            caller: this.describe(subscription),
            action,
            resource: topicPath,
            resourceArn,
            reason,
            fix:
              `subscribe through the flow (new Subscriber(stack, id, { flow }) adds the topic grant for the queue ${queuePath}), ` +
              (this.offloads(topic) ? '' : `list ${account} in the flow's subscriberAccounts, `) +
              `or add to the topic policy an Allow of ${action} for arn:aws:iam::${account}:root conditioned on sns:Endpoint ${this.arnOf(queue)} (docs/CROSS-ACCOUNT.md)`,
            count: 0,
          });
          outcome = { allowed: false, evaluated: true, message: `User: ${principal} is not authorized to perform: ${action} on resource: ${resourceArn} because ${reason} (simulated IAM evaluation)` };
        }
      }
    }
    return this.count(cacheKey, outcome);
  }

  /** The run's figures. */
  public figures(): IamFigures {
    const unusedPermissions: Record<string, GrantedPermission[]> = {};
    const named = this.resourcesByArn();
    for (const roleKey of this.evaluatedRoles) {
      const role = this.roles.get(roleKey);
      if (role === undefined || 'unresolved' in role) continue;
      const unused = grantedPermissions(role)
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
      // each resource in its own stack's account and Region (../model/stack-environments.ts)
      'aws:RequestedRegion': this.names.regionOf(request.resource),
      'aws:ResourceAccount': this.names.accountOf(request.resource),
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
      context['aws:PrincipalAccount'] = this.names.accountOf(roleKey);
      context['aws:PrincipalType'] = 'AssumedRole';
      context['aws:PrincipalIsAWSService'] = 'false';
      context['aws:ViaAWSService'] = request.forwardedBy === undefined ? 'false' : 'true';
      for (const [key, value] of Object.entries(role.tags)) context[`aws:PrincipalTag/${key}`] = value;
      absent = request.forwardedBy === undefined ? DIRECT_ROLE_CALL_ABSENT : FORWARDED_ROLE_CALL_ABSENT;
      // Lambda sets lambda:SourceFunctionArn on what its functions' credentials sign; a pipe's or an operator's calls have none
      if (this.access.resources[caller.via]?.type === 'AWS::Lambda::Function') {
        context['lambda:SourceFunctionArn'] = this.names.arn('lambda', `function:${this.names.ref(caller.via) ?? caller.via}`, false, caller.via);
      } else absent = [...absent, 'lambda:sourcefunctionarn'];
      this.evaluatedRoles.add(roleKey);
    } else if (caller.kind === 'principal') {
      // a principal from outside the app: its identity policy is not known. In its own account that policy alone may
      // allow the request, so it is not evaluated; across accounts the resource's policy must allow it too (as AWS
      // evaluates), so it is taken to allow and the resource's policy decides (as for AssumeRole: ./assume-role.ts)
      if (caller.account === this.names.accountOf(request.resource)) {
        return this.skip(`${request.action} by ${caller.arn} is not evaluated: a principal outside the app, in the account of ${this.describe(request.resource)}, whose identity policy the simulator does not see`);
      }
      principal = caller.arn;
      identityPolicies = [outsideIdentityPolicy(caller.arn)];
      context['aws:PrincipalArn'] = caller.arn;
      context['aws:PrincipalAccount'] = caller.account;
      context['aws:PrincipalType'] = caller.arn.endsWith(':root') ? 'Account' : 'AssumedRole';
      context['aws:PrincipalIsAWSService'] = 'false';
      context['aws:ViaAWSService'] = request.forwardedBy === undefined ? 'false' : 'true';
      // its tags are not known: a condition on them is not evaluated (not in the absent keys)
      absent = [...(request.forwardedBy === undefined ? DIRECT_ROLE_CALL_ABSENT : FORWARDED_ROLE_CALL_ABSENT).filter((key) => key !== 'aws:principaltag/'), 'lambda:sourcefunctionarn'];
    } else {
      principal = caller.service;
      context['aws:SourceArn'] = this.arnOf(caller.source);
      context['aws:SourceAccount'] = this.names.accountOf(caller.source);
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
      // across accounts the engine asks both the identity policy and the resource (or key) policy to allow, as AWS
      // does (/work/shared/AWS-FACTS.md section 7, "Cross-account access")
      resourceAccount: this.names.accountOf(request.resource),
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
    const sessionPrincipal = role !== undefined ? `arn:aws:sts::${this.names.accountOf(roleKey!)}:assumed-role/${role.arn.split('/').pop()}/${this.names.ref(request.caller.kind === 'role' ? request.caller.via : '') ?? 'session'}` : principal;
    return { allowed: false, evaluated: true, message: `User: ${sessionPrincipal} is not authorized to perform: ${request.action} on resource: ${resourceArn} because ${denial.reason} (simulated IAM evaluation)` };
  }

  private isKey(key: ResourceKey): boolean {
    return this.access.resources[key]?.type === 'AWS::KMS::Key';
  }

  private skip(reason: string): AccessOutcome {
    this.notEvaluatedReasons.add(reason);
    return { allowed: true, evaluated: false };
  }

  /**
   * Whether the flow of `topic` offloads large events (a payload bucket beside its event topic): such a flow refuses
   * `subscriberAccounts` at synth, so a fix must not offer it.
   */
  private offloads(topic: ResourceKey): boolean {
    const topicPath = this.access.resources[topic]?.constructPath;
    if (topicPath === undefined) return false;
    const flowPath = topicPath.replace(/\/Resource$/, '').replace(/\/[^/]+$/, '');
    return Object.values(this.access.resources).some((resource) => resource.type === 'AWS::S3::Bucket' && resource.constructPath?.startsWith(`${flowPath}/PayloadBucket/`) === true);
  }

  private describe(key: ResourceKey): string {
    return pathOr(this.access.resources[key], key);
  }

  private denial(request: AccessRequest, resourceArn: string, answer: PolicyAnswer, role: ResolvedRole | undefined): AccessDenial {
    /** The service a KMS request came through, and the S3 ARN it decrypts for, from its context. */
    const keyRequestThrough = (kms: AccessRequest): { viaService?: string; s3Arn?: string } => {
      const via = kms.context?.['kms:ViaService'];
      const s3Arn = kms.context?.['kms:EncryptionContext:aws:s3:arn'];
      return { ...(typeof via === 'string' ? { viaService: via } : {}), ...(typeof s3Arn === 'string' ? { s3Arn } : {}) };
    };
    const { caller } = request;
    const resource = this.access.resources[request.resource];
    const resourcePath = this.describe(request.resource);
    const explicit = answer.denies[0];
    const isKey = resource?.type === 'AWS::KMS::Key';
    // a role of another account that its own policy allows: the resource's policy is what is missing (both must allow)
    const callerAccount = caller.kind === 'service' ? undefined : this.callerAccount(caller);
    const crossAccountFrom = callerAccount !== undefined && callerAccount !== this.names.accountOf(request.resource) && answer.identityAllows.length > 0 && answer.decision !== 'ExplicitlyDenied' && !answer.deniedByBoundary ? callerAccount : undefined;
    let reason: string;
    if (answer.decision === 'ExplicitlyDenied' && explicit !== undefined) reason = `an explicit Deny in ${explicit.policy} (statement ${explicit.statement}) matches it`;
    else if (answer.deniedByBoundary && role?.boundary !== undefined && 'name' in role.boundary) reason = `the permissions boundary ${role.boundary.name} of the role does not allow ${request.action}`;
    else if (caller.kind === 'service') reason = `the ${isKey ? 'key policy' : 'resource policy'} of ${resourcePath} does not allow ${caller.service} to ${request.action} for ${this.describe(caller.source)} (aws:SourceArn)`;
    else if (isKey && answer.identityAllows.length > 0) reason = `the key policy of ${resourcePath} neither allows the role nor delegates to the account's IAM policies`;
    else if (crossAccountFrom !== undefined) reason = `the resource policy of ${resourcePath} does not allow ${role?.path ?? (caller.kind === 'principal' ? caller.arn : this.describe(caller.kind === 'role' ? caller.via : request.resource))} of account ${crossAccountFrom}: across accounts both the identity policy and the resource policy must allow`;
    else reason = `no identity-based policy allows the ${request.action} action${isKey ? ` (the key policy of ${resourcePath} leaves it to IAM policies)` : ''}`;
    if (role !== undefined && role.unevaluatedManagedPolicies.length > 0) reason += `; the role's managed policies ${role.unevaluatedManagedPolicies.join(', ')} were not evaluated`;
    const callerPath = caller.kind === 'role' ? this.describe(caller.via) : caller.kind === 'principal' ? caller.arn : caller.service;
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
      ...(crossAccountFrom === undefined || isKey ? {} : { crossAccountFrom }),
      ...(crossAccountFrom === undefined || !isKey ? {} : { crossAccountKey: { account: crossAccountFrom, ...keyRequestThrough(request) } }),
      ...(caller.kind === 'role' && this.eventTopics?.topics.has(request.resource) === true && !this.eventTopics.relays.has(caller.via) ? { eventTopic: true } : {}),
    });
    return {
      principal: role?.path ?? (caller.kind === 'service' ? caller.service : callerPath),
      caller: caller.kind === 'service' ? this.describe(caller.source) : callerPath,
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
    if (role === undefined) {
      role = resolveRole(this.access, this.names, key);
      this.roles.set(key, role);
    }
    return role;
  }

  private resourcePolicy(key: ResourceKey): PolicyDocument | { readonly unresolved: string } | undefined {
    if (!this.resourcePolicies.has(key)) this.resourcePolicies.set(key, resolveResourcePolicy(this.access, this.names, key, this.describe(key)));
    return this.resourcePolicies.get(key);
  }
}

/** The identity policy of a principal outside the app, which the simulator does not see: taken to allow. */
function outsideIdentityPolicy(arn: string): { readonly name: string; readonly policy: PolicyDocument } {
  return { name: `the identity policy of ${arn} (outside the app: taken to allow)`, policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] } as PolicyDocument };
}

function askerOf(caller: Caller): Asker {
  return caller.kind === 'service' ? { kind: 'service', service: caller.service } : { kind: 'role' };
}

/** A resource pattern of a statement, named by construct path when it is one resource's ARN (or its indexes). */
function describeArn(pattern: string, byArn: ReadonlyMap<string, string>): string {
  const exact = byArn.get(pattern);
  if (exact !== undefined) return exact;
  const index = /^(.*)\/index\/(.+)$/.exec(pattern);
  const table = index === null ? undefined : byArn.get(index[1]!);
  return table !== undefined ? `index ${index![2]} of ${table}` : pattern;
}

function permissionKey(role: ResourceKey, permission: Omit<GrantedPermission, 'grantedBy'>): string {
  return JSON.stringify([role, permission.policy, permission.statement, permission.action, permission.resource]);
}
