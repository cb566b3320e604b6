/**
 * Runs the scenario's producer probe after a run: finds the outbox the producer writes to (its `IEF_OUTBOX_TABLE_NAME`,
 * resolved to the local table) and that outbox's committed events, hands the probe the producer's environment and its
 * events (those its function wrote: another producer or a subscriber may share the outbox), and returns the business
 * changes it reports with the outbox's events: a fact of the run, which the dual-write check reads
 * (check/rules/dual-writes.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENV } from '../../lambda/contract/environment';
import type { ProducerProbeOutcome } from '../check/run-check';
import type { FlowModel, ResourceKey } from '../model/flow-model';
import type { LocalFlow } from './build-flow';
import type { CommittedOutbox } from './committed-events';
import type { ScenarioProducer } from './scenario';
import type { SimulatedEvent } from '../observation/run-facts';

/** What the probe run needs from the run. */
export interface ProducerProbeRun {
  readonly model: FlowModel;
  readonly flow: LocalFlow;
  readonly documents: DynamoDBDocumentClient;
  readonly committed: CommittedOutbox;
  /** The producer function's key. */
  readonly producerKey: ResourceKey;
  /** The producer as the report names it (its construct path). */
  readonly producerName: string;
  /**
   * The outbox events the producer's function wrote, as the run heard its requests (observation/outbox-writes.ts): the
   * producer's events are those, of its `eventTypes` when given; another producer's or a subscriber's on the same
   * outbox are not its own. @default every event of its outbox is the producer's (of its `eventTypes`)
   */
  readonly writtenByProducer?: ReadonlySet<string>;
}

/** The committed event ids of the relays that read the outbox table the producer writes to; all relays' when it names none. */
function outboxEventIds(run: ProducerProbeRun, environment: Readonly<Record<string, string>>): Set<string> {
  const outboxTable = environment[ENV.OUTBOX_TABLE_NAME];
  const relays = run.model.relays.filter((relay) => outboxTable === undefined || run.flow.tables.get(relay.sourceTable)?.tableName === outboxTable);
  return new Set(relays.flatMap((relay) => run.committed.eventIdsByRelay.get(relay.key) ?? []));
}

/** Runs `producer.probe` (when the scenario gives one: else undefined) and returns what it reported, or why it threw. */
export async function probeProducerWrites(producer: ScenarioProducer, run: ProducerProbeRun): Promise<ProducerProbeOutcome | undefined> {
  if (producer.probe === undefined) return undefined;
  const environment = run.flow.environments.get(run.producerKey) ?? {};
  const inOutbox = outboxEventIds(run, environment);
  const types = producer.eventTypes === undefined ? undefined : new Set(producer.eventTypes);
  const written = run.writtenByProducer;
  const events = [...inOutbox].flatMap((id): SimulatedEvent[] => {
    const event = run.committed.eventsById.get(id);
    return event !== undefined && (types === undefined || types.has(event.type)) && (written === undefined || written.has(id)) ? [event] : [];
  });
  try {
    const changes = await producer.probe({ client: run.documents, environment, events });
    return { producer: run.producerName, changes, inOutbox, producerEventIds: new Set(events.map((event) => event.id)) };
  } catch (error) {
    return { producer: run.producerName, error: error instanceof Error ? error.message : String(error) };
  }
}
