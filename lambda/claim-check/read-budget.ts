/**
 * How much offloaded data a consumer holds at once (R7-6): reading an offloaded event holds its bytes, their text, the
 * parsed data, the fingerprint's canonical text and a fresh parse per run of user code, about {@link READ_COPIES}
 * times its size. Records of a batch read their data one after another when together they would not fit the function's
 * memory, and a record that alone would not fit is refused before its fetch (its message fails alone, with the reason).
 */
import { getHeapStatistics } from 'node:v8';

/** The copies of an offloaded event's data a consumer holds while it is applied (bytes, text, parse, canonical text). */
export const READ_COPIES = 4;

/** The memory offloaded data may take: the function's (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, MiB), at most V8's heap limit. */
export function memoryBudgetBytes(env: NodeJS.ProcessEnv = process.env): number {
  const mib = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  const lambda = Number.isFinite(mib) && mib > 0 ? mib * 1024 * 1024 : Number.POSITIVE_INFINITY;
  return Math.min(lambda, getHeapStatistics().heap_size_limit);
}

/** A budget of bytes shared by the records of an execution environment: `acquire` waits until `cost` fits. */
export class ReadBudget {
  private inUse = 0;
  private waiters: (() => void)[] = [];

  public constructor(public readonly totalBytes: number) {}

  /** Whether `cost` can ever fit. */
  public fits(cost: number): boolean {
    return cost <= this.totalBytes;
  }

  /** Waits until `cost` fits beside what others hold (one holder always fits), takes it, and returns its release. */
  public async acquire(cost: number): Promise<() => void> {
    while (this.inUse > 0 && this.inUse + cost > this.totalBytes) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.inUse += cost;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse -= cost;
      for (const wake of this.waiters.splice(0)) wake();
    };
  }
}

let shared: ReadBudget | undefined;

/** The execution environment's budget, made on first use. */
export function sharedReadBudget(): ReadBudget {
  return (shared ??= new ReadBudget(memoryBudgetBytes()));
}
