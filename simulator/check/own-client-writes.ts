/**
 * Why an effect was applied again, when a transactional (or aggregate) consumer wrote outside its inbox transaction:
 * a write with its own client (a business update, a second outbox transaction instead of `tx.emit`) is not undone
 * when the commit is refused or the process dies, and is not recognised when the message comes back, so a redelivery
 * applies it again. The run's requests show it: each write of the consumer's function that does not name its inbox
 * table (for an aggregate consumer, that is not its commit: the Put carrying the processed-ids list), counted per table
 * and operation. The effect-count violation of such a subscriber says so.
 */
import { AGGREGATE_ITEM } from '../../lambda/contract/wire-format';
import { requestTables } from '../faults/fault-steering';
import { WRITE_OPERATIONS } from '../aws/request-items';
import { fixFor, type ViolationCause } from './violation-cause';


/** What the counts of {@link OwnClientWrites.cause} are: the function's requests of the whole run, not one event's. */
export const OWN_CLIENT_COUNTED = ', over the whole run, every attempt counted';

/** The writes outside the inbox transaction, per watched function (see the module comment). */
export class OwnClientWrites {
  private readonly inboxOf = new Map<string, string>();
  /** The aggregate consumers watched: their commits name no inbox, and carry the processed-ids list. */
  private readonly aggregates = new Set<string>();
  private readonly outboxOf = new Map<string, string>();
  private readonly counts = new Map<string, Map<string, number>>();

  /**
   * Watches the consumer function `functionKey`, whose inbox table is `inboxTable` (its local name); `outboxTable`, the
   * outbox its `tx.emit` appends to, when it publishes events.
   */
  public watch(functionKey: string, inboxTable: string, outboxTable?: string): void {
    this.inboxOf.set(functionKey, inboxTable);
    if (outboxTable !== undefined) this.outboxOf.set(functionKey, outboxTable);
  }

  /**
   * Watches the aggregate consumer function `functionKey` (it has no inbox: its commit is the aggregate's Put carrying
   * the processed-ids list, with the events it emits); `outboxTable`, the outbox its `tx.emit` appends to.
   */
  public watchAggregate(functionKey: string, outboxTable?: string): void {
    this.aggregates.add(functionKey);
    if (outboxTable !== undefined) this.outboxOf.set(functionKey, outboxTable);
  }

  /** Notes one DynamoDB request of a function. */
  public onRequest(functionKey: string, operation: string, body: string): void {
    if (!WRITE_OPERATIONS.has(operation)) return;
    const tables = requestTables(body);
    if (this.aggregates.has(functionKey)) {
      if (body.includes(JSON.stringify(AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE))) return;
    } else {
      const inbox = this.inboxOf.get(functionKey);
      if (inbox === undefined || tables.includes(inbox)) return;
    }
    const counts = this.counts.get(functionKey) ?? new Map<string, number>();
    for (const table of tables) counts.set(`${table} (${operation})`, (counts.get(`${table} (${operation})`) ?? 0) + 1);
    this.counts.set(functionKey, counts);
  }

  /** The cause to add to the function's effect-count violations, or undefined when it wrote nothing outside. */
  public cause(functionKey: string): string | undefined {
    const counts = this.counts.get(functionKey);
    if (counts === undefined || counts.size === 0) return undefined;
    const outbox = this.outboxOf.get(functionKey);
    const isOutbox = (site: string): boolean => outbox !== undefined && site.startsWith(`${outbox} (`);
    const outboxSites = [...counts].filter(([site]) => isOutbox(site)).map(([site, count]) => site.replace(/^(\S+) \((\w+)\)$/, `${count} $2 on $1`));
    const listed = [...counts].filter(([site]) => !isOutbox(site)).map(([site, count]) => site.replace(/ \((\w+)\)$/, ` (${count} $1)`));
    if (outboxSites.length > 0) listed.unshift(`an outbox event written outside the consumer's transaction (${outboxSites.join(', ')}), instead of tx.emit`);
    const again = 'a redelivery (after a crash, a refused commit or a lost response) applies such a write again';
    // the counts are the function's requests over the whole run (every event's, every attempt's), not this count's events'
    const sites = `${listed.join(', ')}${OWN_CLIENT_COUNTED}`;
    return this.aggregates.has(functionKey)
      ? `its apply() wrote outside the aggregate's transaction, with its own client: ${sites}; ${again}: return the change as the state from apply() (and emit with tx.emit)`
      : `its consumer wrote outside its inbox transaction, with its own client: ${sites}; ${again}: write through the transaction (tx.put, tx.update, tx.emit)`;
  }

  /**
   * The same cause as fields, for the effect-count violations of `subscriber` (`eventIds` their events): an outbox
   * write outside the transaction when one went to the consumer's outbox, else a write outside the transaction.
   */
  public causeOf(functionKey: string, subscriber: string, eventIds: readonly string[]): ViolationCause | undefined {
    const counts = this.counts.get(functionKey);
    if (counts === undefined || counts.size === 0) return undefined;
    const outbox = this.outboxOf.get(functionKey);
    const requests = [...counts].map(([site, count]) => {
      const [, table = site, operation = ''] = /^(\S+) \((\w+)\)$/.exec(site) ?? [];
      return { operation, tables: [table], count };
    });
    const kind = outbox !== undefined && requests.some((request) => request.tables.includes(outbox)) ? 'outbox-write-outside-transaction' : 'write-outside-transaction';
    return { kind, subscriber, eventIds: [...eventIds], invocations: [], requests, fix: fixFor(kind) };
  }
}
