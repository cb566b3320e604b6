/**
 * An HTTP endpoint on 127.0.0.1 that speaks the SQS AWS JSON 1.0 protocol of @aws-sdk/client-sqs v3 (`POST /`,
 * `X-Amz-Target: AmazonSQS.<Action>`, `Content-Type: application/x-amz-json-1.0`), so the real consumer code (its
 * dead-letter publisher) can send to the simulated queues. It answers as SQS does (sqs-json-api-responses.html):
 * results as JSON, errors as `{ "__type": "com.amazonaws.sqs#<name>", "message" }` with the
 * `x-amzn-query-error: <code>;Sender` header the SDK reads, and the MD5 digests the SDK verifies.
 *
 * Emulated: SendMessage, SendMessageBatch, GetQueueUrl, GetQueueAttributes, and for the operator CLI ReceiveMessage
 * (no long polling), DeleteMessage, ChangeMessageVisibility, StartMessageMoveTask and ListMessageMoveTasks (a task
 * moves at most 500 messages a second on the simulation's clock; needs `resolveQueueArn`). Every other action is refused with
 * `UnsupportedOperation`; so are per-message delays (DelaySeconds > 0) and list attribute values. The SDK sends each
 * request to the origin of its QueueUrl, so queue URLs must be `${endpoint}/<account>/<name>`. Requests are not
 * authenticated (the signature is not checked). The request's path names the execution environment that sent it
 * (./sqs-senders.ts): a message a function sends with its own client is reported with its function and invocation
 * (`onAppSend`); the runtime's dead letters are not.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { keepConnectionsOpen } from './keep-connections-open';
import type { AddressInfo } from 'node:net';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import type { MessageOrigin, SimulationObserver } from '../observation/observer';
import type { SqsSender, SqsSenders } from './sqs-senders';
import { eventIdOf, eventSubjectOf, IdSequence } from './message-ids';
import type { SimulatedQueue } from './queue';
import type { SendMessageResult, SqsMessageAttribute } from './sqs-messages';
import { md5OfMessageAttributes } from './sqs-md5';
import { SqsError } from './sqs-errors';
import { OperatorSqsActions } from './sqs-operator-actions';
import { MAX_SQS_MESSAGE_BYTES } from './sqs-message-validation';

/** A running endpoint. */
export interface SqsEndpoint {
  /** `http://127.0.0.1:<port>`: the SQS client's endpoint, and the origin of every queue URL. */
  readonly endpoint: string;
  /** Closes the server and its open connections. */
  stop(): Promise<void>;
}

/** Options of {@link startSqsEndpoint}. */
export interface SqsEndpointOptions {
  /** The queue a QueueUrl names, or undefined when there is none (the request then fails with QueueDoesNotExist). */
  resolveQueue(queueUrl: string): SimulatedQueue | undefined;
  /** The queue an ARN names (StartMessageMoveTask, ListMessageMoveTasks). @default no queue: those actions answer ResourceNotFoundException */
  resolveQueueArn?(queueArn: string): SimulatedQueue | undefined;
  /**
   * Hears each message a function sent with its own client (`onAppSend`: not the runtime's dead letters), when
   * `senders` names the function; each queue reports what is put on it itself (onEnqueued).
   */
  observer?: SimulationObserver;
  /** Names the function and invocation of a request from its path (each environment's endpoint URL has its own). @default sends are not reported */
  senders?: SqsSenders;
  /**
   * A queue outside the app's templates that a QueueUrl names (one the app does not own): its messages are kept for
   * the effect probes, and nobody consumes them. Requests on it are not authorized (its policies are not known).
   * @default such a QueueUrl fails with QueueDoesNotExist
   */
  resolveExternalQueue?(queueUrl: string): SimulatedQueue | undefined;
  /** The account of GetQueueUrl's queue URLs when the request names none (`QueueOwnerAWSAccountId`). @default '000000000000' */
  accountId?: string;
  /**
   * Decides whether IAM allows a request: undefined when it does, else the message of the `AccessDenied` error SQS
   * answers with. `accessKeyId` is the caller's (from the request's signature), which names the function.
   * @default every request is allowed
   */
  authorize?(request: { readonly accessKeyId?: string; readonly action: string; readonly queue?: SimulatedQueue }): Promise<string | undefined>;
}

/** The access key id a SigV4 `Authorization` header names (`Credential=<key id>/<date>/<region>/<service>/aws4_request`). */
export function accessKeyIdOf(authorization: string | undefined): string | undefined {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];
}

/** The actions the endpoint emulates. */
export const EMULATED_SQS_ACTIONS = [
  'SendMessage',
  'SendMessageBatch',
  'GetQueueUrl',
  'GetQueueAttributes',
  'ReceiveMessage',
  'DeleteMessage',
  'ChangeMessageVisibility',
  'StartMessageMoveTask',
  'ListMessageMoveTasks',
] as const;

/** Most entries one SendMessageBatch may carry. */
const MAX_BATCH_ENTRIES = 10;
/** Batch entry ids: alphanumerics, hyphens and underscores, up to 80 characters (SendMessageBatchRequestEntry). */
const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;
/** Largest request body read: a full batch with JSON escaping to spare. */
const MAX_REQUEST_BYTES = 8 * MAX_SQS_MESSAGE_BYTES;
const JSON_1_0 = 'application/x-amz-json-1.0';
const SQS_NAMESPACE = 'com.amazonaws.sqs';

/** Every queue attribute name SQS knows (GetQueueAttributes API reference); the simulator answers those it emulates. */
const KNOWN_QUEUE_ATTRIBUTES = new Set([
  'All',
  'Policy',
  'VisibilityTimeout',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
  'DelaySeconds',
  'ReceiveMessageWaitTimeSeconds',
  'RedrivePolicy',
  'RedriveAllowPolicy',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
  'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds',
  'SqsManagedSseEnabled',
]);

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalidParameter(message: string): SqsError {
  return new SqsError('InvalidParameterValueException', message);
}

function requiredString(input: JsonObject, field: string): string {
  const value = input[field];
  if (value === undefined || value === null) throw new SqsError('MissingRequiredParameterException', `the request must contain the parameter ${field}`);
  if (typeof value !== 'string') throw invalidParameter(`parameter ${field} must be a string, got ${typeof value}`);
  return value;
}

function optionalString(input: JsonObject, field: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidParameter(`parameter ${field} must be a string, got ${typeof value}`);
  return value;
}

/** The MessageAttributes (or MessageSystemAttributes) of a request, as SQS attributes. */
function readAttributes(input: JsonObject, field: string): Record<string, SqsMessageAttribute> | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw invalidParameter(`parameter ${field} must be a map of attribute name to value`);
  const attributes: Record<string, SqsMessageAttribute> = {};
  for (const [name, raw] of Object.entries(value)) {
    if (!isObject(raw)) throw invalidParameter(`${field}.${name} must be an object with DataType and a value`);
    for (const list of ['StringListValues', 'BinaryListValues']) {
      const listValue = raw[list];
      if (Array.isArray(listValue) && listValue.length > 0) throw new SqsError('UnsupportedOperation', `${field}.${name}.${list} is reserved by SQS and not emulated by the simulator`);
    }
    const dataType = requiredString(raw, 'DataType');
    const stringValue = optionalString(raw, 'StringValue');
    const binaryValue = optionalString(raw, 'BinaryValue');
    attributes[name] = { DataType: dataType, ...(stringValue === undefined ? {} : { StringValue: stringValue }), ...(binaryValue === undefined ? {} : { BinaryValue: binaryValue }) };
  }
  return attributes;
}

/** The runtime's dead letter names the message (and its receive) it stands for; `{}` for any other message. */
function deadLetterOf(attributes: Record<string, SqsMessageAttribute> | undefined): Pick<MessageOrigin, 'deadLetterOf'> {
  const messageId = attributes?.[DEAD_LETTER_ATTRIBUTE.SOURCE_MESSAGE_ID]?.StringValue;
  if (messageId === undefined || messageId === '') return {};
  const receiveCount = Number(attributes?.[DEAD_LETTER_ATTRIBUTE.APPROXIMATE_RECEIVE_COUNT]?.StringValue);
  return { deadLetterOf: { messageId, ...(Number.isInteger(receiveCount) && receiveCount > 0 ? { receiveCount } : {}) } };
}

/** Answers with the SQS JSON error for `error`. */
function writeError(response: ServerResponse, requestId: string, error: SqsError): void {
  const body = JSON.stringify({ __type: `${SQS_NAMESPACE}#${error.errorName}`, message: error.message });
  response.writeHead(error.httpStatus, {
    'content-type': JSON_1_0,
    'x-amzn-requestid': requestId,
    'x-amzn-query-error': `${error.queryCode};Sender`,
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

function writeResult(response: ServerResponse, requestId: string, result: JsonObject): void {
  const body = JSON.stringify(result);
  response.writeHead(200, { 'content-type': JSON_1_0, 'x-amzn-requestid': requestId, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** How to answer a request that failed with `error`: its SQS error, or an InternalError. */
function errorWriter(error: unknown): (response: ServerResponse, requestId: string) => void {
  if (error instanceof SqsError) return (response, requestId) => writeError(response, requestId, error);
  const body = JSON.stringify({ __type: `${SQS_NAMESPACE}#InternalError`, message: `the simulated SQS failed: ${error instanceof Error ? error.message : String(error)}` });
  return (response, requestId) => {
    if (!response.headersSent) response.writeHead(500, { 'content-type': JSON_1_0, 'x-amzn-requestid': requestId, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    length += buffer.length;
    if (length > MAX_REQUEST_BYTES) throw invalidParameter(`the request body is larger than ${MAX_REQUEST_BYTES} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The SQS actions, on one endpoint's queues. */
class SqsActions {
  private readonly operatorActions: OperatorSqsActions;

  public constructor(
    private readonly options: SqsEndpointOptions,
    private readonly endpoint: () => string,
  ) {
    this.operatorActions = new OperatorSqsActions(options);
  }

  public handle(action: string, input: JsonObject, sender?: SqsSender): JsonObject {
    switch (action) {
      case 'SendMessage':
        return this.sendMessage(input, sender);
      case 'SendMessageBatch':
        return this.sendMessageBatch(input, sender);
      case 'GetQueueUrl':
        return this.getQueueUrl(input);
      case 'GetQueueAttributes':
        return this.getQueueAttributes(input);
      case 'ReceiveMessage':
      case 'DeleteMessage':
      case 'ChangeMessageVisibility':
      case 'StartMessageMoveTask':
      case 'ListMessageMoveTasks':
        return this.operatorActions.handle(action, input);
      default:
        throw new SqsError('UnsupportedOperation', `${action} is not emulated by the simulator (it emulates ${EMULATED_SQS_ACTIONS.join(', ')})`);
    }
  }

  private queue(input: JsonObject): SimulatedQueue {
    const queueUrl = requiredString(input, 'QueueUrl');
    const queue = this.options.resolveQueue(queueUrl) ?? this.options.resolveExternalQueue?.(queueUrl);
    if (queue === undefined) throw new SqsError('QueueDoesNotExist', `The specified queue does not exist: ${queueUrl}`);
    return queue;
  }

  /** Reports a message a function sent with its own client (the runtime's dead letters name their source message). */
  private reportSend(sender: SqsSender | undefined, queue: SimulatedQueue, messageId: string, body: string, attributes: Record<string, SqsMessageAttribute> | undefined): void {
    if (sender === undefined || this.options.observer?.onAppSend === undefined || deadLetterOf(attributes).deadLetterOf !== undefined) return;
    const messageAttributes = Object.fromEntries(Object.entries(attributes ?? {}).map(([name, value]) => [name, value.StringValue ?? value.BinaryValue ?? '']));
    this.options.observer.onAppSend({
      functionKey: sender.functionKey,
      functionName: sender.functionName,
      invocation: sender.invocation?.invocation ?? `${sender.functionKey}#init`,
      invocationEventIds: sender.invocation?.eventIds ?? [],
      queue: queue.model.key,
      queueName: queue.address.name,
      messageId,
      body,
      ...(Object.keys(messageAttributes).length === 0 ? {} : { messageAttributes }),
    });
  }

  /** Sends one message (of SendMessage or of a batch entry) and answers its result fields. */
  private send(queue: SimulatedQueue, entry: JsonObject, sender: SqsSender | undefined): JsonObject {
    const delaySeconds = entry.DelaySeconds;
    if (delaySeconds !== undefined && delaySeconds !== null && delaySeconds !== 0) {
      throw new SqsError('UnsupportedOperation', `DelaySeconds ${String(delaySeconds)} is not emulated by the simulator (only 0)`);
    }
    const body = requiredString(entry, 'MessageBody');
    const messageAttributes = readAttributes(entry, 'MessageAttributes');
    const systemAttributes = readAttributes(entry, 'MessageSystemAttributes');
    const messageGroupId = optionalString(entry, 'MessageGroupId');
    const messageDeduplicationId = optionalString(entry, 'MessageDeduplicationId');
    const eventId = eventIdOf(body);
    const subject = eventSubjectOf(body);
    const result: SendMessageResult = queue.send({
      body,
      ...(messageAttributes === undefined ? {} : { messageAttributes }),
      ...(messageGroupId === undefined ? {} : { messageGroupId }),
      ...(messageDeduplicationId === undefined ? {} : { messageDeduplicationId }),
      origin: { via: 'send-message', ...(eventId === undefined ? {} : { eventId }), ...(subject === undefined ? {} : { subject }), ...deadLetterOf(messageAttributes) },
    });
    this.reportSend(sender, queue, result.messageId, body, messageAttributes);
    const md5OfSystemAttributes = md5OfMessageAttributes(systemAttributes);
    return {
      MessageId: result.messageId,
      MD5OfMessageBody: result.md5OfBody,
      ...(result.md5OfMessageAttributes === undefined ? {} : { MD5OfMessageAttributes: result.md5OfMessageAttributes }),
      ...(md5OfSystemAttributes === undefined ? {} : { MD5OfMessageSystemAttributes: md5OfSystemAttributes }),
      ...(result.sequenceNumber === undefined ? {} : { SequenceNumber: result.sequenceNumber }),
    };
  }

  private sendMessage(input: JsonObject, sender: SqsSender | undefined): JsonObject {
    return this.send(this.queue(input), input, sender);
  }

  private sendMessageBatch(input: JsonObject, sender: SqsSender | undefined): JsonObject {
    const queue = this.queue(input);
    const entries = input.Entries;
    if (entries === undefined || entries === null || (Array.isArray(entries) && entries.length === 0)) {
      throw new SqsError('EmptyBatchRequest', 'There should be at least one SendMessageBatchRequestEntry in the request.');
    }
    if (!Array.isArray(entries) || !entries.every(isObject)) throw invalidParameter('parameter Entries must be a list of SendMessageBatchRequestEntry objects');
    if (entries.length > MAX_BATCH_ENTRIES) throw new SqsError('TooManyEntriesInBatchRequest', `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}. You have sent ${entries.length}.`);
    const ids = new Set<string>();
    let totalBytes = 0;
    for (const entry of entries) {
      const id = requiredString(entry, 'Id');
      if (!BATCH_ENTRY_ID.test(id)) throw new SqsError('InvalidBatchEntryId', `A batch entry id can only contain alphanumeric characters, hyphens and underscores, and be at most 80 characters long: '${id}'`);
      if (ids.has(id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
      ids.add(id);
      totalBytes += Buffer.byteLength(typeof entry.MessageBody === 'string' ? entry.MessageBody : '');
    }
    if (totalBytes > MAX_SQS_MESSAGE_BYTES) {
      throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${MAX_SQS_MESSAGE_BYTES} bytes. You have sent ${totalBytes} bytes.`);
    }
    const successful: JsonObject[] = [];
    const failed: JsonObject[] = [];
    for (const entry of entries) {
      const id = entry.Id as string;
      try {
        successful.push({ Id: id, ...this.send(queue, entry, sender) });
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        failed.push({ Id: id, SenderFault: true, Code: error.queryCode, Message: error.message });
      }
    }
    return { Successful: successful, Failed: failed };
  }

  private getQueueUrl(input: JsonObject): JsonObject {
    const queueName = requiredString(input, 'QueueName');
    const accountId = optionalString(input, 'QueueOwnerAWSAccountId') ?? this.options.accountId ?? '000000000000';
    const queue = this.options.resolveQueue(`${this.endpoint()}/${accountId}/${queueName}`);
    if (queue === undefined) throw new SqsError('QueueDoesNotExist', `The specified queue does not exist: ${queueName} (account ${accountId})`);
    return { QueueUrl: queue.address.url };
  }

  private getQueueAttributes(input: JsonObject): JsonObject {
    const queue = this.queue(input);
    const requested = input.AttributeNames ?? [];
    if (!Array.isArray(requested) || !requested.every((name): name is string => typeof name === 'string')) {
      throw invalidParameter('parameter AttributeNames must be a list of attribute names');
    }
    for (const name of requested) if (!KNOWN_QUEUE_ATTRIBUTES.has(name)) throw new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    const all = queueAttributes(queue);
    const wanted = requested.includes('All') ? Object.keys(all) : requested;
    const attributes: Record<string, string> = {};
    for (const name of wanted) {
      const value = all[name];
      if (value !== undefined) attributes[name] = value;
    }
    return Object.keys(attributes).length === 0 ? {} : { Attributes: attributes };
  }
}

/** The queue attributes the simulator knows, as GetQueueAttributes answers them (all strings). */
function queueAttributes(queue: SimulatedQueue): Record<string, string> {
  const counts = queue.counts();
  const createdSeconds = String(Math.floor(queue.createdAt / 1000));
  const attributes: Record<string, string> = {
    QueueArn: queue.address.arn,
    ApproximateNumberOfMessages: String(counts.visible),
    ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
    ApproximateNumberOfMessagesDelayed: '0',
    CreatedTimestamp: createdSeconds,
    LastModifiedTimestamp: createdSeconds,
    VisibilityTimeout: String(queue.model.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(queue.model.messageRetentionSeconds),
    MaximumMessageSize: String(MAX_SQS_MESSAGE_BYTES),
    DelaySeconds: '0',
    ReceiveMessageWaitTimeSeconds: '0',
  };
  const redrive = queue.model.redrive;
  if (redrive !== undefined && queue.deadLetterQueue !== undefined) {
    attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: queue.deadLetterQueue.address.arn, maxReceiveCount: redrive.maxReceiveCount });
  }
  if (queue.model.fifo) {
    attributes.FifoQueue = 'true';
    attributes.ContentBasedDeduplication = String(queue.model.contentBasedDeduplication === true);
  }
  return attributes;
}

/** Starts the endpoint on 127.0.0.1 at a free port. */
export async function startSqsEndpoint(options: SqsEndpointOptions): Promise<SqsEndpoint> {
  const requestIds = new IdSequence('sqs-endpoint-request');
  let endpoint = '';
  const actions = new SqsActions(options, () => endpoint);

  const server = createServer((request, response) => {
    const requestId = requestIds.next();
    void (async () => {
      const sender = options.senders?.identify(request.url);
      let text = '';
      let unreadable: unknown;
      try {
        text = await readBody(request);
      } catch (error) {
        unreadable = error;
      }
      // under a seeded scheduler an environment's request waits for its turn, and so does its answer
      const scheduled = sender?.scheduling?.arrive(`SQS.${String(request.headers['x-amz-target'] ?? '')}`, Buffer.from(text));
      if (scheduled !== undefined) response.once('close', () => scheduled.ended());
      await scheduled?.forwardTurn;
      const write = unreadable === undefined ? await answer(request, text, sender) : errorWriter(unreadable);
      await scheduled?.replyTurn();
      write(response, requestId);
      scheduled?.answered();
    })();
  });

  /** Runs the request and returns how to write its answer. */
  const answer = async (request: IncomingMessage, text: string, sender: SqsSender | undefined): Promise<(response: ServerResponse, requestId: string) => void> => {
    try {
      const target = request.headers['x-amz-target'];
      if (request.method !== 'POST' || typeof target !== 'string' || !target.startsWith('AmazonSQS.')) {
        throw new SqsError(
          'UnsupportedOperation',
          `the simulated SQS speaks only the AWS JSON 1.0 protocol of recent AWS SDKs (POST with X-Amz-Target: AmazonSQS.<Action>); got ${request.method ?? '?'} with X-Amz-Target ${String(target)}`,
        );
      }
      let input: unknown;
      try {
        input = text.length === 0 ? {} : JSON.parse(text);
      } catch {
        throw invalidParameter('the request body is not valid JSON');
      }
      if (!isObject(input)) throw invalidParameter('the request body must be a JSON object');
      const action = target.slice('AmazonSQS.'.length);
      if (options.authorize !== undefined) {
        const queueUrl = typeof input.QueueUrl === 'string' ? input.QueueUrl : undefined;
        const queue = queueUrl === undefined ? undefined : options.resolveQueue(queueUrl);
        const denied = await options.authorize({ accessKeyId: accessKeyIdOf(request.headers.authorization), action, ...(queue === undefined ? {} : { queue }) });
        if (denied !== undefined) throw new SqsError('AccessDeniedException', denied);
      }
      const result = actions.handle(action, input, sender);
      return (response, requestId) => writeResult(response, requestId, result);
    } catch (error) {
      return errorWriter(error);
    }
  };

  keepConnectionsOpen(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
