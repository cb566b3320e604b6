/**
 * What a finished run leaves serving when it is asked to (`simulate --serve`): its DynamoDB Local and SQS endpoint,
 * with the tables and queues as the run left them, and where each subscriber's and relay's resources are on them, so
 * an operator can point the CLI at the run. The run hands these over instead of stopping them; whoever takes them
 * calls {@link RunServices.stop}.
 */
import { ENV } from '../../lambda/contract/environment';
import { parseSubscriberDeployment, SUBSCRIBER_DEPLOYMENT_FORMAT, type SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import type { VirtualClock } from '../aws/clock';
import type { FlowModel } from '../model/flow-model';
import type { LocalFlow } from './build-flow';
import type { RunLedger } from '../observation/ledger';
import type { CatchingUpRelay } from './relay-catch-up';
import { ServeConsumer, type ServeActivity, type ServeWatch } from './serve-consumer';
import { startAwsGateway } from '../aws/aws-gateway';
import { cloudFormationHandler } from '../aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction, type ServedEventSourceMapping } from '../aws/lambda-endpoint';
import type { LoopbackServer } from '../aws/loopback-server';
import { servedStacks } from './served-stacks';
import { servedSessions, type ServedSessions } from './served-sessions';

/** One subscriber's resources on the served run. */
export interface ServedSubscriber {
  /** Its name (`IEF_SUBSCRIBER_NAME`, else the subscription's construct path). */
  readonly name: string;
  /** Its queue's URL on the run's SQS endpoint (where a redrive or a replay sends). */
  readonly queueUrl: string;
  /** The queue's dead-letter queue (its redrive policy's), and the runtime's own when it is another queue. */
  readonly deadLetterQueueUrls: readonly string[];
  /** What SNS could not deliver to the queue. @default none: the subscription has no dead-letter queue */
  readonly subscriptionDeadLetterQueueUrl?: string;
  /** `IEF_INBOX_TABLE_NAME` of its consumer, the local name. @default none: no consumer, or it keeps no inbox */
  readonly inboxTable?: string;
  /** `IEF_DEDUPLICATION_WINDOW_SECONDS` of its consumer. @default unknown (no consumer) */
  readonly deduplicationWindowSeconds?: number;
  /** The outbox tables of the relays that publish to its topic (what `replay` reads). */
  readonly outboxTables: readonly string[];
  /**
   * What its `<subscriber>/Operator` stack output would say, with the run's local names: the value the operator
   * commands take as `--subscriber-output`. @default none: it has no consumer whose mode is known
   */
  readonly deployment?: SubscriberDeployment;
}

/** One relay's resources on the served run. */
export interface ServedRelay {
  /** Its construct path, else its resource key. */
  readonly name: string;
  /** The local name of its source table, the outbox. */
  readonly outboxTable: string;
  /** @default none: the pipe has no dead-letter queue */
  readonly deadLetterQueueUrl?: string;
}

/** The services a run left serving. */
export interface RunServices {
  /** The run's DynamoDB Local (`http://127.0.0.1:<port>`), with the run's tables. */
  readonly dynamoDbEndpoint: string;
  /** The process id of the DynamoDB Local the run started; undefined when the run used a running one (`--endpoint`), which it leaves running. */
  readonly dynamoDbPid?: number;
  /** The run's SQS endpoint (`http://127.0.0.1:<port>`), the origin of every queue URL of the run. */
  readonly sqsEndpoint: string;
  /** The run's region (in its ARNs). */
  readonly region: string;
  /** The served stacks, each with the account and Region its stack id carries (the app's `env`, else the local account). @default none listed */
  readonly stacks?: readonly { readonly stackName: string; readonly account: string; readonly region: string }[];
  /** The run's clock, epoch ms: it stands still during a run except when the run moves it. */
  now(): number;
  /**
   * From now on the run's clock moves with real time from where it stands, as an operator working on the services
   * expects: a message read reappears when its visibility timeout passes, a message move task moves its messages.
   */
  runClockWithRealTime(): void;
  /** Each subscription's resources, in the order of the run's report. */
  readonly subscribers: readonly ServedSubscriber[];
  /** Each relay's resources. */
  readonly relays: readonly ServedRelay[];
  /** The file every function's output goes to (JSON lines), the run's and the served flow's. @default none: not written */
  readonly logFile?: string;
  /**
   * Whether a handler changed on disk is bundled again while serving (see serve-consumer.ts): the run knows the app
   * command (`--app` or the project's cdk.json).
   */
  readonly watchesApp: boolean;
  /**
   * From now on the flow works while it serves, without the run's faults: relays read their streams, event source
   * mappings invoke their functions, a changed handler is bundled again (see serve-consumer.ts). Each invocation and
   * re-bundling is told to `onActivity`. A second call does nothing.
   */
  startConsuming(onActivity: (activity: ServeActivity) => void): void;
  /**
   * Starts the one endpoint that answers every AWS call of the served app and of `verify` (simulator/aws/aws-gateway.ts):
   * CloudFormation's stack reads of the served stacks, Lambda Invoke of the run's functions, DynamoDB, SQS and SNS,
   * and S3 when the app has a bucket (the flow's payload bucket: an offloaded event's data);
   * resolves with its URL (what `AWS_ENDPOINT_URL` is set to). A second call resolves with the same URL.
   */
  startAwsEndpoint(): Promise<string>;
  /** Stops the served flow's work, the run's functions, its SQS endpoint and the DynamoDB Local it started. */
  stop(): Promise<void>;
}

/** What the served flow needs to go on working (see {@link RunServices.startConsuming}). */
export interface ServedFlowParts {
  readonly relays: readonly Pick<CatchingUpRelay, 'poll'>[];
  readonly ledger: Pick<RunLedger, 'addInvocationListener'>;
  readonly concurrency: number;
  /** Called when consumption starts: the run's faults stop. */
  readonly stopFaults: () => void;
  /** @default the app is not watched */
  readonly watch?: ServeWatch;
  /** @default none */
  readonly logFile?: string;
}

/** A DynamoDB Local as the run holds it. */
export interface RunDatabase {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Set when the run started it. */
  readonly pid?: number;
  /** Stops it (a no-op for one the run did not start). */
  stop(): Promise<void>;
}

/** The output a subscriber's values make, or undefined when they are not one (no known mode, no dead-letter queue). */
function deploymentOf(values: Record<string, unknown>): SubscriberDeployment | undefined {
  try {
    return parseSubscriberDeployment(JSON.stringify(values));
  } catch {
    return undefined;
  }
}

/** Where the run's resources are, from its model and local flow; `stop` stops the flow, then the database. */
export function runServices(model: FlowModel, flow: LocalFlow, database: RunDatabase, clock: VirtualClock, region: string, parts: ServedFlowParts): RunServices {
  let consumer: ServeConsumer | undefined;
  let gateway: Promise<LoopbackServer> | undefined;
  let sessions: ServedSessions | undefined;
  let invocations = 0;
  // read now: the assembly directory of a run may be a temporary one, gone once the run is handed over
  const stacks = servedStacks(model, flow.names, new Date(clock.now()));
  const urlOf = (key: string | undefined): string | undefined => (key === undefined ? undefined : flow.queues.get(key)?.address.url);
  const relays = model.relays.flatMap((relay): ServedRelay[] => {
    const outboxTable = flow.tables.get(relay.sourceTable)?.tableName;
    if (outboxTable === undefined) return [];
    const deadLetterQueueUrl = urlOf(relay.deadLetterQueue);
    return [{ name: relay.constructPath ?? relay.key, outboxTable, ...(deadLetterQueueUrl === undefined ? {} : { deadLetterQueueUrl }) }];
  });
  const subscribers = flow.subscribers.map((subscriber): ServedSubscriber => {
    const { environment, subscription, queue } = subscriber;
    const redriveTarget = urlOf(queue.model.redrive?.deadLetterQueue);
    const runtimeTarget = environment[ENV.DEAD_LETTER_QUEUE_URL];
    const deadLetterQueueUrls = [...new Set([redriveTarget, runtimeTarget].filter((url): url is string => url !== undefined && url !== ''))];
    const subscriptionDeadLetterQueueUrl = urlOf(subscription.deadLetterQueue);
    const inboxTable = environment[ENV.INBOX_TABLE_NAME];
    const window = Number(environment[ENV.DEDUPLICATION_WINDOW_SECONDS]);
    // an ordered subscriber (a FIFO queue): its events come from an ordered relay (a Pipe to a queue), whose outbox
    // holds the history replay reads
    const ordered = queue.model.fifo;
    const outboxTables = model.relays
      .filter((relay) => (ordered ? relay.targetQueue !== undefined : relay.targetTopic === subscription.topic))
      .flatMap((relay) => {
        const table = flow.tables.get(relay.sourceTable)?.tableName;
        return table === undefined ? [] : [table];
      });
    const topicArn = flow.names.ref(subscription.topic);
    const deployment = deploymentOf({
      format: SUBSCRIBER_DEPLOYMENT_FORMAT,
      subscriberName: subscriber.name,
      ...(ordered ? { ordered: true } : {}),
      processingMode: environment[ENV.PROCESSING_MODE] ?? (inboxTable === undefined || inboxTable === '' ? undefined : 'transactional'),
      ...(Number.isInteger(window) && window > 0 ? { deduplicationWindowSeconds: window } : {}),
      keepBlockedMessageBody: environment[ENV.KEEP_BLOCKED_MESSAGE_BODY] === 'true',
      ...(subscription.filterPolicy === undefined ? {} : { filterPolicy: subscription.filterPolicy, filterPolicyScope: subscription.filterPolicyScope }),
      ...(outboxTables.length === 1 ? { outboxTable: outboxTables[0] } : {}),
      ...(inboxTable === undefined || inboxTable === '' ? {} : { inboxTable }),
      queueUrl: queue.address.url,
      deadLetterQueueUrl: redriveTarget ?? runtimeTarget,
      ...(subscriptionDeadLetterQueueUrl === undefined ? {} : { subscriptionDeadLetterQueueUrl }),
      // the topic's ARN, as the constructs' output names it: the flow's account and Region for replay --flow-profile
      ...(topicArn === undefined ? {} : { topicArn }),
    });
    return {
      name: subscriber.name,
      ...(deployment === undefined ? {} : { deployment }),
      queueUrl: queue.address.url,
      deadLetterQueueUrls,
      ...(subscriptionDeadLetterQueueUrl === undefined ? {} : { subscriptionDeadLetterQueueUrl }),
      ...(inboxTable === undefined || inboxTable === '' ? {} : { inboxTable }),
      ...(Number.isInteger(window) && window > 0 ? { deduplicationWindowSeconds: window } : {}),
      outboxTables: [...new Set(outboxTables)],
    };
  });
  return {
    dynamoDbEndpoint: database.endpoint,
    ...(database.pid === undefined ? {} : { dynamoDbPid: database.pid }),
    sqsEndpoint: flow.sqsEndpoint,
    region,
    stacks: stacks.map((stack) => ({ stackName: stack.stackName, account: stack.stackId.split(':')[4] ?? '', region: stack.stackId.split(':')[3] ?? region })),
    now: () => clock.now(),
    runClockWithRealTime: () => clock.runWithRealTime(),
    subscribers,
    relays,
    ...(parts.logFile === undefined ? {} : { logFile: parts.logFile }),
    watchesApp: parts.watch !== undefined,
    startConsuming: (onActivity) => {
      if (consumer !== undefined) return;
      parts.stopFaults();
      const { watch } = parts;
      consumer = new ServeConsumer({ flow, relays: parts.relays, ledger: parts.ledger, concurrency: parts.concurrency, onActivity, ...(watch === undefined ? {} : { watch }) });
      consumer.start();
    },
    startAwsEndpoint: async () => {
      gateway ??= (() => {
        const functions = new Map<string, InvokableFunction>();
        for (const [key, runner] of flow.runners) {
          const name = flow.names.ref(key);
          const arn = flow.names.getAtt(key, 'Arn');
          if (name === undefined || arn === undefined) continue;
          functions.set(name, { arn, environment: flow.environments.get(key) ?? {}, invoke: (event) => runner.invoke(event, `served-invoke|${(invocations += 1)}`) });
        }
        const mappings = model.eventSourceMappings.flatMap((mapping): ServedEventSourceMapping[] => {
          const eventSourceArn = flow.names.getAtt(mapping.queue, 'Arn');
          const functionName = flow.names.ref(mapping.function);
          return eventSourceArn === undefined || functionName === undefined ? [] : [{ uuid: mapping.key, eventSourceArn, functionName, batchSize: mapping.batchSize }];
        });
        // STS answers AssumeRole under the run's IAM; a session's DynamoDB requests are authorized under its role
        sessions = servedSessions(flow.access, database.endpoint);
        return startAwsGateway({
          // S3: the run's S3 endpoint (its IAM evaluation; faults stopped once the flow serves), for an offloaded
          // event's data (verify reads it: simulator/verify/offloaded-data.ts)
          forward: { dynamodb: database.endpoint, sqs: flow.sqsEndpoint, sns: flow.snsEndpoint, ...(flow.s3 === undefined ? {} : { s3: flow.s3.endpoint }) },
          handle: { cloudformation: cloudFormationHandler(stacks), lambda: lambdaHandler(functions, mappings, () => 'the served run'), sts: sessions.sts.handler },
          route: sessions.route,
        });
      })();
      return (await gateway).endpoint;
    },
    stop: async () => {
      try {
        await (await gateway)?.stop();
        await sessions?.stop();
        await consumer?.stop();
        await flow.stop();
      } finally {
        consumer?.removeAssemblies();
        await database.stop();
      }
    },
  };
}
