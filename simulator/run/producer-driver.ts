/**
 * Drives the producer side of a run: invokes the scenario's producer function (the real bundled asset) with its
 * commands, retrying a failed invocation as a client would, or appends user-supplied events to the outbox table through
 * the runtime's own `Outbox`, so they take the same path (stream → relay) as a producer's events.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { loadClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';
import { Outbox } from '../../lambda/producer/outbox';
import { resolveEnvironment } from '../model/intrinsics';
import { loadProducerConfig } from '../../lambda/config';
import { ENV } from '../../lambda/contract/environment';
import { MAX_MESSAGE_BYTES } from '../../lambda/contract/wire-format';
import type { FunctionRunner } from '../lambda/function-runner';
import { constructSegments, resourcesNamed, shownName } from '../model/find-resource';
import type { FlowModel, FunctionModel, ModelledResource, RelayModel, ResourceKey } from '../model/flow-model';
import type { LocalFlow } from './build-flow';
import { describeFailure } from '../observation/observer';
import type { UserEvent } from './options';
import type { ProducerFigures } from '../observation/run-facts';

/** How many times a client invokes a producer command before giving up on it. */
export const PRODUCER_ATTEMPTS = 3;

/** Longest response quoted in a failed command's reason. */
const MAX_RESPONSE_CHARACTERS = 200;

/** Whether a producer's response fails its command, when the scenario does not say: an HTTP `statusCode` of 500 or more (API Gateway's proxy response). */
export function isServerErrorResponse(response: unknown): boolean {
  const statusCode = typeof response === 'object' && response !== null ? (response as { statusCode?: unknown }).statusCode : undefined;
  return typeof statusCode === 'number' && statusCode >= 500;
}

/** Thrown when the scenario's producer names no function, or several. */
export class ProducerNotFoundError extends Error {
  public override readonly name = 'ProducerNotFoundError';
}

/** Finds a function by logical id, construct path, or a trailing part of its construct path (e.g. `Orders/PlaceOrder`). */
export function findFunction(model: FlowModel, reference: string): FunctionModel {
  const matches = resourcesNamed(model.functions, reference);
  if (matches.length === 1) return matches[0]!;
  const shown = shownName;
  const known = model.functions.map(shown).join(', ');
  if (matches.length === 0) throw new ProducerNotFoundError(`scenario producer.function '${reference}' names no function of the app; its functions are: ${known}`);
  throw new ProducerNotFoundError(`scenario producer.function '${reference}' names ${matches.length} functions (${matches.map(shown).join(', ')}); give more of the construct path`);
}

/** Invokes the producer with each command in turn (`concurrency` at a time, by {@link ProducerDriver.next}). */
export class ProducerDriver {
  public readonly figures: ProducerFigures;
  private nextIndex = 0;

  /**
   * @param runner the producer function's runner
   * @param commands the payloads, in order
   * @param name the producer as its failed commands are named when the scenario drives several @default unnamed
   * @param wroteUnseen whether an invocation (by its invocation key) had a write applied that it did not see @default never
   * @param failedResponse whether a response the function returned fails the command @default {@link isServerErrorResponse}
   */
  public constructor(
    private readonly runner: FunctionRunner,
    private readonly commands: readonly unknown[],
    public readonly name?: string,
    private readonly wroteUnseen: (invocationKey: string) => boolean = () => false,
    private readonly failedResponse: (response: unknown) => boolean = isServerErrorResponse,
  ) {
    this.figures = { total: commands.length, succeeded: 0, retried: 0, failed: [] };
  }

  /** Commands not started yet. */
  public get remaining(): number {
    return this.commands.length - this.nextIndex;
  }

  /** Runs the next `count` commands concurrently, each with up to {@link PRODUCER_ATTEMPTS} attempts. */
  public async next(count: number): Promise<number> {
    const indexes: number[] = [];
    while (indexes.length < count && this.nextIndex < this.commands.length) indexes.push(this.nextIndex++);
    await Promise.all(indexes.map((index) => this.invoke(index)));
    return indexes.length;
  }

  private async invoke(index: number): Promise<void> {
    let reason = '';
    let afterUnseenWrite = false;
    for (let attempt = 1; attempt <= PRODUCER_ATTEMPTS; attempt += 1) {
      const invocationKey = `producer|${index}|${attempt}`;
      const outcome = await this.runner.invoke(this.commands[index], invocationKey);
      const failure = describeFailure(outcome) ?? (outcome.kind === 'returned' && this.failedResponse(outcome.response) ? `the invocation returned a failed response: ${quotedResponse(outcome.response)}` : undefined);
      if (failure === undefined) {
        this.figures.succeeded += 1;
        return;
      }
      reason = failure;
      afterUnseenWrite ||= this.wroteUnseen(invocationKey);
      if (attempt < PRODUCER_ATTEMPTS) this.figures.retried += 1;
    }
    this.figures.failed.push({ index, reason, ...(this.name === undefined ? {} : { producer: this.name }), ...(afterUnseenWrite ? { afterUnseenWrite } : {}) });
  }
}

function quotedResponse(response: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(response) ?? String(response);
  } catch {
    text = String(response);
  }
  return text.length > MAX_RESPONSE_CHARACTERS ? `${text.slice(0, MAX_RESPONSE_CHARACTERS - 1)}…` : text;
}

/** Several producers driven together: each round runs the next commands of every one of them. */
export class ProducerDrivers {
  public constructor(private readonly drivers: readonly ProducerDriver[]) {}

  /** Commands not started yet, of all producers. */
  public get remaining(): number {
    return this.drivers.reduce((sum, driver) => sum + driver.remaining, 0);
  }

  /** Runs the next `count` commands of each producer, all concurrently. */
  public async next(count: number): Promise<number> {
    const started = await Promise.all(this.drivers.map((driver) => driver.next(count)));
    return started.reduce((sum, commands) => sum + commands, 0);
  }

  /** The figures summed over the producers, and each producer's own when there are several. */
  public get figures(): ProducerFigures {
    const all = this.drivers.map((driver) => driver.figures);
    return {
      total: all.reduce((sum, figures) => sum + figures.total, 0),
      succeeded: all.reduce((sum, figures) => sum + figures.succeeded, 0),
      retried: all.reduce((sum, figures) => sum + figures.retried, 0),
      failed: all.flatMap((figures) => figures.failed),
      ...(this.drivers.length > 1 && {
        byProducer: this.drivers.map(({ name, figures }) => ({
          producer: name ?? '(unnamed)',
          total: figures.total,
          succeeded: figures.succeeded,
          retried: figures.retried,
          failed: figures.failed.length,
        })),
      }),
    };
  }
}

/** Thrown when a user event's `flow` names no outbox relay of the app, or several. */
export class UnknownFlowError extends Error {
  public override readonly name = 'UnknownFlowError';
}

/**
 * The relay whose outbox a user event goes to: the one `reference` names (the flow that owns it, e.g. `Orders`, the
 * relay or the outbox table, each by construct path or a trailing part of it, or logical id), else the app's first.
 */
export function relayFor(model: FlowModel, reference: string | undefined): RelayModel {
  const first = model.relays[0];
  if (first === undefined) throw new Error('--events needs an outbox: the app has no pipe from a DynamoDB table stream to an SNS topic');
  if (reference === undefined) return first;
  const owner = (resource: ModelledResource | undefined): ModelledResource[] => {
    if (resource?.constructPath === undefined) return [];
    const segments = constructSegments(resource.constructPath);
    return [{ ...resource, constructPath: segments.slice(0, -1).join('/') }];
  };
  const matches = model.relays.filter((relay) => {
    const table = model.tables.find((candidate) => candidate.key === relay.sourceTable);
    const names = [relay, ...(table ? [table] : []), ...owner(relay), ...owner(table)];
    return resourcesNamed(names, reference).length > 0;
  });
  const known = model.relays.map((relay) => `${shownName(relay)} (outbox ${shownName(model.tables.find((table) => table.key === relay.sourceTable) ?? relay)})`).join(', ');
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new UnknownFlowError(`event flow '${reference}' names no outbox relay of the app; its relays are: ${known}`);
  throw new UnknownFlowError(`event flow '${reference}' names ${matches.length} outbox relays (${matches.map(shownName).join(', ')}); give more of the construct path`);
}

/** The outbox a user event is appended through: its table's settings, from a function that writes there or its key schema. */
function outboxFor(model: FlowModel, flow: LocalFlow, client: DynamoDBClient, relay: RelayModel, newId: () => string): Outbox {
  const table = model.tables.find((candidate) => candidate.key === relay.sourceTable);
  const local = table ? flow.tables.get(table.key) : undefined;
  if (table === undefined || local === undefined) throw new Error(`--events: the outbox table of relay ${shownName(relay)} is not simulated`);
  const producerEnvironment = [...flow.environments.values()].find((environment) => environment[ENV.OUTBOX_TABLE_NAME] === local.tableName);
  const config = producerEnvironment
    ? loadProducerConfig(producerEnvironment)
    : {
        outboxTableName: local.tableName,
        partitionKeyName: table.keySchema.find((key) => key.KeyType === 'HASH')!.AttributeName,
        sortKeyName: table.keySchema.find((key) => key.KeyType === 'RANGE')?.AttributeName,
        timeToLiveAttributeName: table.timeToLiveAttribute,
        eventRetentionSeconds: 7 * 24 * 3600,
        eventSource: 'urn:idempotent-event-flow:simulator',
        // as the constructs size it: a full batch of the relay fits one PublishBatch to its topic
        maxEventBytes: Math.floor((model.topics.find((topic) => topic.key === relay.targetTopic)?.maximumMessageSize ?? MAX_MESSAGE_BYTES) / relay.batchSize),
      };
  // a flow with a payload bucket (offloadLargeEvents): its producers' claim-check settings, written through the run's S3
  // endpoint as the simulator's own requests (not a function's: no IAM evaluation, no faults)
  const claimCheckConfig = loadClaimCheckConfig(producerEnvironment ?? writerEnvironment(model, flow, local.tableName) ?? {});
  if (claimCheckConfig !== undefined && flow.s3 !== undefined) {
    const s3 = new S3Client({ region: 'us-east-1', endpoint: flow.s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'SIMULATOR', secretAccessKey: 'SIMULATOR' } });
    return new Outbox({ client, config, newId, claimCheck: { config: claimCheckConfig, store: new S3PayloadStore(s3) } });
  }
  return new Outbox({ client, config, newId });
}

/**
 * The environment, resolved to the run's names, of a function of the model that writes to the outbox table
 * `tableName`, whether or not the run runs it (with `--events`, a flow's producers are not run); undefined when none.
 */
function writerEnvironment(model: FlowModel, flow: LocalFlow, tableName: string): Record<string, string> | undefined {
  for (const fn of model.functions) {
    let environment: Record<string, string>;
    try {
      environment = resolveEnvironment(fn, flow.names);
    } catch {
      continue; // a variable the run cannot resolve: not a writer it can take settings from
    }
    if (environment[ENV.OUTBOX_TABLE_NAME] === tableName) return environment;
  }
  return undefined;
}

/**
 * Appends user events to the outbox of the flow each names (`flow`), or of the app's first relay. The outbox settings
 * are those of a function that writes to that table (its `IEF_OUTBOX_*` variables, and its claim-check's
 * `IEF_PAYLOAD_*` ones: an event too large to travel inline is offloaded to the flow's payload bucket, as that function
 * would offload it), else they are read from the table's key schema. Every event's flow is resolved before any is written, so a wrong name writes nothing.
 */
export async function appendUserEvents(model: FlowModel, flow: LocalFlow, client: DynamoDBClient, events: readonly UserEvent[], newId: () => string): Promise<ProducerFigures> {
  const relays = events.map((event) => relayFor(model, event.flow));
  if (events.length === 0) relayFor(model, undefined);
  const outboxes = new Map<ResourceKey, Outbox>();
  const figures: ProducerFigures = { total: events.length, succeeded: 0, retried: 0, failed: [] };
  for (const [index, event] of events.entries()) {
    const relay = relays[index]!;
    let outbox = outboxes.get(relay.key);
    if (outbox === undefined) {
      outbox = outboxFor(model, flow, client, relay, newId);
      outboxes.set(relay.key, outbox);
    }
    const { flow: _flow, ...newEvent } = event;
    try {
      await outbox.transactWrite({ items: [], events: [newEvent] });
      figures.succeeded += 1;
    } catch (error) {
      figures.failed.push({ index, reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    }
  }
  return figures;
}

/** The keys of the functions a run needs besides the consumers. */
export function producerKeys(producers: readonly FunctionModel[]): ResourceKey[] {
  return producers.map((producer) => producer.key);
}
