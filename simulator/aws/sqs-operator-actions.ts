/**
 * The SQS actions an operator's tools use on dead-letter queues, for the SQS endpoint: ReceiveMessage,
 * DeleteMessage, ChangeMessageVisibility, StartMessageMoveTask and ListMessageMoveTasks, answered as SQS answers them
 * (SQS API reference). A message move task runs on the simulation's clock at `MaxNumberOfMessagesPerSecond`, or 500 a
 * second, and, as on SQS, gives every message it moves a NEW message id (./message-move-task.ts); one task at a time per
 * source queue.
 */
import { MAX_MESSAGES_MOVED_PER_SECOND, MessageMoveTask } from './message-move-task';
import type { SimulatedQueue } from './queue';
import { SqsError } from './sqs-errors';

type JsonObject = Record<string, unknown>;

/** What the operator actions need of the endpoint's options. */
export interface OperatorActionOptions {
  resolveQueue(queueUrl: string): SimulatedQueue | undefined;
  resolveQueueArn?(queueArn: string): SimulatedQueue | undefined;
}

/** Most messages one ReceiveMessage returns. */
const MAX_RECEIVE_MESSAGES = 10;

interface MoveTask {
  readonly sourceArn: string;
  readonly destinationArn: string;
  readonly task: MessageMoveTask;
}

function stringField(input: JsonObject, field: string, required: true): string;
function stringField(input: JsonObject, field: string, required: false): string | undefined;
function stringField(input: JsonObject, field: string, required: boolean): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) {
    if (required) throw new SqsError('MissingRequiredParameterException', `the request must contain the parameter ${field}`);
    return undefined;
  }
  if (typeof value !== 'string') throw new SqsError('InvalidParameterValueException', `parameter ${field} must be a string, got ${typeof value}`);
  return value;
}

function integerField(input: JsonObject, field: string, bounds: { min: number; max: number }): number | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new SqsError('InvalidParameterValueException', `Value ${String(value)} for parameter ${field} is invalid. Reason: must be between ${bounds.min} and ${bounds.max}.`);
  }
  return value;
}

/** The operator actions on one endpoint's queues, with the move tasks it ran. */
export class OperatorSqsActions {
  private readonly tasks: MoveTask[] = [];

  public constructor(private readonly options: OperatorActionOptions) {}

  public handle(action: string, input: JsonObject): JsonObject {
    switch (action) {
      case 'ReceiveMessage':
        return this.receiveMessage(input);
      case 'DeleteMessage':
        this.queueOf(input).delete(stringField(input, 'ReceiptHandle', true));
        return {};
      case 'ChangeMessageVisibility':
        this.queueOf(input).changeVisibility(stringField(input, 'ReceiptHandle', true), integerField(input, 'VisibilityTimeout', { min: 0, max: 43_200 }) ?? 0);
        return {};
      case 'StartMessageMoveTask':
        return this.startMessageMoveTask(input);
      case 'ListMessageMoveTasks':
        return this.listMessageMoveTasks(input);
      default:
        throw new SqsError('UnsupportedOperation', `${action} is not an operator action`);
    }
  }

  private queueOf(input: JsonObject): SimulatedQueue {
    const queueUrl = stringField(input, 'QueueUrl', true);
    const queue = this.options.resolveQueue(queueUrl);
    if (queue === undefined) throw new SqsError('QueueDoesNotExist', `The specified queue does not exist: ${queueUrl}`);
    return queue;
  }

  private queueByArn(arn: string): SimulatedQueue {
    const queue = this.options.resolveQueueArn?.(arn);
    if (queue === undefined) throw new SqsError('ResourceNotFoundException', `The resource that you specified for the SourceArn parameter doesn't exist: ${arn}`);
    return queue;
  }

  private receiveMessage(input: JsonObject): JsonObject {
    const queue = this.queueOf(input);
    const maxMessages = integerField(input, 'MaxNumberOfMessages', { min: 1, max: MAX_RECEIVE_MESSAGES }) ?? 1;
    const visibilityTimeout = integerField(input, 'VisibilityTimeout', { min: 0, max: 43_200 });
    const messages = queue.receive(maxMessages, visibilityTimeout);
    if (messages.length === 0) return {};
    return {
      Messages: messages.map((message) => ({
        MessageId: message.messageId,
        ReceiptHandle: message.receiptHandle,
        MD5OfBody: message.md5OfBody,
        Body: message.body,
        Attributes: message.attributes,
        ...(Object.keys(message.messageAttributes).length === 0 ? {} : { MessageAttributes: message.messageAttributes }),
      })),
    };
  }

  private startMessageMoveTask(input: JsonObject): JsonObject {
    const sourceArn = stringField(input, 'SourceArn', true);
    const destinationArn = stringField(input, 'DestinationArn', false);
    const maxNumberOfMessagesPerSecond = integerField(input, 'MaxNumberOfMessagesPerSecond', { min: 1, max: MAX_MESSAGES_MOVED_PER_SECOND });
    const source = this.queueByArn(sourceArn);
    // without a destination SQS moves each message back to the queue it was redriven from; the simulator needs one
    if (destinationArn === undefined) throw new SqsError('UnsupportedOperation', 'StartMessageMoveTask without DestinationArn is not emulated by the simulator');
    const destination = this.queueByArn(destinationArn);
    if (this.tasks.some((each) => each.sourceArn === sourceArn && each.task.status().status === 'RUNNING')) {
      // what SQS answers (only one active message movement task is supported per queue at any given time)
      throw new SqsError('InvalidParameterValueException', 'There is already a task running. Only one active task is allowed for a source queue arn at a given time.');
    }
    const taskHandle = Buffer.from(JSON.stringify({ task: this.tasks.length + 1, sourceArn }), 'utf8').toString('base64');
    const task = new MessageMoveTask({ taskHandle, source, destination, ...(maxNumberOfMessagesPerSecond === undefined ? {} : { maxNumberOfMessagesPerSecond }) });
    this.tasks.push({ sourceArn, destinationArn, task });
    return { TaskHandle: taskHandle };
  }

  private listMessageMoveTasks(input: JsonObject): JsonObject {
    const sourceArn = stringField(input, 'SourceArn', true);
    this.queueByArn(sourceArn);
    const maxResults = integerField(input, 'MaxResults', { min: 1, max: 10 }) ?? 1;
    const tasks = this.tasks.filter((each) => each.sourceArn === sourceArn).reverse().slice(0, maxResults);
    return {
      Results: tasks.map(({ task, destinationArn }) => {
        const { status, moved, toMove } = task.status();
        return {
          // as documented, the handle is listed only while the task is RUNNING
          ...(status === 'RUNNING' ? { TaskHandle: task.taskHandle } : {}),
          Status: status,
          SourceArn: sourceArn,
          DestinationArn: destinationArn,
          ...(task.maxNumberOfMessagesPerSecond === undefined ? {} : { MaxNumberOfMessagesPerSecond: task.maxNumberOfMessagesPerSecond }),
          ApproximateNumberOfMessagesMoved: moved,
          ApproximateNumberOfMessagesToMove: toMove,
          StartedTimestamp: task.startedAt,
        };
      }),
    };
  }
}
