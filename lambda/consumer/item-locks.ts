/**
 * Keeps the records of one batch from committing on one item at the same moment. DynamoDB refuses a transaction that
 * includes an item another ongoing transaction holds (`TransactionConflict`), and a single write on such an item
 * (`TransactionConflictException`): "Transaction conflict handling in DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling.
 * Records of a batch run concurrently, so two that write one item (a ledger account, a counter) would meet exactly
 * that, and then wait out a backoff; here the later one waits only for the earlier one's commit.
 */

/** One commit's hold on its items; {@link ItemLocks.acquire} returns it once every earlier holder is done. */
export interface ItemLease {
  /** Lets the next commit on these items go. Call it once the commit's reply is in (success or not). */
  release(): void;
}

/**
 * Per-batch locks on item identities (see `actionItemIdentity`). A commit acquires all its items at once, in one
 * synchronous step, and waits for every earlier holder of any of them: the waits only ever point to earlier
 * acquisitions, so they can never form a cycle.
 */
export class ItemLocks {
  /** The latest holder of each item: what the next commit on it waits for. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Waits until no earlier commit holds any of `items`, then holds them until the returned lease is released. */
  public async acquire(items: Iterable<string>): Promise<ItemLease> {
    const unique = [...new Set(items)];
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const earlier: Array<Promise<void>> = [];
    for (const item of unique) {
      const tail = this.tails.get(item);
      if (tail !== undefined) earlier.push(tail);
      this.tails.set(item, done);
    }
    await Promise.all(earlier);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        release();
        for (const item of unique) if (this.tails.get(item) === done) this.tails.delete(item);
      },
    };
  }

  /** Resolves once every commit holding an item now has released it (commits acquiring later are not waited for). */
  public async settled(): Promise<void> {
    await Promise.all(new Set(this.tails.values()));
  }
}
