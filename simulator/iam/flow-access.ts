/**
 * IAM for the local flow: builds the run's {@link AccessControl} and hands each simulated part the check it runs before
 * a request — the DynamoDB proxy of every execution environment, the SQS endpoint (the caller is the function whose
 * access key id signed the request), every event source mapping before it polls, every pipe before it reads its stream
 * or publishes, every subscription before SNS delivers to its queue. Each check answers undefined when the request is
 * allowed, else the message of the error AWS would answer with.
 */
import { createHash } from 'node:crypto';
import type { AccessModel } from '../model/access-model';
import type { LocalNames, ResourceKey } from '../model/flow-model';
import { AccessControl } from './access-control';
import type { AccessRequest, Caller } from './access-types';
import { FlowRequests } from './flow-requests';
import { IamNames } from './iam-names';
import type { PolicyEngine } from './policy-engine';
import { decideAssumeRole, principalOfAccessKey, type AssumeRoleDecision, type AssumingPrincipal } from './assume-role';

/** A table as the flow created it. */
export interface CreatedTable {
  readonly tableName: string;
  /** The local stream ARN (`.../stream/<label>`), when the table has a stream. */
  readonly streamArn?: string;
}

/** The checks of one run; see the module comment. */
export class FlowAccess {
  public readonly control: AccessControl;
  private readonly requests: FlowRequests;
  private readonly names: IamNames;
  /** The role of a served run's STS session, by its access key id (actAsSessions). */
  private sessionRoleOf?: (accessKeyId: string) => ResourceKey | undefined;
  private readonly functionsByAccessKey = new Map<string, ResourceKey>();

  public constructor(
    private readonly access: AccessModel,
    localNames: LocalNames,
    tables: ReadonlyMap<ResourceKey, CreatedTable>,
    private readonly engine: PolicyEngine,
    /** The flows' event topics and their relays (the Pipes, the ordered fan-outs): a refused publish there by another function is answered with the outbox. @default none known */
    eventTopics?: { readonly topics: ReadonlySet<ResourceKey>; readonly relays: ReadonlySet<ResourceKey> },
  ) {
    const tableNames = new Map<ResourceKey, { tableName: string; streamLabel?: string }>();
    const tableByName = new Map<string, ResourceKey>();
    for (const [key, table] of tables) {
      const streamLabel = table.streamArn?.split('/stream/')[1];
      tableNames.set(key, { tableName: table.tableName, ...(streamLabel === undefined ? {} : { streamLabel }) });
      tableByName.set(table.tableName, key);
    }
    this.names = new IamNames(localNames, access.resources, tableNames);
    this.control = new AccessControl(access, this.names, engine, eventTopics);
    this.requests = new FlowRequests(this.control, tableByName);
  }

  /** The `AWS_ACCESS_KEY_ID` of a function's environments: unique per function, so its SQS calls name it. */
  public accessKeyIdOf(functionKey: ResourceKey): string {
    const accessKeyId = `ASIASIM${createHash('sha256').update(functionKey).digest('hex').slice(0, 13).toUpperCase()}`;
    this.functionsByAccessKey.set(accessKeyId, functionKey);
    return accessKeyId;
  }

  /** The check of a function's DynamoDB requests (by its environments' proxies). */
  public dynamoDbCheck(functionKey: ResourceKey): (request: { readonly operation: string; readonly body: Buffer }) => Promise<string | undefined> {
    return (request) => this.check(this.requests.dynamoDb(functionKey, request.operation, request.body));
  }

  /**
   * Who signed a request with `accessKeyId`: a function (under its role), a served run's STS session (under its role,
   * see {@link actAsSessions}), or, for a served run's `<account>` / `<account>.<role name>` key (../aws/sts-endpoint.ts),
   * that role when it is a role of the app, else that principal from outside the app (AccessControl evaluates it across
   * accounts only: its identity policy is not known). Undefined for any other key (the served `simulator`): not evaluated.
   */
  private callerOf(accessKeyId: string | undefined): Caller | undefined {
    if (accessKeyId === undefined) return undefined;
    const role = this.functionsByAccessKey.get(accessKeyId) ?? this.sessionRoleOf?.(accessKeyId);
    if (role !== undefined) return { kind: 'role', via: role };
    const principal = principalOfAccessKey(accessKeyId);
    if (principal === undefined) return undefined;
    const ofApp = this.access.roles.find((modelled) => this.names.getAtt(modelled.key, 'Arn') === principal.arn);
    return ofApp === undefined ? { kind: 'principal', arn: principal.arn, account: principal.account } : { kind: 'role', via: ofApp.key };
  }

  /**
   * The check of the SQS endpoint: a request is made as its signer (a function's role, a session's role, a served key's
   * principal: see {@link callerOf}); one signed otherwise is not evaluated.
   */
  public sqsCheck(): (request: { readonly accessKeyId?: string; readonly action: string; readonly queue?: { readonly model: { readonly key: ResourceKey } } }) => Promise<string | undefined> {
    return async ({ accessKeyId, action, queue }) => {
      const caller = this.callerOf(accessKeyId);
      if (caller === undefined || queue === undefined) return undefined;
      return this.check(this.requests.sqs(caller, action, queue.model.key));
    };
  }

  /**
   * Lets the checks that name their caller by access key (the S3 endpoint's) take a served run's STS sessions too:
   * `roleOf` answers the role a session's access key id was issued for (simulator/run/served-sessions.ts).
   */
  public actAsSessions(roleOf: (accessKeyId: string) => ResourceKey | undefined): void {
    this.sessionRoleOf = roleOf;
  }

  /**
   * The check of the S3 endpoint: an object request signed by a function's access key is made under that function's
   * role, one signed by a served run's STS session (see {@link actAsSessions}) under the session's role, as AWS does
   * for an assumed role, one signed with a served run's `<account>.<role name>` key as that principal (see
   * {@link callerOf}: across accounts, the bucket and key policies must allow it); `bucket` is the bucket of the
   * templates the request names (undefined: a bucket the app does not have, not evaluated). A request signed otherwise
   * (the served `simulator` key) is not evaluated here.
   */
  public s3Check(): (request: {
    readonly accessKeyId?: string;
    readonly operation: string;
    readonly bucket?: { readonly key: ResourceKey; readonly bucketKeyEnabled?: boolean };
    readonly objectKey: string;
    readonly headers: Readonly<Record<string, string | undefined>>;
  }) => Promise<string | undefined> {
    return async ({ accessKeyId, operation, bucket, objectKey, headers }) => {
      const caller = this.callerOf(accessKeyId);
      if (caller === undefined || bucket === undefined) return undefined;
      return this.check(this.requests.s3Object(caller, operation, bucket.key, objectKey, headers, bucket.bucketKeyEnabled === true));
    };
  }

  /** The check of an event source mapping before it polls its queue. */
  public pollingCheck(functionKey: ResourceKey, queue: ResourceKey): () => Promise<string | undefined> {
    return () => this.check(this.requests.consume(functionKey, queue));
  }

  /**
   * The check of the SNS endpoint: a request signed by a function's access key is made under that function's role (a
   * Publish or PublishBatch as `sns:Publish`, with the topic key's use; a ListSubscriptionsByTopic as
   * `sns:ListSubscriptionsByTopic` on the topic). A request no function signed (an operator's) is not evaluated here.
   */
  public snsCheck(): (request: { readonly accessKeyId?: string; readonly action: string; readonly topic: ResourceKey }) => Promise<string | undefined> {
    return async ({ accessKeyId, action, topic }) => {
      const functionKey = accessKeyId === undefined ? undefined : this.functionsByAccessKey.get(accessKeyId);
      if (functionKey === undefined) return undefined;
      return this.check(action === 'Publish' || action === 'PublishBatch' ? this.requests.publish(functionKey, topic) : this.requests.topicAction(functionKey, action, topic));
    };
  }

  /** The check of a pipe before it reads its source table's stream. */
  public streamReadCheck(pipe: ResourceKey, table: ResourceKey): () => Promise<string | undefined> {
    const streamArn = this.names.streamArn(table) ?? `${this.names.tableArn(table) ?? table}/stream/*`;
    return () => this.check(this.requests.readStream(pipe, table, streamArn));
  }

  /** The check of a pipe before it publishes to its topic, decided now and synchronous from then on. */
  public async publishCheck(pipe: ResourceKey, topic: ResourceKey): Promise<() => string | undefined> {
    const check = await this.control.prepare(this.requests.publish(pipe, topic));
    return () => {
      const outcome = check();
      return outcome.allowed ? undefined : (outcome.message ?? 'access denied');
    };
  }

  /**
   * The check of a pipe before it sends to a queue (and uses the queue's key): its dead-letter queue, or its target queue
   * (the ordered relay's FIFO queue); decided now and synchronous from then on.
   */
  public async pipeSendCheck(pipe: ResourceKey, queue: ResourceKey): Promise<() => string | undefined> {
    const check = await this.control.prepare(this.requests.sqs({ kind: 'role', via: pipe }, 'SendMessage', queue));
    return () => {
      const outcome = check();
      return outcome.allowed ? undefined : (outcome.message ?? 'access denied');
    };
  }

  /**
   * The check of SNS before it delivers a message of `topic` to `queue` (a subscription's queue or its dead-letter
   * queue), decided now and synchronous from then on (the topic publishes synchronously).
   */
  public async deliveryCheck(topic: ResourceKey, queue: ResourceKey): Promise<() => string | undefined> {
    const check = await this.control.prepare(this.requests.deliver(topic, queue));
    return () => {
      const outcome = check();
      return outcome.allowed ? undefined : (outcome.message ?? 'access denied');
    };
  }

  /**
   * Whether `subscription` (of `queue` to `topic`) can be created: undefined when it can, else the error the
   * subscription's stack would fail on. Asked only across accounts (AccessControl.authorizeSubscribe).
   */
  public async subscribeCheck(subscription: ResourceKey, topic: ResourceKey, queue: ResourceKey): Promise<string | undefined> {
    const outcome = await this.control.authorizeSubscribe(subscription, topic, queue);
    return outcome === undefined || outcome.allowed ? undefined : (outcome.message ?? 'access denied');
  }

  /** Whether `caller` may assume the role `roleArn` of the templates (a served run's STS: ./assume-role.ts). */
  public assumeRole(caller: AssumingPrincipal, roleArn: string): Promise<AssumeRoleDecision> {
    return decideAssumeRole(this.access, this.names, this.engine, caller, roleArn);
  }

  private async check(requests: readonly AccessRequest[]): Promise<string | undefined> {
    if (requests.length === 0) return undefined;
    const outcome = await this.control.authorizeAll(requests);
    return outcome.allowed ? undefined : (outcome.message ?? 'access denied');
  }
}
