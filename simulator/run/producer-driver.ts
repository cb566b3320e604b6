/**
 * Drives the producer side of a run: invokes the scenario's producer function (the real bundled asset) with its
 * commands, retrying a failed invocation as a client would, or appends user-supplied events to the outbox table through
 * the runtime's own `Outbox`, so they take the same path (stream → relay) as a producer's events.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Outbox } from '../../lambda/producer/outbox';
import { loadProducerConfig, ENV } from '../../lambda/config';
import type { FunctionRunner } from '../lambda/function-runner';
import { resourcesNamed, shownName } from '../model/find-resource';
import type { FlowModel, FunctionModel, ResourceKey } from '../model/flow-model';
import type { LocalFlow } from './build-flow';
import { describeFailure } from './observer';
import type { UserEvent } from './options';

/** How many times a client invokes a producer command before giving up on it. */
export const PRODUCER_ATTEMPTS = 3;

/** What the producer side did. */
export interface ProducerFigures {
  /** Commands (or user events) to produce. */
  readonly total: number;
  /** Commands whose invocation eventually returned. */
  succeeded: number;
  /** Invocations that failed and were tried again. */
  retried: number;
  /** Commands that failed every attempt, with the last reason (their events may still have committed: a lost response). */
  readonly failed: { readonly index: number; readonly reason: string }[];
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

  public constructor(
    private readonly runner: FunctionRunner,
    private readonly commands: readonly unknown[],
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
    for (let attempt = 1; attempt <= PRODUCER_ATTEMPTS; attempt += 1) {
      const failure = describeFailure(await this.runner.invoke(this.commands[index], `producer|${index}|${attempt}`));
      if (failure === undefined) {
        this.figures.succeeded += 1;
        return;
      }
      reason = failure;
      if (attempt < PRODUCER_ATTEMPTS) this.figures.retried += 1;
    }
    this.figures.failed.push({ index, reason });
  }
}

/**
 * Appends user events to the outbox of the flow's first relay. The outbox settings are those of a function that writes
 * to that table (its `IEF_OUTBOX_*` variables), else they are read from the table's key schema.
 */
export async function appendUserEvents(model: FlowModel, flow: LocalFlow, client: DynamoDBClient, events: readonly UserEvent[], newId: () => string): Promise<ProducerFigures> {
  const relay = model.relays[0];
  const table = relay ? model.tables.find((candidate) => candidate.key === relay.sourceTable) : undefined;
  const local = table ? flow.tables.get(table.key) : undefined;
  if (relay === undefined || table === undefined || local === undefined) {
    throw new Error('--events needs an outbox: the app has no pipe from a DynamoDB table stream to an SNS topic');
  }
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
      };
  const outbox = new Outbox({ client, config, newId });
  const figures: ProducerFigures = { total: events.length, succeeded: 0, retried: 0, failed: [] };
  for (const [index, event] of events.entries()) {
    try {
      await outbox.transactWrite({ items: [], events: [event] });
      figures.succeeded += 1;
    } catch (error) {
      figures.failed.push({ index, reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    }
  }
  return figures;
}

/** The keys of the functions a run needs besides the consumers. */
export function producerKeys(producer: FunctionModel | undefined): ResourceKey[] {
  return producer ? [producer.key] : [];
}
