/**
 * Carrying an ordered outbox's heads over to a restored or new outbox table (docs/ORDERED-DELIVERY.md, "Restoring the
 * outbox table"). A point-in-time restore (into a new table, as DynamoDB restores) or a replaced table takes the
 * aggregates' heads back, so the producer would hand out sequences the subscribers have passed: the consumers
 * dead-letter those (`SequenceReusedError`). Before the producers write to the new table,
 * an operator sets each aggregate's head to the last sequence known: from the history items the table holds, or from
 * the subscribers' sequence fences (the last sequence each applied). A head is moved forward only, but for one case:
 * a head whose events no named subscriber's fence can ever apply (`back`, review r8b R8b-3).
 */
import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ProducerConfig } from '../../lambda/config';
import { ORDERED_OUTBOX_ITEM, orderedGenerationKey, orderedHeadKey, SEQUENCE_FENCE } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { isConditionalCheckFailed } from '../../lambda/transaction/cancellation';
import { toDocumentClient, type DynamoDBClientLike } from '../../lambda/transaction/document-client';

/** An ordered subscriber whose sequence fences a carry reads: its name and its inbox table. */
export interface FencedSubscriber {
  readonly subscriberName: string;
  readonly inboxTable: string;
}

/** Where the heads' sequences come from. */
export type OrderedHeadsSource =
  /**
   * The ordered items of an outbox table (its history items, one per event, and its heads): each aggregate's highest
   * sequence there. `table`: another table than the one written, e.g. the table a point-in-time restore was made from,
   * which knows every sequence it handed out. @default the outbox table itself
   *
   * `subscribers`: ordered subscribers whose fences the carry checks the history against. An aggregate one of their
   * fences applied in a newer generation than any the history holds for it (the history is of an older table than the
   * one the subscribers followed, e.g. the table before the one replaced) is carried from the fences instead (their
   * highest sequence, as `fences` does): a generation based at the history's sequence would wait forever for events
   * of the fence's generation that no table ever handed out. So is an aggregate a fence applied in an older
   * generation than the history's newest, not standing at that generation's base (past it: it can never enter it;
   * below it: with the queues and dead-letter queues drained, as the runbook requires, nothing is left in flight to
   * bring it there; the ordered model, seeds 777 and 4004). The new generation is also above every generation those
   * fences hold. @default none: the history alone (nothing checked)
   */
  | { readonly kind: 'history'; readonly table?: string; readonly subscribers?: readonly FencedSubscriber[] }
  /** The sequence fences of these subscribers (each in its inbox table): each aggregate's highest sequence applied by any of them. */
  | { readonly kind: 'fences'; readonly subscribers: readonly FencedSubscriber[] };

/** Options of {@link carryOrderedHeads}. */
export interface CarryOrderedHeadsOptions {
  readonly client: DynamoDBClientLike;
  /** The restored or new outbox table. */
  readonly outbox: Pick<ProducerConfig, 'outboxTableName' | 'partitionKeyName' | 'sortKeyName'>;
  readonly source: OrderedHeadsSource;
  /** false: a dry run, nothing written. */
  readonly apply: boolean;
  /** @default the system clock */
  readonly now?: () => Date;
}

/** What becomes of one aggregate's head. */
export interface HeadCarry {
  readonly aggregateId: string;
  /** The head's sequence in the table now (0: no head). */
  readonly current: number;
  /** The sequence the source knows (for `back`: that or the highest named fence of the aggregate, whichever is higher). */
  readonly target: number;
  /**
   * `set`: the head moves forward to `target` (written when applying); `unchanged`: it stands there already (when
   * applying, it is written again, starting a new generation at `target`, as every carry does);
   * `back`: the head stands past the target (and past every named fence of the aggregate) with events no named fence
   * can ever apply (each fence is in a newer generation than the head's, or in an older one past
   * the head's base: every event of the head's generation is refused, `SequenceReusedError`; or, a history carry, in an
   * older one below the head's base, where that base is a sequence of a history whose line the fence does not follow,
   * which it never reaches: the ordered model, seeds 3 and 1001): the head is set back to
   * `target` in a new generation based there, so the events written again (runbook step 5) and the next ones apply
   * instead of waiting forever for a sequence no fence can apply (review r8b, R8b-3);
   * `ahead`: it stands past `target` and stays (a named fence can still apply the head's events, or no subscriber was
   * named); `moved`: a producer wrote it between the read and the write (nothing overwritten:
   * run again).
   */
  readonly decision: 'set' | 'unchanged' | 'back' | 'ahead' | 'moved';
  /**
   * true: a history carry took `target` from the subscribers' fences, not from the history, because a fence applied
   * the aggregate in a newer generation than any the history holds (the history is older than what the subscribers
   * followed). The history's events above `target` that are still in flight are then dead-lettered
   * (`SequenceReusedError`) and written again, as after a carry from the fences. @default false (absent)
   */
  readonly fromFences?: boolean;
}

/** Every item of a scan, all pages, strongly consistent. */
async function scanAll(client: DynamoDBDocumentClient, input: ConstructorParameters<typeof ScanCommand>[0]): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ ...input, ConsistentRead: true, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** One fence as a carry reads it. */
interface FenceRead {
  readonly aggregateId: string;
  readonly applied: number;
  /** 0: generation 0 (no attribute). */
  readonly generation: number;
  /**
   * A history carry only: this fence does not follow the history's line of its aggregate (it left the history's newest
   * generation, standing in an older one past that generation's base; it stands in an older one below that base; or it
   * followed a newer generation than any the history holds), so it reaches no sequence of that history above it but by
   * chance; the history's highest sequence of the aggregate. @default undefined (not a history carry, or a fence on the history's line)
   */
  readonly leftHistoryAt?: number;
}

/** The fences of `subscribers` (one scan per inbox table). */
async function readFences(client: DynamoDBDocumentClient, subscribers: readonly FencedSubscriber[]): Promise<FenceRead[]> {
  const fences: FenceRead[] = [];
  for (const inboxTable of new Set(subscribers.map((subscriber) => subscriber.inboxTable))) {
    const names = new Set(subscribers.filter((subscriber) => subscriber.inboxTable === inboxTable).map((subscriber) => subscriber.subscriberName));
    const items = await scanAll(client, {
      TableName: inboxTable,
      FilterExpression: '#type = :fence',
      ExpressionAttributeNames: { '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE },
      ExpressionAttributeValues: { ':fence': SEQUENCE_FENCE.RECORD_TYPE_VALUE },
    });
    for (const item of items) {
      if (!names.has(item[SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE] as string)) continue;
      const [aggregateId, applied, generation] = [item[SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE], item[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE], item[SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE]];
      if (typeof aggregateId !== 'string' || typeof applied !== 'number' || !Number.isSafeInteger(applied)) continue;
      fences.push({ aggregateId, applied, generation: typeof generation === 'number' && Number.isSafeInteger(generation) ? generation : 0 });
    }
  }
  return fences;
}

/**
 * The highest sequence the source knows per aggregate, and the highest generation it holds anywhere; `fromFences`:
 * the aggregates a history carry took from the fences (see {@link OrderedHeadsSource}).
 */
async function targets(
  client: DynamoDBDocumentClient,
  options: CarryOrderedHeadsOptions,
): Promise<{ readonly highest: Map<string, number>; readonly generation: number; readonly fromFences: ReadonlySet<string>; readonly fences: readonly FenceRead[] }> {
  const highest = new Map<string, number>();
  const fromFences = new Set<string>();
  let generation = 0;
  const noteGeneration = (value: unknown): void => {
    if (typeof value === 'number' && Number.isSafeInteger(value)) generation = Math.max(generation, value);
  };
  const note = (aggregateId: unknown, sequence: unknown): void => {
    if (typeof aggregateId !== 'string' || typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) return;
    highest.set(aggregateId, Math.max(highest.get(aggregateId) ?? 0, sequence));
  };
  if (options.source.kind === 'history') {
    /** Per aggregate, the highest generation of its items in the history (0: generation 0 only), and that generation's base. */
    const historyGeneration = new Map<string, { readonly generation: number; readonly base: number }>();
    const items = await scanAll(client, {
      TableName: options.source.table ?? options.outbox.outboxTableName,
      FilterExpression: '#type IN (:history, :head, :carried, :generation)',
      ExpressionAttributeNames: { '#type': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':history': ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE,
        ':head': ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE,
        ':carried': ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE,
        ':generation': ORDERED_OUTBOX_ITEM.GENERATION_RECORD_TYPE_VALUE,
      },
    });
    for (const item of items) {
      noteGeneration(item[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE]);
      if (item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] === ORDERED_OUTBOX_ITEM.GENERATION_RECORD_TYPE_VALUE) continue;
      const aggregateId = item[ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE];
      note(aggregateId, item[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]);
      const [itemGeneration, itemBase] = [item[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE], item[ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE]];
      const generationHere = typeof itemGeneration === 'number' ? itemGeneration : 0;
      if (typeof aggregateId === 'string' && generationHere >= (historyGeneration.get(aggregateId)?.generation ?? 0)) {
        historyGeneration.set(aggregateId, { generation: generationHere, base: typeof itemBase === 'number' ? itemBase : 0 });
      }
    }
    const fences = await readFences(client, options.source.subscribers ?? []);
    for (const fence of fences) noteGeneration(fence.generation);
    // a fence in a newer generation than the history holds for its aggregate followed a table this history is older
    // than: its generation's sequences past the fence were never handed out by any table this history knows, so a
    // generation based at the history's sequence would wait for them forever (the ordered model, seed 308844549).
    // That aggregate is carried from the fences: the history's events past them are refused and written again.
    //
    // So is an aggregate whose history's newest generation the fence can no longer enter: the fence is in an older
    // generation and has passed that generation's base (the old table's in-flight events were applied past it), so
    // every event of it is refused as another history (SequenceReusedError) and written again; a generation based at
    // the history's sequence would wait forever for the rest of a history the fence's line never had (seed 777)
    const checked: FenceRead[] = [];
    for (const fence of fences) {
      if (!highest.has(fence.aggregateId)) {
        checked.push(fence);
        continue;
      }
      const history = historyGeneration.get(fence.aggregateId) ?? { generation: 0, base: 0 };
      const fenceFollowedNewer = fence.generation > history.generation;
      const fenceLeftHistory = fence.generation < history.generation && fence.applied > history.base;
      // below that base, in an older generation: only events of the fence's own line (or of a generation based where
      // it stands) can bring it there, and the history cannot tell whether that line reaches the base (seed 4004: G1
      // ended at #1, G2 was based at #2 from another table's history). With the runbook's queues and dead-letter
      // queues drained none is left in flight, so a generation based at the history's sequence would wait forever;
      // taken from the fence instead, an older event still in flight is refused once the fence enters the new
      // generation (dead-lettered, written again) or, applied first, leaves the head to the 'back' case below
      const fenceBelowHistoryBase = fence.generation < history.generation && fence.applied < history.base;
      if (fenceFollowedNewer || fenceLeftHistory || fenceBelowHistoryBase) fromFences.add(fence.aggregateId);
      checked.push(fenceFollowedNewer || fenceLeftHistory || fenceBelowHistoryBase ? { ...fence, leftHistoryAt: highest.get(fence.aggregateId)! } : fence);
    }
    for (const aggregateId of fromFences) {
      highest.set(aggregateId, Math.max(0, ...fences.filter((fence) => fence.aggregateId === aggregateId).map((fence) => fence.applied)));
    }
    return { highest, generation, fromFences, fences: checked };
  }
  if (options.source.subscribers.length === 0) throw new RangeError('carryOrderedHeads: name at least one subscriber whose fences to read');
  const fences = await readFences(client, options.source.subscribers);
  for (const fence of fences) {
    note(fence.aggregateId, fence.applied);
    noteGeneration(fence.generation);
  }
  return { highest, generation, fromFences, fences };
}

/**
 * Whether none of `fences` of the aggregate can ever apply an event of the head's generation (review r8b, R8b-3): each
 * is in a newer generation (it refuses older ones) or in an older one past the head's base (it can never enter the
 * head's generation: every event of it is refused as another history), or (a history carry) in an older one below the
 * head's base where that base is a sequence of a history whose line the fence does not follow (it never reaches it
 * but by chance: the ordered model, seeds 3 and 1001; seed 3 is issue 38's CI run 48). Then the events the head handed
 * out past the fences are refused (`SequenceReusedError`, dead-lettered to be written again; below the base, held as a
 * gap until the fence enters the new generation, then refused) and setting the head back to the
 * fences' sequence in a new generation neither applies one twice nor loses one the fences would have applied. A fence
 * that can still apply them (in the head's generation, or an older one at or below its base) keeps the head.
 */
function noFenceCanApply(fences: readonly FenceRead[], aggregateId: string, head: { readonly generation: number; readonly base: number }): boolean {
  const mine = fences.filter((fence) => fence.aggregateId === aggregateId);
  const neverReachesBase = (fence: FenceRead): boolean => fence.leftHistoryAt !== undefined && fence.applied < head.base && head.base <= fence.leftHistoryAt;
  return mine.length > 0 && mine.every((fence) => fence.generation > head.generation || (fence.generation < head.generation && (fence.applied > head.base || neverReachesBase(fence))));
}

/**
 * Sets each aggregate's head in the outbox table to the highest sequence the source knows, never backwards (a head
 * the table holds past it stays), but for `back` (see {@link HeadCarry.decision}). With `apply`, each move is one conditional Put of a carried head (no event, so the
 * relay publishes nothing), conditioned on the head still standing where it was read, so a producer's write in between
 * is never overwritten (`moved`). Without `apply`, the same decisions, nothing written.
 */
export async function carryOrderedHeads(options: CarryOrderedHeadsOptions): Promise<{ readonly heads: readonly HeadCarry[] }> {
  const client = toDocumentClient(options.client);
  const { outboxTableName, partitionKeyName, sortKeyName } = options.outbox;
  const keyOf = (aggregateId: string): Record<string, string> => {
    const key = orderedHeadKey(aggregateId);
    return { [partitionKeyName]: key, ...(sortKeyName === undefined ? {} : { [sortKeyName]: key }) };
  };
  const from = options.source.kind === 'history' ? `history: ${options.source.table ?? outboxTableName}` : `fences: ${options.source.subscribers.map((subscriber) => subscriber.subscriberName).join(', ')}`;
  const now = (options.now ?? (() => new Date()))();
  const heads: HeadCarry[] = [];
  const { highest: known, generation: sourceGeneration, fromFences, fences } = await targets(client, options);
  const tableKey = { [partitionKeyName]: orderedGenerationKey(), ...(sortKeyName === undefined ? {} : { [sortKeyName]: orderedGenerationKey() }) };
  const tableItem = (await client.send(new GetCommand({ TableName: outboxTableName, Key: tableKey, ConsistentRead: true }))).Item;
  const tableGeneration = typeof tableItem?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE] === 'number' ? (tableItem[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE] as number) : 0;
  // the generation is ordered by the data, not only the operator's clock (review r38, R38-3): above every generation
  // the source and the table hold, so a second carry by a machine whose clock is behind still starts a higher one
  const generation = Math.max(now.getTime(), sourceGeneration + 1, tableGeneration + 1);
  if (options.apply) {
    // every aggregate whose head has no generation (none the source knew, new ones) takes this one (OrderedOutbox)
    await client.send(
      new PutCommand({
        TableName: outboxTableName,
        Item: {
          ...tableKey,
          [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: ORDERED_OUTBOX_ITEM.GENERATION_RECORD_TYPE_VALUE,
          [ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE]: generation,
          [ORDERED_OUTBOX_ITEM.CARRIED_FROM_ATTRIBUTE]: from,
          [ORDERED_OUTBOX_ITEM.CARRIED_AT_ATTRIBUTE]: now.toISOString(),
        },
      }),
    );
  }
  for (const aggregateId of [...known.keys()].sort()) {
    const target = known.get(aggregateId)!;
    const basis = fromFences.has(aggregateId) ? { fromFences: true } : {};
    const item = (await client.send(new GetCommand({ TableName: outboxTableName, Key: keyOf(aggregateId), ConsistentRead: true }))).Item;
    const stored = item?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE];
    const storedGeneration = item?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE];
    const generationAbove = (typeof storedGeneration === 'number' ? storedGeneration : 0) + 1;
    const current = typeof stored === 'number' ? stored : 0;
    const storedBase = item?.[ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE];
    const head = { generation: typeof storedGeneration === 'number' ? storedGeneration : 0, base: typeof storedBase === 'number' ? storedBase : 0 };
    // set back (review r8b, R8b-3): never below a named fence (a generation based below it could never be entered)
    const backTo = Math.max(target, ...fences.filter((fence) => fence.aggregateId === aggregateId).map((fence) => fence.applied));
    const decision: HeadCarry['decision'] =
      target > current ? 'set' : target === current ? 'unchanged' : backTo < current && noFenceCanApply(fences, aggregateId, head) ? 'back' : 'ahead';
    const to = decision === 'back' ? backTo : target;
    // an `unchanged` head starts a generation too (review r38, R38-2): the table may be a restore whose head equals
    // the source's while the old table's events past it are still in flight
    if (decision === 'ahead' || !options.apply) {
      heads.push({ aggregateId, current, target: to, decision, ...basis });
      continue;
    }
    try {
      await client.send(
        new PutCommand({
          TableName: outboxTableName,
          Item: {
            ...keyOf(aggregateId),
            [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE,
            [ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE]: aggregateId,
            [ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]: to,
            // a new generation, starting at `target`: the fences dead-letter the old table's in-flight events once they
            // applied one of this generation, and enter it only standing at `target` (never on an in-flight event past it)
            [ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE]: Math.max(generation, generationAbove),
            [ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE]: to,
            [ORDERED_OUTBOX_ITEM.CARRIED_FROM_ATTRIBUTE]: from,
            [ORDERED_OUTBOX_ITEM.CARRIED_AT_ATTRIBUTE]: now.toISOString(),
          },
          ...(item === undefined
            ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': partitionKeyName } }
            : { ConditionExpression: '#sequence = :current', ExpressionAttributeNames: { '#sequence': ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE }, ExpressionAttributeValues: { ':current': current } }),
        }),
      );
      heads.push({ aggregateId, current, target: to, decision, ...basis });
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      heads.push({ aggregateId, current, target: to, decision: 'moved', ...basis });
    }
  }
  return { heads };
}
