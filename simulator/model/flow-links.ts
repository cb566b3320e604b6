/**
 * Links the resources read from the templates: a resource that points at a flow resource which is not simulated (a
 * queue of a condition, a function with inline code, ...) cannot run either. Its main links (a relay's table and
 * topic, a subscription's topic and queue, a mapping's queue and function) make it not simulated; a dead-letter
 * link only drops the dead-letter target, with a line saying so. A subscription whose queue has no simulated consumer
 * (no event source mapping, or one whose function cannot run) is not simulated either: nothing here would drain it.
 */
import type {
  EventSourceMappingModel,
  FlowModel,
  FunctionModel,
  QueueModel,
  RelayModel,
  ResourceKey,
  SubscriptionModel,
  TableModel,
  TopicModel,
} from './flow-model';

/** The resources as read, before linking: lists the reader appends to. */
export interface UnlinkedFlow {
  readonly tables: TableModel[];
  readonly relays: RelayModel[];
  readonly topics: TopicModel[];
  readonly subscriptions: SubscriptionModel[];
  readonly queues: QueueModel[];
  readonly eventSourceMappings: EventSourceMappingModel[];
  readonly functions: FunctionModel[];
  readonly notSimulated: string[];
}

/** The linked flow: every link points at a modelled resource. */
export type LinkedFlow = Omit<FlowModel, 'assemblyDirectory' | 'stackNames'>;

/** Links the flow; see the module comment. */
export function linkFlow(flow: UnlinkedFlow): LinkedFlow {
  const notSimulated = [...flow.notSimulated];
  const tables = new Map(flow.tables.map((table) => [table.key, table]));
  const topics = new Set(flow.topics.map((topic) => topic.key));
  const queueKeys = new Set(flow.queues.map((queue) => queue.key));
  const functions = new Set(flow.functions.map((fn) => fn.key));
  const describe = (type: string, resource: { readonly key: ResourceKey; readonly constructPath?: string }): string =>
    `${type} ${resource.key}${resource.constructPath === undefined ? '' : ` (${resource.constructPath})`}`;

  const queues = flow.queues.map((queue): QueueModel => {
    if (queue.redrive === undefined || queueKeys.has(queue.redrive.deadLetterQueue)) return queue;
    notSimulated.push(`${describe('AWS::SQS::Queue', queue)}: its dead-letter queue ${queue.redrive.deadLetterQueue} is not simulated; messages are never moved to it`);
    const { redrive: _dropped, ...withoutRedrive } = queue;
    return withoutRedrive;
  });
  const fifoQueues = new Set(queues.filter((queue) => queue.fifo).map((queue) => queue.key));

  const relays = flow.relays.flatMap((relay): RelayModel[] => {
    const label = describe('AWS::Pipes::Pipe', relay);
    const table = tables.get(relay.sourceTable);
    const missing =
      table === undefined
        ? `its source table ${relay.sourceTable} is not simulated`
        : table.streamViewType === undefined
          ? `its source table ${relay.sourceTable} has no stream (StreamSpecification)`
          : relay.targetTopic !== undefined && !topics.has(relay.targetTopic)
            ? `its target topic ${relay.targetTopic} is not simulated`
            : relay.targetQueue !== undefined && !queueKeys.has(relay.targetQueue.queue)
              ? `its target queue ${relay.targetQueue.queue} is not simulated`
              : undefined;
    if (missing !== undefined) {
      notSimulated.push(`${label}: ${missing}`);
      return [];
    }
    if (relay.deadLetterQueue === undefined || queueKeys.has(relay.deadLetterQueue)) return [relay];
    notSimulated.push(`${label}: its dead-letter queue ${relay.deadLetterQueue} is not simulated; records that exhaust their retries are discarded instead`);
    const { deadLetterQueue: _dropped, ...withoutDeadLetterQueue } = relay;
    return [withoutDeadLetterQueue];
  });

  const eventSourceMappings = flow.eventSourceMappings.flatMap((mapping): EventSourceMappingModel[] => {
    const label = describe('AWS::Lambda::EventSourceMapping', mapping);
    const missing = !queueKeys.has(mapping.queue)
      ? `its queue ${mapping.queue} is not simulated`
      : !functions.has(mapping.function)
        ? `its function ${mapping.function} is not simulated`
        : undefined;
    if (missing !== undefined) {
      notSimulated.push(`${label}: ${missing}`);
      return [];
    }
    if (fifoQueues.has(mapping.queue) && mapping.batchSize > 10) {
      throw new Error(`${label}: BatchSize is ${mapping.batchSize}; a FIFO queue source allows 1 to 10`);
    }
    return [mapping];
  });

  // a queue nobody consumes here (its consumer is outside the app, or cannot run) would only fill up: not a subscriber
  const consumedQueues = new Set(eventSourceMappings.map((mapping) => mapping.queue));

  const subscriptions = flow.subscriptions.flatMap((subscription): SubscriptionModel[] => {
    const label = describe('AWS::SNS::Subscription', subscription);
    const missing = !topics.has(subscription.topic)
      ? `its topic ${subscription.topic} is not simulated`
      : !queueKeys.has(subscription.queue)
        ? `its queue ${subscription.queue} is not simulated`
        : !consumedQueues.has(subscription.queue)
          ? `its queue ${subscription.queue} has no consumer the simulator runs (no SQS event source mapping of a simulated function); ` +
            'what the topic delivers to it is neither simulated nor checked'
          : undefined;
    if (missing !== undefined) {
      notSimulated.push(`${label}: ${missing}`);
      return [];
    }
    if (subscription.deadLetterQueue === undefined || queueKeys.has(subscription.deadLetterQueue)) return [subscription];
    notSimulated.push(`${label}: its dead-letter queue ${subscription.deadLetterQueue} is not simulated; messages SNS cannot deliver are discarded instead`);
    const { deadLetterQueue: _dropped, ...withoutDeadLetterQueue } = subscription;
    return [withoutDeadLetterQueue];
  });

  return { tables: flow.tables, relays, topics: flow.topics, subscriptions, queues, eventSourceMappings, functions: flow.functions, notSimulated };
}
