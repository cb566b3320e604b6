/**
 * An HTTP endpoint on 127.0.0.1 that speaks the SNS Query protocol of @aws-sdk/client-sns v3 (`POST /`, a form-encoded
 * body with `Action=...`, XML answers), so a function's own SNS client (the ordered fan-out's) publishes to the
 * simulated topics, and `verify` (through a served run's gateway) lists a topic's subscriptions. Emulated: `Publish`
 * and `PublishBatch` (with `MessageGroupId` and `MessageDeduplicationId`, which a FIFO topic requires: ./topic.ts), and
 * `ListSubscriptionsByTopic` (the topic's subscriptions as SNS lists them, a pending one as `PendingConfirmation`; 100
 * a page, then a `NextToken`, as SNS pages them: SNS API Reference, ListSubscriptionsByTopic), and
 * `GetSubscriptionAttributes` (a confirmed subscription's attributes as SNS answers them for an SQS endpoint, every
 * value a string: `SubscriptionArn`, `TopicArn`, `Owner`, `Protocol`, `Endpoint`, `PendingConfirmation`,
 * `ConfirmationWasAuthenticated`, `RawMessageDelivery`, and when set `FilterPolicy` (the policy's JSON text) with its
 * `FilterPolicyScope`, and `RedrivePolicy` (`{"deadLetterTargetArn":...}`): SNS API Reference,
 * GetSubscriptionAttributes; its topic is the subscription ARN up to its last `:`). Every other action is
 * refused with `InvalidAction`; a topic ARN the run does not have with `NotFound` (a subscription it does not have, too); what the topic refuses with its
 * `SnsPublishError` code; a `NextToken` this endpoint did not give with `InvalidParameter`. Errors are the Query
 * protocol's `<ErrorResponse><Error><Type>Sender</Type><Code>..</Code><Message>..</Message></Error></ErrorResponse>`
 * with status 400 (404 for NotFound). Requests are not authenticated; with `authorize`, IAM decides each request (the
 * caller named by its signature's access key id, the action `sns:<Action>`): a refused request is answered, whole,
 * with `AuthorizationError` (403), or `KMSAccessDenied` (400) when the topic key's use is what is refused (SNS API
 * Reference, Publish, PublishBatch, ListSubscriptionsByTopic and GetSubscriptionAttributes, "Errors"). With an
 * `observer`, each message a run's function published is told to it with the function (../check/own-publishes.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { listenOnLoopback, readBody, type LoopbackServer } from './loopback-server';
import { accessKeyIdOf } from './sqs-endpoint';
import { MAX_PUBLISH_BATCH_ENTRIES, SnsPublishError, type ListedSubscription, type PublishOptions, type SimulatedTopic } from './topic';
import type { SqsMessageAttribute } from './sqs-messages';
import type { SqsSender, SqsSenders } from './sqs-senders';
import type { SimulationObserver } from '../observation/observer';

/** Options of {@link startSnsEndpoint}. */
export interface SnsEndpointOptions {
  /** The topic an ARN names, or undefined (the request then fails with NotFound). */
  resolveTopic(topicArn: string): SimulatedTopic | undefined;
  /**
   * Decides whether IAM allows the request's `action` (`Publish`, `PublishBatch`, `ListSubscriptionsByTopic`,
   * `GetSubscriptionAttributes`) on `topic` (a subscription's: its topic): undefined when it does, else the message of the error SNS answers with. `accessKeyId` is the caller's (from
   * the request's signature). @default every request is allowed
   */
  authorize?(request: { readonly accessKeyId?: string; readonly action: SnsAction; readonly topic: SimulatedTopic }): Promise<string | undefined>;
  /**
   * The run's senders (the environments, each `AWS_ENDPOINT_URL_SNS` this endpoint followed by its own path, as for SQS):
   * under a seeded scheduler a sender's request waits for its forward step, and its answer for its reply step, so two
   * environments publishing in one turn (an ordered relay's fan-outs, to one FIFO topic) reach the topic in the seed's
   * order, not in the order their connections delivered them. @default requests are answered as they arrive
   */
  readonly senders?: Pick<SqsSenders, 'identify'>;
  /**
   * Hears each message a function published, as the topic accepted it (`onAppPublish`: who, in which invocation, to
   * which topic, the event id its body carries), when the request names its sender (the run's functions' do).
   * @default not heard
   */
  readonly observer?: Pick<SimulationObserver, 'onAppPublish'>;
}

/** The actions the endpoint emulates. */
export type SnsAction = 'Publish' | 'PublishBatch' | 'ListSubscriptionsByTopic' | 'GetSubscriptionAttributes';
const ACTIONS: readonly string[] = ['Publish', 'PublishBatch', 'ListSubscriptionsByTopic', 'GetSubscriptionAttributes'] satisfies readonly SnsAction[];

/** The most subscriptions one ListSubscriptionsByTopic page lists (SNS API Reference: "up to 100"). */
export const SUBSCRIPTIONS_PER_PAGE = 100;

const XMLNS = 'http://sns.amazonaws.com/doc/2010-03-31/';

/** An error the endpoint answers with. */
class SnsRequestError extends Error {
  public constructor(
    public readonly code: string,
    message: string,
    public readonly status = 400,
  ) {
    super(message);
  }
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The message attributes of a Query request under `prefix` (`MessageAttributes.entry.N.Name`, `.Value.DataType`, ...). */
function attributesOf(form: URLSearchParams, prefix: string): Record<string, SqsMessageAttribute> {
  const attributes: Record<string, SqsMessageAttribute> = {};
  for (let index = 1; form.has(`${prefix}.entry.${index}.Name`); index += 1) {
    const entry = `${prefix}.entry.${index}`;
    const dataType = form.get(`${entry}.Value.DataType`) ?? 'String';
    const stringValue = form.get(`${entry}.Value.StringValue`);
    const binaryValue = form.get(`${entry}.Value.BinaryValue`);
    attributes[form.get(`${entry}.Name`)!] = {
      DataType: dataType,
      ...(stringValue === null ? {} : { StringValue: stringValue }),
      ...(binaryValue === null ? {} : { BinaryValue: binaryValue }),
    };
  }
  return attributes;
}

/** The Publish options of the fields under `prefix` (`''` for Publish, `PublishBatchRequestEntries.member.N.` for an entry). */
function publishOptionsOf(form: URLSearchParams, prefix: string): PublishOptions {
  const messageGroupId = form.get(`${prefix}MessageGroupId`);
  const messageDeduplicationId = form.get(`${prefix}MessageDeduplicationId`);
  const messageAttributes = attributesOf(form, `${prefix}MessageAttributes`);
  return {
    ...(Object.keys(messageAttributes).length === 0 ? {} : { messageAttributes }),
    ...(messageGroupId === null ? {} : { messageGroupId }),
    ...(messageDeduplicationId === null ? {} : { messageDeduplicationId }),
  };
}

/** The event id a published body carries: its `id`, when it is a JSON object with a string one. */
function eventIdOf(message: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(message);
    const id = typeof parsed === 'object' && parsed !== null ? (parsed as { id?: unknown }).id : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Who published, told to the observer after the topic accepted a message. */
type PublishListener = (topic: SimulatedTopic, message: string) => void;

function publishOne(topic: SimulatedTopic, message: string | null, options: PublishOptions, published?: PublishListener): string {
  if (message === null) throw new SnsRequestError('InvalidParameter', 'Invalid parameter: Message (the request must contain it)');
  const { messageId } = topic.publish(message, options);
  published?.(topic, message);
  return messageId;
}

/** The listener that tells `observer` what `sender` published, or undefined when either is unknown. */
function publishListenerOf(sender: SqsSender | undefined, observer: SnsEndpointOptions['observer']): PublishListener | undefined {
  if (sender === undefined || observer?.onAppPublish === undefined) return undefined;
  return (topic, message) => {
    const eventId = eventIdOf(message);
    observer.onAppPublish?.({
      functionKey: sender.functionKey,
      functionName: sender.functionName,
      invocation: sender.invocation?.invocation ?? `${sender.functionKey}#init`,
      topic: topic.model.key,
      topicArn: topic.arn,
      ...(eventId === undefined ? {} : { eventId }),
    });
  };
}

/** A ListSubscriptionsByTopic answer up to its ResponseMetadata: the page `nextToken` starts (the first without one). */
function listSubscriptions(topic: SimulatedTopic, nextToken: string | null): string {
  const all = topic.subscriptionList();
  // a token this endpoint gave: where the next page starts
  const start = nextToken === null ? 0 : /^[1-9]\d*$/.test(nextToken) ? Number(nextToken) : Number.NaN;
  if (nextToken !== null && !(start < all.length)) throw new SnsRequestError('InvalidParameter', `Invalid parameter: NextToken (${nextToken})`);
  const page = all.slice(start, start + SUBSCRIPTIONS_PER_PAGE);
  const members = page.map(
    (subscription) =>
      `<member><TopicArn>${escapeXml(topic.arn)}</TopicArn><Protocol>${escapeXml(subscription.protocol)}</Protocol><SubscriptionArn>${escapeXml(subscription.subscriptionArn)}</SubscriptionArn>` +
      `<Owner>${escapeXml(subscription.owner)}</Owner><Endpoint>${escapeXml(subscription.endpoint)}</Endpoint></member>`,
  );
  const next = start + SUBSCRIPTIONS_PER_PAGE < all.length ? `<NextToken>${start + SUBSCRIPTIONS_PER_PAGE}</NextToken>` : '';
  return `<ListSubscriptionsByTopicResponse xmlns="${XMLNS}"><ListSubscriptionsByTopicResult><Subscriptions>${members.join('')}</Subscriptions>${next}</ListSubscriptionsByTopicResult>`;
}

/** A GetSubscriptionAttributes answer up to its ResponseMetadata (see the module comment). */
function subscriptionAttributes(topic: SimulatedTopic, subscription: ListedSubscription): string {
  const attributes: Record<string, string> = {
    ConfirmationWasAuthenticated: 'true',
    Endpoint: subscription.endpoint,
    ...(subscription.filterPolicy === undefined ? {} : { FilterPolicy: JSON.stringify(subscription.filterPolicy), FilterPolicyScope: subscription.filterPolicyScope ?? 'MessageAttributes' }),
    Owner: subscription.owner,
    PendingConfirmation: 'false',
    Protocol: subscription.protocol,
    RawMessageDelivery: String(subscription.rawMessageDelivery === true),
    ...(subscription.deadLetterTargetArn === undefined ? {} : { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: subscription.deadLetterTargetArn }) }),
    SubscriptionArn: subscription.subscriptionArn,
    TopicArn: topic.arn,
  };
  const entries = Object.entries(attributes).map(([key, value]) => `<entry><key>${escapeXml(key)}</key><value>${escapeXml(value)}</value></entry>`);
  return `<GetSubscriptionAttributesResponse xmlns="${XMLNS}"><GetSubscriptionAttributesResult><Attributes>${entries.join('')}</Attributes></GetSubscriptionAttributesResult>`;
}

/** The topic a request names: its `TopicArn`, or a GetSubscriptionAttributes' subscription's topic (its ARN up to the last `:`). */
function topicArnOf(form: URLSearchParams, action: string): string {
  if (action !== 'GetSubscriptionAttributes') return form.get('TopicArn') ?? '';
  const subscriptionArn = form.get('SubscriptionArn');
  if (subscriptionArn === null || !/^arn:[^:]+:sns:[^:]+:\d{12}:[^:]+:[^:]+$/.test(subscriptionArn)) {
    throw new SnsRequestError('InvalidParameter', `Invalid parameter: SubscriptionArn Reason: An ARN must have the format arn:<partition>:sns:<region>:<account>:<topic>:<id> (${subscriptionArn ?? 'absent'})`);
  }
  return subscriptionArn.slice(0, subscriptionArn.lastIndexOf(':'));
}

async function handle(form: URLSearchParams, options: SnsEndpointOptions, authorization: string | undefined, sender: SqsSender | undefined): Promise<string> {
  const action = form.get('Action') ?? '';
  if (!ACTIONS.includes(action)) throw new SnsRequestError('InvalidAction', `the simulator's SNS endpoint does not emulate the action ${action || '(none)'}; it emulates ${ACTIONS.join(', ')}`);
  const topicArn = topicArnOf(form, action);
  const topic = options.resolveTopic(topicArn);
  const subscription = action === 'GetSubscriptionAttributes' ? topic?.subscriptionList().find((listed) => listed.subscriptionArn === form.get('SubscriptionArn')) : undefined;
  if (action === 'GetSubscriptionAttributes' && subscription === undefined) throw new SnsRequestError('NotFound', `Subscription does not exist: ${form.get('SubscriptionArn') ?? ''}`, 404);
  if (topic === undefined) throw new SnsRequestError('NotFound', `Topic does not exist: ${topicArn}`, 404);
  const denied = await options.authorize?.({ accessKeyId: accessKeyIdOf(authorization), action: action as SnsAction, topic });
  if (denied !== undefined) throw /perform: kms:/.test(denied) ? new SnsRequestError('KMSAccessDenied', denied) : new SnsRequestError('AuthorizationError', denied, 403);
  const requestId = `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata>`;
  if (action === 'ListSubscriptionsByTopic') return `${listSubscriptions(topic, form.get('NextToken'))}${requestId}</ListSubscriptionsByTopicResponse>`;
  if (subscription !== undefined) return `${subscriptionAttributes(topic, subscription)}${requestId}</GetSubscriptionAttributesResponse>`;
  if (action === 'Publish') {
    const messageId = publishOne(topic, form.get('Message'), publishOptionsOf(form, ''), publishListenerOf(sender, options.observer));
    return `<PublishResponse xmlns="${XMLNS}"><PublishResult><MessageId>${escapeXml(messageId)}</MessageId></PublishResult>${requestId}</PublishResponse>`;
  }
  const entries: number[] = [];
  for (let index = 1; form.has(`PublishBatchRequestEntries.member.${index}.Id`); index += 1) entries.push(index);
  if (entries.length === 0) throw new SnsRequestError('EmptyBatchRequest', 'The batch request does not contain any entries');
  if (entries.length > MAX_PUBLISH_BATCH_ENTRIES) {
    throw new SnsRequestError('TooManyEntriesInBatchRequest', `The batch request contains more entries than permissible (${entries.length}; at most ${MAX_PUBLISH_BATCH_ENTRIES})`);
  }
  const successful: string[] = [];
  const failed: string[] = [];
  for (const index of entries) {
    const prefix = `PublishBatchRequestEntries.member.${index}.`;
    const id = escapeXml(form.get(`${prefix}Id`) ?? '');
    try {
      const messageId = publishOne(topic, form.get(`${prefix}Message`), publishOptionsOf(form, prefix), publishListenerOf(sender, options.observer));
      successful.push(`<member><Id>${id}</Id><MessageId>${escapeXml(messageId)}</MessageId></member>`);
    } catch (error) {
      if (!(error instanceof SnsPublishError || error instanceof SnsRequestError)) throw error;
      failed.push(`<member><Id>${id}</Id><Code>${escapeXml(error.code)}</Code><Message>${escapeXml(error.message)}</Message><SenderFault>true</SenderFault></member>`);
    }
  }
  return (
    `<PublishBatchResponse xmlns="${XMLNS}"><PublishBatchResult><Successful>${successful.join('')}</Successful><Failed>${failed.join('')}</Failed></PublishBatchResult>` +
    `${requestId}</PublishBatchResponse>`
  );
}

async function respond(request: IncomingMessage, response: ServerResponse, options: SnsEndpointOptions): Promise<void> {
  const body = await readBody(request);
  const form = new URLSearchParams(body.toString('utf8'));
  // under a seeded scheduler a sender's request waits for its turn, and so does its answer (see SnsEndpointOptions.senders)
  const sender = options.senders?.identify(request.url);
  const scheduled = sender?.scheduling?.arrive(`SNS.${form.get('Action') ?? ''}`, body);
  if (scheduled !== undefined) response.once('close', () => scheduled.ended());
  await scheduled?.forwardTurn;
  let status = 200;
  let xml: string;
  try {
    xml = await handle(form, options, request.headers.authorization, sender);
  } catch (error) {
    const known = error instanceof SnsRequestError || error instanceof SnsPublishError;
    const code = known ? error.code : 'InternalError';
    status = error instanceof SnsRequestError ? error.status : known ? 400 : 500;
    const message = error instanceof Error ? error.message : String(error);
    xml =
      `<ErrorResponse xmlns="${XMLNS}"><Error><Type>${status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${escapeXml(code)}</Code>` +
      `<Message>${escapeXml(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
  }
  await scheduled?.replyTurn();
  response.writeHead(status, { 'content-type': 'text/xml' }).end(xml);
  scheduled?.answered();
}

/** Starts the endpoint (see the module comment). */
export async function startSnsEndpoint(options: SnsEndpointOptions): Promise<LoopbackServer> {
  const server = createServer((request, response) => {
    respond(request, response, options).catch(() => response.destroy());
  });
  return listenOnLoopback(server);
}
