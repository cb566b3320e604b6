/**
 * Why an effect was applied again, when a transactional (or aggregate) consumer wrote outside its inbox transaction:
 * a write with its own client (a business update, a second outbox transaction instead of `tx.emit`) is not undone
 * when the commit is refused or the process dies, and is not recognised when the message comes back, so a redelivery
 * applies it again. The run's requests show it: each write of the consumer's function that does not name its inbox
 * table, counted per table and operation. The effect-count violation of such a subscriber says so.
 */
import { requestTables } from '../faults/fault-steering';

const WRITES: ReadonlySet<string> = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** The writes outside the inbox transaction, per watched function (see the module comment). */
export class OwnClientWrites {
  private readonly inboxOf = new Map<string, string>();
  private readonly counts = new Map<string, Map<string, number>>();

  /** Watches the consumer function `functionKey`, whose inbox table is `inboxTable` (its local name). */
  public watch(functionKey: string, inboxTable: string): void {
    this.inboxOf.set(functionKey, inboxTable);
  }

  /** Notes one DynamoDB request of a function. */
  public onRequest(functionKey: string, operation: string, body: string): void {
    const inbox = this.inboxOf.get(functionKey);
    if (inbox === undefined || !WRITES.has(operation)) return;
    const tables = requestTables(body);
    if (tables.includes(inbox)) return;
    const counts = this.counts.get(functionKey) ?? new Map<string, number>();
    for (const table of tables) counts.set(`${table} (${operation})`, (counts.get(`${table} (${operation})`) ?? 0) + 1);
    this.counts.set(functionKey, counts);
  }

  /** The cause to add to the function's effect-count violations, or undefined when it wrote nothing outside. */
  public cause(functionKey: string): string | undefined {
    const counts = this.counts.get(functionKey);
    if (counts === undefined || counts.size === 0) return undefined;
    const listed = [...counts].map(([site, count]) => site.replace(/ \((\w+)\)$/, ` (${count} $1)`)).join(', ');
    return (
      `its consumer wrote outside its inbox transaction, with its own client: ${listed}; ` +
      'a redelivery (after a crash, a refused commit or a lost response) applies such a write again: write through the transaction (tx.put, tx.update, tx.emit)'
    );
  }
}
