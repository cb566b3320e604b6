/**
 * `verify --cleanup`: removes what the run created and only that, matched by exact keys, never by a substring:
 * - in every DynamoDB table of the stacks (the producer's business items, the subscribers' effects, the outbox, the
 *   inbox and its fences), the items one of whose key attributes is, or holds as a whole `#`, `|`, `/`, `:` or
 *   `@`-separated part, an id only this run has: an id value it made for its commands (`<run id>-order-00001`:
 *   ./run-ids.ts), an event id that carries the run id, or an id the runtime derived from one of the run's events
 *   (./derived-events.ts). Such a key cannot have existed before the run: the run id is new (time and 32 random bits).
 *   So `CUSTOMER#<run id>-customer-3` goes, `invoice-420` stays whatever the run's events are called;
 * - in the outbox tables, the items whose key is exactly the runtime's key of one of the run's events
 *   (`OUTBOX#<event id>`), whatever its id (one a handler chose, e.g. `invoice-42`);
 * - the dead letters of the run's events (exact event id) in the subscribers' dead-letter queues.
 * The subscribers' inbox tables are never cleaned (review v11, V11-11): their records of the run's events
 * (`<subscriber>#<event id>`, and an ordered subscriber's fences) are what makes a late duplicate delivery of one of them
 * (SNS and SQS deliver at least once) a no-op; deleted, it would be applied again. Nor is a record of the consumer
 * runtime in any table, recognised by its shape (./runtime-records.ts), whatever subscriber wrote it: also one of a
 * subscriber verify did not find (review r12, R12-1), nor an aggregate-mode subscriber's item (its processed message
 * ids are its only duplicate detection: review r12b, R12B-5). They are counted by kind and kept (a `kept ...` line
 * saying whether and when each kind expires: inbox and processing records by their TTL after the deduplication window;
 * fences, fence skip records and aggregate items never: review r12b, R12B-8).
 * An item whose key carries none of these stays, even when its other attributes name the run (a real customer's item a
 * run's event updated is not the run's; nor can verify tell the example's `INVOICE#<random id>` from it): the lines say
 * how many such items were left, per table. It reads the tables with a Scan: the handlers choose their items' keys
 * (`CUSTOMER#<customer id>`), which verify cannot compute. No queue is purged. Says what it removed, per table and queue.
 * The S3 objects of the run's offloaded events (the `dataref` of its outbox envelopes) are kept and named, exactly, with
 * why and when the bucket's lifecycle rule removes them (./kept-payloads.ts; review v11, V11-7).
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { OUTBOX_ITEM, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import type { VerifyClients } from './clients';
import type { DeployedFlow } from './deployed-flow';
import type { DerivedRunEvent } from './derived-events';
import { keptPayloadLines } from './kept-payloads';
import { DeadLettersUnreadError, deadLetterEventId, deadLetterQueuesOf, receiveWhole } from './observe';
import { keptRecordsLine, runtimeRecordOf, type RuntimeRecordKind } from './runtime-records';

/** What separates the parts of a composite key (`CUSTOMER#<id>`, `<subscriber>@sequence#<aggregate>`). */
const SEPARATORS = ['#', '|', '/', ':', '@'];

/** Whether `key` is `mark`, or holds it as a whole separated part (never as a substring of a longer part). */
export function keyHolds(key: string, mark: string): boolean {
  if (key === mark) return true;
  return SEPARATORS.some((separator) => key.startsWith(`${mark}${separator}`) || key.endsWith(`${separator}${mark}`) || key.includes(`${separator}${mark}${separator}`));
}

/**
 * A cleanup that failed part way (review r12b, R12B-7): what it removed before and after each failure (it goes on with
 * the other tables and queues), and each failure, naming its table or queue.
 */
export class CleanupPartlyFailedError extends Error {
  public override readonly name = 'CleanupPartlyFailedError';

  public constructor(
    /** The lines of what it removed and left, as a cleanup that did not fail says them. */
    public readonly lines: readonly string[],
    /** One line per table or queue it could not clean, with why. */
    public readonly failures: readonly string[],
  ) {
    super(failures.join('; '));
  }
}

function failureText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Said wherever verify leaves a run's items to remove by hand: a new verify run has a new run id. */
export const LATER_RUN_CLEANS_ITS_OWN = "a later verify --cleanup removes only its own run's items, not these";

/** The cleanup line of a dead-letter queue whose run messages it could not see whole (`count` removed before). */
export function deadLettersNotRemovedLine(queueUrl: string, count: number, why: string, runId: string): string {
  return `nothing${count > 0 ? ' more' : ''} from ${queueUrl}: ${why}; once they are visible, remove by hand the dead letters whose event id holds the run id ${runId} (dlq list shows them); ${LATER_RUN_CLEANS_ITS_OWN}`;
}

/**
 * What the run removed: `<count> from <table or queue>` lines, then what it left (`left <count> item(s) in table ...`)
 * and could not read. `minted`: the id values
 * the run made for its commands; `derived`: its events with runtime-derived ids.
 */
export async function cleanUpRun(
  clients: VerifyClients,
  flow: DeployedFlow,
  runId: string,
  runEventIds: ReadonlySet<string>,
  minted: ReadonlySet<string> = new Set(),
  derived: readonly DerivedRunEvent[] = [],
  /** The `dataref` of each of the run's offloaded events (./offloaded-data.ts `dataRefsOf`): kept, and said. */
  datarefs: readonly string[] = [],
): Promise<string[]> {
  const removed: string[] = [];
  const leftLines: string[] = [];
  // ids only this run has: the marks a key may hold
  const marks = [...new Set([...minted, ...[...runEventIds].filter((id) => id.includes(runId)), ...derived.flatMap((event) => (event.from === undefined ? [] : [event.id]))])];
  // the runtime's exact keys of the run's events, per flow table
  const exactKeys = new Map<string, Set<string>>();
  const addKeys = (table: string | undefined, keys: Iterable<string>) => {
    if (table === undefined) return;
    const set = exactKeys.get(table) ?? new Set<string>();
    for (const key of keys) set.add(key);
    exactKeys.set(table, set);
  };
  for (const item of flow.flows) addKeys(item.outboxTable, [...runEventIds].map((id) => `${OUTBOX_ITEM.KEY_PREFIX}${id}`));
  // the inbox tables are kept whole: a deleted inbox record lets a late duplicate delivery apply its event again
  const inboxTables = new Map<string, string[]>();
  for (const subscriber of flow.subscribers) {
    addKeys(subscriber.deployment.outboxTable, [...runEventIds].map((id) => `${OUTBOX_ITEM.KEY_PREFIX}${id}`));
    addKeys(subscriber.deployment.inboxTable, [...runEventIds].map((id) => recordKey(subscriber.deployment.subscriberName, id)));
    const inbox = subscriber.deployment.inboxTable;
    if (inbox !== undefined) inboxTables.set(inbox, [...(inboxTables.get(inbox) ?? []), subscriber.name]);
  }
  const tables = [...new Set(flow.resources.filter((resource) => resource.type === 'AWS::DynamoDB::Table' || resource.type === 'AWS::DynamoDB::GlobalTable').map((resource) => resource.physicalId))];
  const failures: string[] = [];
  for (const tableName of tables) {
    let count = 0;
    try {
    const described = await clients.dynamoDb.send(new DescribeTableCommand({ TableName: tableName }));
    const keyNames = (described.Table?.KeySchema ?? []).map((key) => key.AttributeName!);
    const exact = exactKeys.get(tableName) ?? new Set<string>();
    const isRuns = (item: Record<string, unknown>): boolean =>
      keyNames.some((name) => {
        const value = item[name];
        if (typeof value !== 'string') return false;
        return (name === TABLE_SCHEMA.PARTITION_KEY && exact.has(value)) || marks.some((mark) => keyHolds(value, mark));
      });
    const inboxOf = inboxTables.get(tableName);
    let left = 0;
    // the runtime records kept, by kind, and whose: a runtime record's own subscriber, found or not (review r12, R12-1)
    const kept = new Map<RuntimeRecordKind, number>();
    const keptOf = new Set<string>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await clients.documents.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
      for (const item of (page.Items ?? []) as Record<string, unknown>[]) {
        if (!isRuns(item)) {
          // read only, to say what stays: its data names the run, its key does not (a key its handler chose, or another's item the run updated)
          if (JSON.stringify(item).includes(runId)) left += 1;
          continue;
        }
        // a runtime record of any subscriber (by its shape), or any item of a found subscriber's inbox table
        const keptFor = runtimeRecordOf(item, keyNames)?.subscriber ?? inboxOf?.join(', ');
        if (keptFor !== undefined) {
          // an item of a found subscriber's inbox table not of a runtime record's shape is counted as an inbox record
          const kind = runtimeRecordOf(item, keyNames)?.kind ?? 'inbox record';
          kept.set(kind, (kept.get(kind) ?? 0) + 1);
          keptOf.add(keptFor);
          continue;
        }
        const answer = await clients.documents.send(new DeleteCommand({ TableName: tableName, Key: Object.fromEntries(keyNames.map((name) => [name, item[name]])), ReturnValues: 'ALL_OLD' }));
        if (answer.Attributes !== undefined) count += 1;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    if (kept.size > 0) leftLines.push(keptRecordsLine(tableName, kept, keptOf));
    if (left > 0) leftLines.push(`left ${left} item(s) in table ${tableName}: their data names the run, their key holds no id of it (a key a handler chose, or an item the run only updated); not removed`);
    } catch (error) {
      failures.push(`table ${tableName}: ${failureText(error)}`);
    }
    if (count > 0) removed.push(`${count} item(s) of the run from table ${tableName}`);
  }
  for (const queueUrl of [...new Set(flow.subscribers.flatMap(deadLetterQueuesOf))]) {
    let count = 0;
    try {
    // a FIFO queue's later messages of a group are read once those before them are deleted: read again while a read
    // removed some of the run's and left messages behind the groups it held
    for (;;) {
      let read;
      try {
        read = await receiveWhole(clients, queueUrl);
      } catch (error) {
        if (!(error instanceof DeadLettersUnreadError)) throw error;
        removed.push(deadLettersNotRemovedLine(queueUrl, count, error.message, runId));
        break;
      }
      const { messages } = read;
      const ofRun = messages.filter((message) => runEventIds.has(deadLetterEventId(message) ?? ''));
      for (const message of ofRun) await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
      await releaseMessages(clients.sqs, messages.filter((message) => !ofRun.includes(message)));
      count += ofRun.length;
      if (read.behindHeldGroups === 0 || ofRun.length === 0) {
        if (read.behindHeldGroups > 0) leftLines.push(`left ${read.behindHeldGroups} message(s) on ${queueUrl} unread: they wait behind FIFO message groups whose messages are not the run's; not removed`);
        break;
      }
    }
    } catch (error) {
      failures.push(`queue ${queueUrl}: ${failureText(error)}`);
    }
    if (count > 0) removed.push(`${count} dead letter(s) of the run's events from ${queueUrl}`);
  }
  leftLines.push(...keptPayloadLines(datarefs, flow.bucketExpirations ?? {}));
  if (failures.length > 0) throw new CleanupPartlyFailedError([...removed, ...leftLines], failures);
  return [...removed, ...leftLines];
}
