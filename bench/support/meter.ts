/**
 * Counts what a DynamoDB client sends and what DynamoDB says it cost, with SDK middleware on the client itself, so
 * the code under measurement is the real runtime, unchanged:
 *
 * - step `initialize`: sets `ReturnConsumedCapacity: 'TOTAL'` on every data-plane command, counts the request per
 *   operation name, and adds up the `ConsumedCapacity` `CapacityUnits` of the response (or notes that none came back,
 *   which is what DynamoDB Local does for a cancelled transaction or a failed conditional write);
 * - step `deserialize` (below the SDK's retry middleware): counts HTTP attempts, so SDK retries would show;
 * - step `build` (optional "rule check"): reads the wire request, fetches each item it touches before (and, for an
 *   update, after) with a separate, unmetered client, and computes what AWS's documented rules charge, to compare with
 *   what DynamoDB Local reported (see `capacity-rules.ts`). Failed conditional writes and cancelled transactions are
 *   charged by the rule too, and kept apart (`failedRuleUnits`), because DynamoDB Local reports nothing for them.
 */
import { DescribeTableCommand, GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { failedWriteUnits, indexWriteUnits, isReadOperation, readUnits, type TableShape } from './capacity-rules';
import { itemSize, writeUnits, type WireItem } from './item-size';

/** What one operation (e.g. `TransactWriteItems`) did during a measurement. Units are WCU for writes, RCU for reads. */
export interface OperationFigures {
  /** Commands sent (one per `client.send`, whatever the retries). */
  requests: number;
  /** HTTP attempts (more than `requests` only if the SDK retried). */
  attempts: number;
  /** Failed commands, by error name. */
  errors: Record<string, number>;
  /** Sum of `ConsumedCapacity[].CapacityUnits` over the responses that carried it. */
  reportedUnits: number;
  /** Responses that carried `ConsumedCapacity`. */
  reported: number;
  /** Commands whose response (or error) carried no `ConsumedCapacity`. */
  unreported: number;
  /** Units by AWS's rule for the commands that succeeded and were checked (rule check on). */
  ruleUnits: number;
  /** Units by AWS's rule for the failed conditional writes and cancelled transactions that were checked. */
  failedRuleUnits: number;
  /** Commands checked against the rule (succeeded or failed). */
  ruleChecked: number;
  /** Successful commands where Local's figure differs from the rule, described. */
  ruleMismatches: string[];
}

export type Figures = ReadonlyMap<string, Readonly<OperationFigures>>;

/** Operations that accept `ReturnConsumedCapacity`. Anything else is passed through uncounted. */
const METERED: ReadonlySet<string> = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'GetItem',
  'Query',
  'Scan',
  'BatchWriteItem',
  'BatchGetItem',
  'TransactWriteItems',
  'TransactGetItems',
]);

/** Errors that mean "the condition failed, nothing was written" (AWS still charges the write). */
const FAILED_CONDITION_ERRORS: ReadonlySet<string> = new Set(['ConditionalCheckFailedException', 'TransactionCanceledException']);

const STATE = Symbol('bench-meter');

interface RequestState {
  readonly op: string;
  ruleUnits?: number;
  failedRuleUnits?: number;
  ruleDetail?: string;
}

interface WriteAction {
  readonly table: string;
  readonly kind: 'Put' | 'Update';
  readonly transactional: boolean;
  readonly item?: WireItem;
  readonly key?: WireItem;
}

export function emptyFigures(): OperationFigures {
  return { requests: 0, attempts: 0, errors: {}, reportedUnits: 0, reported: 0, unreported: 0, ruleUnits: 0, failedRuleUnits: 0, ruleChecked: 0, ruleMismatches: [] };
}

function capacityUnits(consumed: unknown): number | undefined {
  if (consumed === undefined || consumed === null) return undefined;
  const entries = Array.isArray(consumed) ? consumed : [consumed];
  return entries.reduce((sum: number, entry: { CapacityUnits?: number }) => sum + (entry.CapacityUnits ?? 0), 0);
}

function writesOf(op: string, body: Record<string, unknown>): WriteAction[] | 'unsupported' | undefined {
  if (op === 'PutItem') return [{ table: body.TableName as string, kind: 'Put', transactional: false, item: body.Item as WireItem }];
  if (op === 'UpdateItem') return [{ table: body.TableName as string, kind: 'Update', transactional: false, key: body.Key as WireItem }];
  if (op === 'TransactWriteItems') {
    const actions: WriteAction[] = [];
    for (const action of body.TransactItems as Array<Record<string, Record<string, unknown>>>) {
      if (action.Put) actions.push({ table: action.Put.TableName as string, kind: 'Put', transactional: true, item: action.Put.Item as WireItem });
      else if (action.Update) actions.push({ table: action.Update.TableName as string, kind: 'Update', transactional: true, key: action.Update.Key as WireItem });
      else return 'unsupported';
    }
    return actions;
  }
  return METERED.has(op) && !isReadOperation(op) ? 'unsupported' : undefined;
}

/** Meters one DynamoDB client. */
export class Meter {
  private figures = new Map<string, OperationFigures>();
  private readonly shapes = new Map<string, TableShape>();
  /** Compare every request with AWS's rule (costs unmetered reads; can be switched off for long runs). */
  public ruleCheck: boolean;

  /**
   * @param checker an unmetered client on the same endpoint, used only by the rule check
   */
  public constructor(
    client: DynamoDBClient,
    private readonly checker: DynamoDBClient,
    options: { ruleCheck?: boolean } = {},
  ) {
    this.ruleCheck = options.ruleCheck ?? true;
    const stack = client.middlewareStack;
    stack.add(
      (next, context) => async (args) => {
        const op = String(context.commandName ?? '').replace(/Command$/, '');
        if (!METERED.has(op)) return next(args);
        const state: RequestState = { op };
        (context as Record<symbol, unknown>)[STATE] = state;
        const tally = this.tally(op);
        tally.requests += 1;
        const input = { ...(args.input as Record<string, unknown>), ReturnConsumedCapacity: 'TOTAL' };
        try {
          const result = await next({ ...args, input });
          const units = capacityUnits((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
          if (units === undefined) tally.unreported += 1;
          else {
            tally.reported += 1;
            tally.reportedUnits += units;
          }
          if (state.ruleUnits !== undefined) {
            tally.ruleChecked += 1;
            tally.ruleUnits += state.ruleUnits;
            if (units !== state.ruleUnits) tally.ruleMismatches.push(`${op} ${state.ruleDetail}: Local reported ${units ?? 'nothing'}, rule says ${state.ruleUnits}`);
          }
          return result;
        } catch (error) {
          const name = error instanceof Error ? error.name : 'Unknown';
          tally.errors[name] = (tally.errors[name] ?? 0) + 1;
          const units = capacityUnits((error as { ConsumedCapacity?: unknown }).ConsumedCapacity);
          if (units === undefined) tally.unreported += 1;
          else {
            tally.reported += 1;
            tally.reportedUnits += units;
          }
          if (state.failedRuleUnits !== undefined) {
            tally.ruleChecked += 1;
            tally.failedRuleUnits += state.failedRuleUnits;
          }
          throw error;
        }
      },
      { step: 'initialize', name: 'benchMeterCapacity', priority: 'high' },
    );
    stack.add(
      (next, context) => async (args) => {
        const state = (context as Record<symbol, unknown>)[STATE] as RequestState | undefined;
        if (state === undefined || !this.ruleCheck) return next(args);
        const body = (args.request as { body?: unknown }).body;
        const text = typeof body === 'string' ? body : new TextDecoder().decode(body as Uint8Array);
        const request = JSON.parse(text) as Record<string, unknown>;
        if (state.op === 'BatchGetItem') {
          // each key is read as its own GetItem would be: rounded up to 4 KB per item, halved when eventually consistent,
          // the minimum charged for a key with no item too
          const requested = Object.entries(request.RequestItems as Record<string, { Keys: WireItem[]; ConsistentRead?: boolean }>);
          const reads = await Promise.all(
            requested.flatMap(([table, { Keys, ConsistentRead }]) => Keys.map(async (key) => ({ table, consistent: ConsistentRead === true, item: await this.fetch(table, key) }))),
          );
          const result = await next(args);
          state.ruleUnits = reads.reduce((sum, read) => sum + readUnits(itemSize(read.item), read.consistent), 0);
          state.ruleDetail = `${reads.length} keys, ${reads.filter((read) => read.item !== undefined).length} found${reads.some((read) => read.consistent) ? '' : ', eventually consistent'}`;
          return result;
        }
        if (isReadOperation(state.op)) {
          if (state.op !== 'GetItem') throw new Error(`bench meter: the rule check does not model ${state.op}`);
          const table = request.TableName as string;
          const item = await this.fetch(table, request.Key as WireItem);
          const result = await next(args);
          const bytes = itemSize(item);
          state.ruleUnits = readUnits(bytes, request.ConsistentRead === true);
          state.ruleDetail = `${table} ${bytes} B${item === undefined ? ' (absent)' : ''}${request.ConsistentRead === true ? ', consistent' : ''}`;
          return result;
        }
        const writes = writesOf(state.op, request);
        if (writes === undefined) return next(args);
        if (writes === 'unsupported') throw new Error(`bench meter: the rule check does not model ${state.op}`);
        const keys = await Promise.all(writes.map(async (write) => write.key ?? (await this.keyOf(write.table, write.item as WireItem))));
        const before = await Promise.all(writes.map((write, i) => this.fetch(write.table, keys[i] as WireItem)));
        let result: Awaited<ReturnType<typeof next>>;
        try {
          result = await next(args);
        } catch (error) {
          if (error instanceof Error && FAILED_CONDITION_ERRORS.has(error.name)) {
            const sizes = writes.map((write, i) => failedWriteUnits(before[i], write.kind === 'Put' ? write.item : undefined, write.transactional));
            state.failedRuleUnits = sizes.reduce((sum, units) => sum + units, 0);
          }
          throw error;
        }
        const after = await Promise.all(writes.map((write, i) => (write.kind === 'Put' ? write.item : this.fetch(write.table, keys[i] as WireItem))));
        const shapes = await Promise.all(writes.map((write) => this.shapeOf(write.table)));
        const sizes = writes.map((_, i) => Math.max(itemSize(before[i]), itemSize(after[i])));
        const indexUnits = writes.map((write, i) => {
          const units = indexWriteUnits(shapes[i] as TableShape, before[i], after[i]);
          if (units > 0 && write.transactional) throw new Error('bench meter: the rule check does not model index writes inside a transaction');
          return units;
        });
        state.ruleUnits = writes.reduce((sum, write, i) => sum + writeUnits(sizes[i] as number, write.transactional) + (indexUnits[i] as number), 0);
        state.ruleDetail = writes
          .map((write, i) => `${write.kind} ${write.table} ${sizes[i]} B${(indexUnits[i] as number) > 0 ? ` (+${indexUnits[i]} index WCU)` : ''}`)
          .join(' + ');
        return result;
      },
      { step: 'build', name: 'benchMeterRuleCheck' },
    );
    stack.add(
      (next, context) => async (args) => {
        const state = (context as Record<symbol, unknown>)[STATE] as RequestState | undefined;
        if (state !== undefined) this.tally(state.op).attempts += 1;
        return next(args);
      },
      { step: 'deserialize', name: 'benchMeterAttempts' },
    );
  }

  /** Runs `body` and returns what was sent during it (the counters start at zero). */
  public async measure(body: () => Promise<void>): Promise<Figures> {
    this.figures = new Map();
    await body();
    const snapshot = new Map<string, OperationFigures>();
    for (const op of [...this.figures.keys()].sort()) {
      const figures = this.figures.get(op) as OperationFigures;
      snapshot.set(op, { ...figures, errors: { ...figures.errors }, ruleMismatches: [...figures.ruleMismatches] });
    }
    this.figures = new Map();
    return snapshot;
  }

  /** Runs `body` with the rule check off (for setup that is not measured), restoring the setting after. */
  public async unchecked<T>(body: () => Promise<T>): Promise<T> {
    const previous = this.ruleCheck;
    this.ruleCheck = false;
    try {
      return await body();
    } finally {
      this.ruleCheck = previous;
    }
  }

  private tally(op: string): OperationFigures {
    let figures = this.figures.get(op);
    if (figures === undefined) {
      figures = emptyFigures();
      this.figures.set(op, figures);
    }
    return figures;
  }

  private async shapeOf(table: string): Promise<TableShape> {
    let shape = this.shapes.get(table);
    if (shape === undefined) {
      const described = (await this.checker.send(new DescribeTableCommand({ TableName: table }))).Table;
      shape = {
        keyAttributes: (described?.KeySchema ?? []).map((element) => element.AttributeName as string),
        indexes: (described?.GlobalSecondaryIndexes ?? []).map((index) => ({
          name: index.IndexName as string,
          keyAttributes: (index.KeySchema ?? []).map((element) => element.AttributeName as string),
          projection: index.Projection?.ProjectionType ?? 'ALL',
          nonKeyAttributes: index.Projection?.NonKeyAttributes ?? [],
        })),
      };
      this.shapes.set(table, shape);
    }
    return shape;
  }

  private async keyOf(table: string, item: WireItem): Promise<WireItem> {
    const { keyAttributes } = await this.shapeOf(table);
    return Object.fromEntries(keyAttributes.map((name) => [name, item[name] as WireItem[string]]));
  }

  private async fetch(table: string, key: WireItem): Promise<WireItem | undefined> {
    const result = await this.checker.send(new GetItemCommand({ TableName: table, Key: key as never, ConsistentRead: true }));
    return result.Item as WireItem | undefined;
  }
}
