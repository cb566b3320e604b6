/**
 * Builds the local flow from the model: tables in DynamoDB Local, queues, topics with their subscriptions, relays,
 * the functions' runners and the event source mappings; and, for each subscription, the view the report and the checks
 * use (its queue, dead-letter queues, consumer function and resolved environment).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { ENV } from '../../lambda/contract/environment';
import { SimulatedQueue } from '../aws/queue';
import { startSqsEndpoint } from '../aws/sqs-endpoint';
import { startSnsEndpoint } from '../aws/sns-endpoint';
import { startS3Endpoint, type S3Endpoint } from '../aws/s3-endpoint';
import { localBucketName, startLocalS3, type LocalS3 } from '../aws/s3-local';
import { decideS3ObjectFault, decideS3RequestFault, S3_FAULT_KIND } from '../faults/s3-faults';
import { SqsSenders } from '../aws/sqs-senders';
import { SimulatedRelay, type RelayTarget } from '../aws/stream-relay';
import { relayQueueTarget } from '../aws/relay-queue-target';
import { createTables, type LocalTable } from '../aws/tables';
import { TransactionConflicts } from '../aws/transaction-conflicts';
import { listedSettings, SimulatedTopic, type ListedSubscription, type TopicSubscriptionTarget } from '../aws/topic';
import { deterministicUuid } from '../aws/message-ids';
import type { VirtualClock } from '../aws/clock';
import type { FaultPlan } from '../faults/fault-plan';
import type { BatchMessage } from '../faults/fault-steering';
import type { ProxiedRequest, RequestAnswer, RequestFault } from '../faults/dynamodb-proxy';
import type { OutsideCall } from '../lambda/worker-protocol';
import { SimulatedEventSourceMapping } from '../lambda/event-source-mapping';
import { FunctionRunner } from '../lambda/function-runner';
import type { SeededScheduler } from '../schedule/seeded-scheduler';
import { resolveEnvironment } from '../model/intrinsics';
import type { FlowModel, QueueModel, ResourceKey } from '../model/flow-model';
import { compilePipeFilterCriteria } from '../../operator/patterns/event-pattern';
import { compileFilterPolicy } from '../../operator/patterns/filter-policy';
import { compileInputTemplate } from '../../operator/patterns/input-template';
import { FlowAccess } from '../iam/flow-access';
import type { PolicyEngine } from '../iam/policy-engine';
import { generatedName, LocalResourceNames, registerStaticNames } from '../model/local-names';
import { isPendingConfirmation, placeSubscription } from '../model/subscription-placement';
import { ExternalQueues } from './external-queues';
import { relayPublishersOf } from '../check/own-publishes';
import type { SimulationObserver } from '../observation/observer';
import type { SubscriberView } from '../observation/run-facts';

/** The local flow of a run. */
export interface LocalFlow {
  readonly names: LocalResourceNames;
  readonly tables: ReadonlyMap<ResourceKey, LocalTable>;
  readonly queues: ReadonlyMap<ResourceKey, SimulatedQueue>;
  /** Queues outside the templates the functions send to (see external-queues.ts). */
  readonly externalQueues: ExternalQueues;
  readonly relays: readonly SimulatedRelay[];
  readonly runners: ReadonlyMap<ResourceKey, FunctionRunner>;
  readonly mappings: readonly SimulatedEventSourceMapping[];
  readonly subscribers: readonly SubscriberView[];
  readonly environments: ReadonlyMap<ResourceKey, Readonly<Record<string, string>>>;
  /** IAM of the run: undefined when requests are not evaluated. */
  readonly access?: FlowAccess;
  /** The run's one arbiter of transaction conflicts, shared by every DynamoDB proxy (the functions' and the operator's). */
  readonly transactionConflicts: TransactionConflicts;
  /** The SQS endpoint of the run (`http://127.0.0.1:<port>`): the functions' SQS clients', and the origin of every queue URL. */
  readonly sqsEndpoint: string;
  /** The SNS endpoint of the run (`http://127.0.0.1:<port>`): the functions' SNS clients'. */
  readonly snsEndpoint: string;
  /** The run's S3 (its endpoint and what it did to objects), when the app has a bucket. @default none */
  readonly s3?: Pick<S3Endpoint, 'endpoint' | 'injectedObjectFaults' | 'readObject'> & { readonly buckets: ReadonlyMap<ResourceKey, string> };
  /** Stops the runners and the SQS endpoint. */
  stop(): Promise<void>;
}

/** What {@link buildLocalFlow} needs. */
export interface LocalFlowDependencies {
  readonly client: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  readonly dynamoDbEndpoint: string;
  readonly clock: VirtualClock;
  readonly faults: FaultPlan;
  readonly observer: SimulationObserver;
  readonly region: string;
  readonly concurrency: number;
  /** Functions to run besides the consumers of the event source mappings (the producer). */
  readonly extraFunctions: readonly ResourceKey[];
  /**
   * Appended to every table name, so runs against a shared DynamoDB Local do not collide (a template's own
   * `TableName` included). @default none
   */
  readonly tableNameSuffix?: string;
  /** Evaluates IAM on every request when given (and the model has an access model). @default requests are not evaluated */
  readonly policyEngine?: PolicyEngine;
  /** Picks the fault of each DynamoDB request of a function (`environment`, `messages`: see FunctionRunnerOptions.decideFault). */
  readonly decideFault: (functionKey: ResourceKey, invocationKey: string, request: ProxiedRequest, environment: number, messages: readonly BatchMessage[]) => RequestFault;
  /** Hears whether DynamoDB applied each request of a function's invocation, its reply lost or not. @default not heard */
  readonly onRequestAnswered?: (functionKey: ResourceKey, invocationKey: string, request: ProxiedRequest, answer: RequestAnswer) => void;
  /** Hears each HTTP call a function's invocation starts to a service outside the simulator (a replayable run's). @default not heard */
  readonly onOutsideCall?: (functionKey: ResourceKey, invocationKey: string, call: OutsideCall) => void;
  /** Decides the order of every function's DynamoDB requests and timers (a replayable run). @default none: they go as they come */
  readonly scheduler?: SeededScheduler;
  /** Where the optional `s3rver` package is looked for first (an app with a bucket). @default the working directory */
  readonly projectDirectory?: string;
}

function byKey<T extends { readonly key: ResourceKey }>(items: readonly T[]): Map<ResourceKey, T> {
  return new Map(items.map((item) => [item.key, item]));
}

/** Creates everything locally; on failure, stops what was started. */
export async function buildLocalFlow(model: FlowModel, deps: LocalFlowDependencies): Promise<LocalFlow> {
  const names = new LocalResourceNames(deps.region, model.environments);
  registerStaticNames(model, names);

  const suffix = deps.tableNameSuffix ?? '';
  const tables = await createTables(deps.client, model.tables, (table) =>
    table.tableName !== undefined ? `${table.tableName.slice(0, 255 - suffix.length)}${suffix}` : generatedName(table, 255, suffix),
  );
  for (const [key, table] of tables) {
    names.register(key, { ref: table.tableName, attributes: { Arn: table.tableArn, ...(table.streamArn ? { StreamArn: table.streamArn } : {}) } });
  }

  // a Put names its item by the key attributes of the table's key schema, as the template defines it
  const keySchemas = new Map(model.tables.map((table) => [tables.get(table.key)!.tableName, table.keySchema.map(({ AttributeName }) => AttributeName)]));
  const transactionConflicts = new TransactionConflicts(async (tableName) => keySchemas.get(tableName));

  const relayPublishers = relayPublishersOf(model, names);
  const eventTopics = { topics: relayPublishers.eventTopics, relays: new Set([...relayPublishers.relayFunctions, ...model.relays.map((relay) => relay.key)]) };
  const access = deps.policyEngine !== undefined && model.access !== undefined ? new FlowAccess(model.access, names, tables, deps.policyEngine, eventTopics) : undefined;
  const queuesByUrl = new Map<string, SimulatedQueue>();
  const senders = new SqsSenders();
  let sqsEndpoint = '';
  const externalQueues = new ExternalQueues({ endpoint: () => sqsEndpoint, clock: deps.clock, observer: deps.observer });
  const queuesByArn = new Map<string, SimulatedQueue>();
  const sqs = await startSqsEndpoint({
    resolveQueue: (url) => queuesByUrl.get(url),
    // StartMessageMoveTask and ListMessageMoveTasks (an operator's redrive of a served run: simulate --serve)
    resolveQueueArn: (arn) => queuesByArn.get(arn),
    resolveExternalQueue: (url) => externalQueues.resolve(url),
    senders,
    observer: deps.observer,
    ...(access === undefined ? {} : { authorize: access.sqsCheck() }),
  });
  sqsEndpoint = sqs.endpoint;
  const topicsByArn = new Map<string, SimulatedTopic>();
  const snsCheck = access?.snsCheck();
  const sns = await startSnsEndpoint({
    resolveTopic: (arn) => topicsByArn.get(arn),
    senders,
    // who published what: a function other than the ordered fan-out publishing to an event topic fails the run (../check/own-publishes.ts)
    observer: deps.observer,
    ...(snsCheck === undefined ? {} : { authorize: ({ accessKeyId, action, topic }) => snsCheck({ ...(accessKeyId === undefined ? {} : { accessKeyId }), action, topic: topic.model.key }) }),
  });
  const runners = new Map<ResourceKey, FunctionRunner>();
  let localS3: LocalS3 | undefined;
  let s3: S3Endpoint | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all([...runners.values()].map((runner) => runner.stop()));
    await Promise.all([sqs.stop(), sns.stop(), s3?.stop()]);
    await localS3?.stop();
  };
  try {
    // the buckets: a local S3 behind the run's S3 endpoint (IAM and faults: ../aws/s3-endpoint.ts)
    const bucketNames = new Map<ResourceKey, string>();
    const bucketsByName = new Map<string, { readonly key: ResourceKey; readonly bucketKeyEnabled?: boolean }>();
    for (const bucket of model.buckets ?? []) {
      const name = localBucketName(bucket);
      bucketNames.set(bucket.key, name);
      bucketsByName.set(name, { key: bucket.key, ...(bucket.bucketKeyEnabled === true ? { bucketKeyEnabled: true } : {}) });
      const arn = `arn:aws:s3:::${name}`;
      names.register(bucket.key, {
        ref: name,
        attributes: { Arn: arn, DomainName: `${name}.s3.amazonaws.com`, RegionalDomainName: `${name}.s3.${deps.region}.amazonaws.com`, DualStackDomainName: `${name}.s3.dualstack.${deps.region}.amazonaws.com` },
      });
    }
    if (bucketNames.size > 0) {
      localS3 = await startLocalS3([...bucketNames.values()], deps.projectDirectory);
      const s3Check = access?.s3Check();
      s3 = await startS3Endpoint({
        backend: localS3.endpoint,
        senders,
        ...(s3Check === undefined
          ? {}
          : {
              authorize: ({ accessKeyId, operation, bucket, key, headers }) => {
                const known = bucketsByName.get(bucket);
                return s3Check({ ...(accessKeyId === undefined ? {} : { accessKeyId }), operation, ...(known === undefined ? {} : { bucket: known }), objectKey: key, headers });
              },
            }),
        decideFault: (question) => decideS3RequestFault(deps.faults, question),
        decideObjectFault: (bucket, key) => decideS3ObjectFault(deps.faults, bucket, key),
        onFault: (fault, functionKey, target) => deps.observer.onFault?.(S3_FAULT_KIND[fault], functionKey ?? `s3://${target.bucket}`),
        now: () => deps.clock.now(),
      });
    }
    const queueModels = byKey(model.queues);
    const queues = new Map<ResourceKey, SimulatedQueue>();
    const createQueue = (queueModel: QueueModel): SimulatedQueue => {
      const existing = queues.get(queueModel.key);
      if (existing !== undefined) return existing;
      const deadLetterModel = queueModel.redrive ? queueModels.get(queueModel.redrive.deadLetterQueue) : undefined;
      const deadLetterQueue = deadLetterModel ? createQueue(deadLetterModel) : undefined;
      const name = queueModel.queueName ?? generatedName(queueModel, 80, queueModel.fifo ? '.fifo' : '');
      const address = { name, url: `${sqs.endpoint}/${names.accountOf(queueModel.key)}/${name}`, arn: names.arn('sqs', name, queueModel.key) };
      const queue = new SimulatedQueue({ model: queueModel, address, clock: deps.clock, deadLetterQueue, observer: deps.observer });
      queues.set(queueModel.key, queue);
      queuesByUrl.set(address.url, queue);
      queuesByArn.set(address.arn, queue);
      names.register(queueModel.key, { ref: address.url, attributes: { Arn: address.arn, QueueName: name, QueueUrl: address.url } });
      return queue;
    };
    model.queues.forEach(createQueue);

    const topics = new Map<ResourceKey, SimulatedTopic>();
    for (const topicModel of model.topics) {
      const subscriptions: TopicSubscriptionTarget[] = [];
      const arn = names.ref(topicModel.key)!;
      // what ListSubscriptionsByTopic lists (verify reads it: ../verify/topic-subscriptions.ts)
      const listed: ListedSubscription[] = [];
      for (const subscription of model.subscriptions) {
        if (subscription.topic !== topicModel.key || !queues.has(subscription.queue)) continue;
        // a queue of another account is subscribed by that account, which the topic's policy must allow: refused,
        // the subscription's stack would not deploy, so SNS delivers nothing to it (the denial fails the run)
        if (access !== undefined && (await access.subscribeCheck(subscription.key, topicModel.key, subscription.queue)) !== undefined) continue;
        // one the topic's account made for another account's queue is pending confirmation: SNS delivers nothing
        // through it (the run fails naming it: ../check/subscription-rules.ts)
        const placement = placeSubscription(model.environments, subscription);
        const pending = placement !== undefined && isPendingConfirmation(placement);
        listed.push({
          subscriptionArn: pending ? 'PendingConfirmation' : `${arn}:${deterministicUuid(`subscription:${arn}`, listed.length)}`,
          owner: placement?.subscription.account ?? names.accountOf(subscription.key),
          protocol: 'sqs',
          endpoint: queues.get(subscription.queue)!.address.arn,
          // what GetSubscriptionAttributes answers (verify matches the run's events with it: ../verify/subscription-filters.ts)
          ...listedSettings(subscription, subscription.deadLetterQueue === undefined ? undefined : queues.get(subscription.deadLetterQueue)?.address.arn),
        });
        if (pending) continue;
        const deadLetterQueue = subscription.deadLetterQueue === undefined ? undefined : queues.get(subscription.deadLetterQueue);
        subscriptions.push({
          model: subscription,
          queue: queues.get(subscription.queue)!,
          ...(deadLetterQueue === undefined ? {} : { deadLetterQueue }),
          ...(access === undefined
            ? {}
            : {
                authorizeDelivery: await access.deliveryCheck(topicModel.key, subscription.queue),
                ...(deadLetterQueue === undefined ? {} : { authorizeDeadLetter: await access.deliveryCheck(topicModel.key, deadLetterQueue.model.key) }),
              }),
        });
      }
      const policies = new Map(
        subscriptions.map(({ model: subscription }) => [
          subscription.key,
          subscription.filterPolicy ? compileFilterPolicy(subscription.filterPolicy, subscription.filterPolicyScope) : () => true,
        ]),
      );
      const topic = new SimulatedTopic({
        model: topicModel,
        arn,
        subscriptions,
        listed,
        faults: deps.faults,
        clock: deps.clock,
        observer: deps.observer,
        matches: (subscription, message) => policies.get(subscription.key)?.(message) ?? false,
      });
      topics.set(topicModel.key, topic);
      topicsByArn.set(arn, topic);
    }

    const relays: SimulatedRelay[] = [];
    for (const relayModel of model.relays) {
      const table = tables.get(relayModel.sourceTable);
      const topic = relayModel.targetTopic === undefined ? undefined : topics.get(relayModel.targetTopic);
      const targetQueue = relayModel.targetQueue === undefined ? undefined : queues.get(relayModel.targetQueue.queue);
      if (table?.streamArn === undefined || (topic === undefined && targetQueue === undefined)) continue;
      const target: RelayTarget =
        topic !== undefined
          ? { publish: (message) => topic.publish(message), refusesBatch: (messages) => topic.refusesBatch(messages) }
          : relayQueueTarget(relayModel.targetQueue!, targetQueue!);
      // one criteria function: a record passes if any of the pipe's patterns matches it (or there are none)
      const filters = [compilePipeFilterCriteria(relayModel.filterPatterns)];
      const render = compileInputTemplate(relayModel.inputTemplate);
      const pipeName = generatedName(relayModel, 64);
      const reserved = { pipeName, pipeArn: names.arn('pipes', `pipe/${pipeName}`), sourceArn: table.streamArn, targetArn: topic?.arn ?? targetQueue!.address.arn };
      const deadLetterQueue = relayModel.deadLetterQueue === undefined ? undefined : queues.get(relayModel.deadLetterQueue);
      relays.push(
        new SimulatedRelay({
          model: relayModel,
          streamArn: table.streamArn,
          streams: deps.streams,
          target,
          faults: deps.faults,
          region: deps.region,
          observer: deps.observer,
          filters,
          render: (event: unknown) => render(event, reserved),
          pipeArn: reserved.pipeArn,
          now: () => deps.clock.now(),
          ...(deadLetterQueue === undefined ? {} : { deadLetterQueue }),
          ...(access === undefined
            ? {}
            : {
                authorizeRead: access.streamReadCheck(relayModel.key, relayModel.sourceTable),
                authorizePublish:
                  relayModel.targetTopic !== undefined ? await access.publishCheck(relayModel.key, relayModel.targetTopic) : await access.pipeSendCheck(relayModel.key, relayModel.targetQueue!.queue),
                ...(deadLetterQueue === undefined ? {} : { authorizeDeadLetter: await access.pipeSendCheck(relayModel.key, deadLetterQueue.model.key) }),
              }),
        }),
      );
    }

    const functions = byKey(model.functions);
    const environments = new Map<ResourceKey, Readonly<Record<string, string>>>();
    const runnerOf = (functionKey: ResourceKey): FunctionRunner | undefined => {
      const fn = functions.get(functionKey);
      if (fn === undefined) return undefined;
      let runner = runners.get(functionKey);
      if (runner === undefined) {
        const environment = externalQueues.localize(resolveEnvironment(fn, names));
        environments.set(functionKey, environment);
        runner = new FunctionRunner({
          fn,
          functionName: names.ref(functionKey),
          accountId: names.accountOf(functionKey),
          environment,
          clock: deps.clock,
          dynamoDbEndpoint: deps.dynamoDbEndpoint,
          sqsEndpoint: sqs.endpoint,
          snsEndpoint: sns.endpoint,
          ...(s3 === undefined ? {} : { s3Endpoint: s3.endpoint }),
          region: deps.region,
          maxEnvironments: deps.concurrency,
          observer: deps.observer,
          decideFault: (invocationKey, request, environment, messages) => deps.decideFault(functionKey, invocationKey, request, environment, messages),
          ...(deps.onRequestAnswered === undefined ? {} : { onRequestAnswered: (invocationKey: string, request: ProxiedRequest, answer: RequestAnswer) => deps.onRequestAnswered?.(functionKey, invocationKey, request, answer) }),
          ...(deps.onOutsideCall === undefined ? {} : { onOutsideCall: (invocationKey: string, call: OutsideCall) => deps.onOutsideCall?.(functionKey, invocationKey, call) }),
          transactionConflicts: transactionConflicts.forCaller(functionKey),
          sqsSenders: senders,
          // a cold start then costs a step of the run only what is left of an init begun in the background
          preInitialize: true,
          ...(deps.scheduler === undefined ? {} : { scheduler: deps.scheduler }),
          ...(access === undefined ? {} : { authorizeDynamoDb: access.dynamoDbCheck(functionKey), accessKeyId: access.accessKeyIdOf(functionKey) }),
        });
        runners.set(functionKey, runner);
      }
      return runner;
    };

    const mappings = model.eventSourceMappings.flatMap((mappingModel) => {
      const queue = queues.get(mappingModel.queue);
      const runner = runnerOf(mappingModel.function);
      if (queue === undefined || runner === undefined) return [];
      return [
        new SimulatedEventSourceMapping({
          model: mappingModel,
          queue,
          runner,
          faults: deps.faults,
          region: deps.region,
          observer: deps.observer,
          ...(access === undefined ? {} : { authorizePolling: access.pollingCheck(mappingModel.function, mappingModel.queue) }),
        }),
      ];
    });
    deps.extraFunctions.forEach(runnerOf);

    const subscribers = model.subscriptions.flatMap((subscription): SubscriberView[] => {
      const queue = queues.get(subscription.queue);
      if (queue === undefined) return [];
      const mapping = model.eventSourceMappings.find((candidate) => candidate.queue === subscription.queue);
      const fn = mapping ? functions.get(mapping.function) : undefined;
      const environment = (fn && environments.get(fn.key)) ?? {};
      const deadLetterQueues = new Set<SimulatedQueue>();
      const redriveTarget = queue.model.redrive ? queues.get(queue.model.redrive.deadLetterQueue) : undefined;
      const subscriptionTarget = subscription.deadLetterQueue ? queues.get(subscription.deadLetterQueue) : undefined;
      const runtimeTarget = environment[ENV.DEAD_LETTER_QUEUE_URL] ? queuesByUrl.get(environment[ENV.DEAD_LETTER_QUEUE_URL]) : undefined;
      for (const target of [redriveTarget, subscriptionTarget, runtimeTarget]) if (target) deadLetterQueues.add(target);
      return [
        {
          name: environment[ENV.SUBSCRIBER_NAME] ?? subscription.constructPath ?? subscription.key,
          subscription,
          queue,
          deadLetterQueues: [...deadLetterQueues],
          mapping,
          function: fn,
          environment,
        },
      ];
    });

    const endpoint = s3;
    const s3View = endpoint === undefined ? undefined : { endpoint: endpoint.endpoint, injectedObjectFaults: () => endpoint.injectedObjectFaults(), readObject: (bucket: string, key: string) => endpoint.readObject(bucket, key), buckets: bucketNames };
    return {
      names,
      tables,
      queues,
      externalQueues,
      relays,
      runners,
      mappings,
      subscribers,
      environments,
      transactionConflicts,
      sqsEndpoint: sqs.endpoint,
      snsEndpoint: sns.endpoint,
      stop,
      ...(access === undefined ? {} : { access }),
      ...(s3View === undefined ? {} : { s3: s3View }),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
