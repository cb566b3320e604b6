/**
 * The grant that would fix a denied request, in CDK terms: the call a CDK user writes in the stack (for example
 * `ledgerTable.grant(billingFunction, 'dynamodb:UpdateItem')`), naming the constructs by their ids.
 */

/** What a hint is about. */
export interface HintSubject {
  /** The action that was denied, e.g. `dynamodb:UpdateItem`. */
  readonly action: string;
  /** The CloudFormation type of the resource it was denied on. */
  readonly resourceType: string;
  /** The construct path of that resource. */
  readonly resourcePath: string;
  /** The construct path of what made the request (a function, a pipe), or the service principal (`sns.amazonaws.com`). */
  readonly callerPath: string;
  /** Whether the caller is a service principal (then the resource's own policy must allow it). */
  readonly service: boolean;
  /** For a service principal: the ARN its requests carry as `aws:SourceArn`, and what it is. */
  readonly sourcePath?: string;
  /** For a request denied by an explicit Deny: which policy and statement. */
  readonly explicitDeny?: string;
  /** For a request the role's permissions boundary does not allow: the boundary policy. */
  readonly permissionsBoundary?: string;
  /** How the grant names the caller (see {@link granteeOf}). @default the variable name of `callerPath` */
  readonly grantee?: Grantee;
  /**
   * For a role of another account than the resource's, which its identity policy allows: that account (the
   * resource's own policy must allow the role too). @default the identity policy is what is missing
   */
  readonly crossAccountFrom?: string;
  /**
   * For a KMS key of another account than the role, which the role's own policy allows: that account, the service the
   * request came through (`kms:ViaService`) and the S3 object or bucket it decrypts for (`kms:EncryptionContext:aws:s3:arn`).
   * Across accounts only the key policy can admit the role (a grant in the key's stack can not write the other
   * account's role policy). @default not such a request
   */
  readonly crossAccountKey?: { readonly account: string; readonly viaService?: string; readonly s3Arn?: string };
  /**
   * For `sns:Publish` by an app function other than the flow's relay: the topic is a flow's event topic, which only
   * the relay publishes to (see {@link EVENT_TOPIC_PUBLISH_HINT}). @default not a flow's event topic
   */
  readonly eventTopic?: boolean;
}

/**
 * The hint for an app function refused `sns:Publish` on a flow's event topic (`topic`, `caller`: their variable names):
 * the event goes through the outbox, in the transaction of the change; a grant would only make `simulate` fail the
 * publish as a dual write.
 */
export const EVENT_TOPIC_PUBLISH_HINT = (topic: string, caller: string): string =>
  `do not publish to ${topic}, a flow's event topic, yourself: only the flow's relay does. Emit the event in the transaction that commits the change ` +
  `(tx.emit in a consumer; the Outbox's transactWrite or transactWriteOnce in a producer, granted by flow.grantAppendEvents(${caller})); ` +
  'a grant of sns:Publish (eventTopic.grantPublish) is for a publisher outside the app, and a function of the app that publishes there fails simulate (dual-write)';

/** The caller as a grant names it: an expression that compiles, and what it stands for when that is not obvious. */
export interface Grantee {
  /** e.g. `billing.consumerFunction`, or `reportsFunction` */
  readonly expression: string;
  /** e.g. `billing: the Subscriber App/Orders/Billing` @default none */
  readonly note?: string;
}

/** The construct path of a resource without the `Resource` child an L2 construct keeps it in. */
function ownerPath(constructPath: string): string {
  return constructPath.replace(/\/Resource$/, '');
}

/**
 * How a grant names the construct at `callerPath`, from the construct paths of the templates' resources: the function
 * of a `Subscriber` (a construct with an SNS `Subscription` child and a `Function` child) is the subscriber's
 * `consumerFunction` (the Subscriber is not an IGrantable); any other caller is named by its own construct.
 */
export function granteeOf(callerPath: string, resources: Iterable<{ readonly type: string; readonly constructPath?: string }>): Grantee {
  const match = /^(.*)\/Function$/.exec(callerPath);
  if (match !== null) {
    const subscriber = match[1]!;
    for (const resource of resources) {
      if (resource.type === 'AWS::SNS::Subscription' && resource.constructPath !== undefined && ownerPath(resource.constructPath) === `${subscriber}/Subscription`) {
        const named = variableName(subscriber);
        const name = named === 'construct' ? 'subscriber' : named;
        return { expression: `${name}.consumerFunction`, note: `${name}: the Subscriber ${subscriber}` };
      }
    }
  }
  return { expression: variableName(callerPath) };
}

/** Segments of a construct path that say nothing of what the construct is. */
const FILLER = new Set(['Resource', 'Default', 'ServiceRole', 'Role', 'DefaultPolicy']);
/** Last segments too generic to name a variable alone: the segment before them is prefixed. */
const GENERIC = new Set(['Function', 'Table', 'Queue', 'Topic', 'Key', 'Pipe', 'Relay', 'InboxTable', 'OutboxTable', 'EventTopic', 'DeadLetterQueue']);

/** A variable name for a construct path, as a CDK user would call it: `.../Orders/Billing/Function/Resource` → `billingFunction`. */
export function variableName(constructPath: string): string {
  const parts = constructPath.split('/').slice(1).filter((part) => part !== '' && !FILLER.has(part));
  if (parts.length === 0) return 'construct';
  const last = parts[parts.length - 1]!;
  const words = GENERIC.has(last) && parts.length > 1 ? [parts[parts.length - 2]!, last] : [last];
  const joined = words.map((word) => word.replace(/[^A-Za-z0-9]/g, '')).join('');
  return joined.charAt(0).toLowerCase() + joined.slice(1);
}

const TABLE_READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'ConditionCheckItem', 'DescribeTable']);
const TABLE_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
const STREAM_READS = new Set(['DescribeStream', 'GetRecords', 'GetShardIterator', 'ListStreams']);

/** The CDK call that grants the denied request (and what its grantee stands for, when that is not obvious). */
export function grantHint(subject: HintSubject): string {
  const hint = grantCall(subject);
  const noGrant = subject.service || subject.explicitDeny !== undefined || subject.permissionsBoundary !== undefined;
  return subject.grantee?.note === undefined || noGrant ? hint : `${hint} (${subject.grantee.note})`;
}

function grantCall(subject: HintSubject): string {
  const resource = variableName(subject.resourcePath);
  const caller = subject.grantee?.expression ?? variableName(subject.callerPath);
  const [service, operation = ''] = subject.action.split(':');
  if (subject.eventTopic === true && subject.action === 'sns:Publish' && !subject.service) return EVENT_TOPIC_PUBLISH_HINT(resource, caller);
  if (subject.explicitDeny !== undefined) {
    return `an explicit Deny (${subject.explicitDeny}) matches it, and no grant overrides an explicit Deny: narrow or remove that statement`;
  }
  if (subject.permissionsBoundary !== undefined) {
    return `the permissions boundary ${subject.permissionsBoundary} must allow ${subject.action} too: no grant to the role passes a boundary`;
  }
  if (subject.crossAccountKey !== undefined) {
    const { account, viaService, s3Arn } = subject.crossAccountKey;
    const arnEquals = [`'aws:PrincipalArn': <the ARN of ${subject.callerPath}'s role>`, ...(s3Arn === undefined ? [] : [`'kms:EncryptionContext:aws:s3:arn': '${s3Arn}'`])];
    const conditions = [`ArnEquals: { ${arnEquals.join(', ')} }`, ...(viaService === undefined ? [] : [`StringEquals: { 'kms:ViaService': '${viaService}' }`])];
    const claimCheck = s3Arn === undefined ? '' : ` (S3 decrypts the object for the role: the claim-check's read of an offloaded event's data)`;
    return (
      `the role's own policy allows it; the key policy of ${subject.resourcePath} must allow the role of account ${account} too${claimCheck}: ` +
      `a statement allowing ${subject.action} to new iam.AccountPrincipal('${account}') with the conditions { ${conditions.join(', ')} } ` +
      `(${resource}.addToResourcePolicy(new iam.PolicyStatement({ ... })); a grant to the role from the key's stack can not write another account's role policy). ` +
      'A Subscriber of another account created with the flow writes this statement itself when the flow\'s key is a key of the app: look for what removed or overrode it (docs/LARGE-EVENTS.md, "KMS, across accounts")'
    );
  }
  if (subject.crossAccountFrom !== undefined) {
    return `the role's own policy allows it; add to ${resource}'s resource policy a statement allowing ${subject.action} to the role of account ${subject.crossAccountFrom} (${resource}.addToResourcePolicy(new iam.PolicyStatement({ principals: [new iam.AccountPrincipal('${subject.crossAccountFrom}')], actions: ['${subject.action}'], ... , conditions: { ArnEquals: { 'aws:PrincipalArn': <the role's ARN> } } })), or let the construct that builds the cross-account subscriber add it (docs/CROSS-ACCOUNT.md)`;
  }
  if (subject.service) {
    const source = subject.sourcePath === undefined ? '' : ` with the condition { ArnEquals: { 'aws:SourceArn': ${variableName(subject.sourcePath)}.topicArn } }`;
    if (service === 'kms') {
      return `let ${subject.callerPath} use the key in its key policy: ${resource}.addToResourcePolicy(new iam.PolicyStatement({ principals: [new iam.ServicePrincipal('${subject.callerPath}')], actions: ['kms:Decrypt', 'kms:GenerateDataKey*'], resources: ['*']${source ? `, conditions: { ArnEquals: { 'aws:SourceArn': ${variableName(subject.sourcePath!)}.topicArn } }` : ''} }))`;
    }
    if (subject.action === 'sqs:SendMessage' && subject.sourcePath !== undefined) {
      return `${variableName(subject.sourcePath)}.addSubscription(new subscriptions.SqsSubscription(${resource})) adds the queue policy statement; for a queue you subscribe otherwise: ${resource}.addToResourcePolicy(new iam.PolicyStatement({ principals: [new iam.ServicePrincipal('${subject.callerPath}')], actions: ['sqs:SendMessage'], resources: [${resource}.queueArn]${source ? `, conditions: { ArnEquals: { 'aws:SourceArn': ${variableName(subject.sourcePath)}.topicArn } }` : ''} }))`;
    }
    return `${resource}.addToResourcePolicy(...) allowing ${subject.callerPath} to ${subject.action}${source}`;
  }
  switch (service) {
    case 'dynamodb':
      if (STREAM_READS.has(operation)) return `${resource}.grantStreamRead(${caller})`;
      if (TABLE_READS.has(operation)) return `${resource}.grant(${caller}, '${subject.action}') (or ${resource}.grantReadData(${caller}) for every read)`;
      if (TABLE_WRITES.has(operation)) return `${resource}.grant(${caller}, '${subject.action}') (or ${resource}.grantWriteData(${caller}) for every write)`;
      return `${resource}.grant(${caller}, '${subject.action}')`;
    case 'kms':
      return operation === 'Decrypt' ? `${resource}.grantDecrypt(${caller}) (or ${resource}.grantEncryptDecrypt(${caller}) when it writes too)` : `${resource}.grantEncryptDecrypt(${caller})`;
    case 'sqs':
      if (operation === 'SendMessage') return `${resource}.grantSendMessages(${caller})`;
      if (operation === 'ReceiveMessage' || operation === 'DeleteMessage' || operation === 'GetQueueAttributes') return `${resource}.grantConsumeMessages(${caller})`;
      return `${resource}.grant(${caller}, '${subject.action}')`;
    case 'sns':
      return operation === 'Publish' ? `${resource}.grantPublish(${caller})` : `${resource}.grant(${caller}, '${subject.action}')`;
    default:
      return `grant ${subject.action} on ${subject.resourcePath} to ${subject.callerPath}`;
  }
}
