/** Which invocation applied an event again, and how, from the requests and invocations a run recorded. */
import { describe, expect, test } from 'vitest';
import { ApplyAttribution } from '../../../simulator/check/apply-attribution';
import { fixFor } from '../../../simulator/check/violation-cause';
import { attributedRun as run, RETURNED } from './attribution-run';

let commits = 0;
/** A transactional commit: the handler's staged actions, then the runtime's inbox record (its write token new each time). */
function commit(subscriber: string, eventId: string, ...actions: object[]): object {
  commits += 1;
  return { TransactItems: [...actions, { Put: { TableName: 'Inbox', Item: { pk: { S: `${subscriber}#${eventId}` }, writeToken: { S: `token-${commits}` } } } }] };
}

describe('ApplyAttribution', () => {
  test('a commit applied again after its inbox record expired names both invocations, the window and the delay', () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', windowSeconds: 60 });
    flow.invoke([['e-1', 1]], [{ body: commit('Billing', 'e-1', { Update: { TableName: 'Ledger' } }), applied: true }]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: commit('Billing', 'e-1', { Update: { TableName: 'Ledger' } }), applied: true }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: applied by invocation #1 (receive 1, at +0 s); applied again by invocation #2 (receive 2, at +180 s) after the inbox record of the apply by invocation #1 (receive 1, at +0 s) expired (window 60 s, redelivered after 180 s): the deduplication window must cover every redelivery',
    );
  });

  test('a commit applied again after its inbox record expired, the window set in code (no environment override): read from the expiry the runtime wrote, named as the config setting', () => {
    // GIVEN no IEF_DEDUPLICATION_WINDOW_SECONDS (the window set through createTransactionalConsumer's config): the inbox record expires 60 s after its commit
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const expiring = (body: object, at: number): object => {
      const items = (body as { TransactItems: { Put?: { Item: Record<string, unknown> } }[] }).TransactItems;
      const inbox = items.at(-1)!.Put!;
      return { TransactItems: [...items.slice(0, -1), { Put: { ...inbox, Item: { ...inbox.Item, expiresAt: { N: String(at) } } } }] };
    };
    flow.invoke([['e-1', 1]], [{ body: expiring(commit('Billing', 'e-1', { Update: { TableName: 'Ledger' } }), 1_000 + 60), applied: true }]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: expiring(commit('Billing', 'e-1', { Update: { TableName: 'Ledger' } }), 1_180 + 60), applied: true }]);

    // THEN the window and the delay are named, as the setting in code
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.setting])).toEqual([
      ['deduplication-window-expired', { name: 'deduplicationWindowSeconds', value: 60, observedDelay: 180 }],
    ]);
  });

  test("a transactional consumer's window set in code while the environment keeps the construct's (30 days): the expiry the runtime wrote decides, named as the config setting", () => {
    // GIVEN IEF_DEDUPLICATION_WINDOW_SECONDS is the construct's 30 days, and the handler's config sets 60 s: its inbox record expires 60 s after its commit
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', windowSeconds: 2_592_000 });
    const expiring = (body: object, at: number): object => {
      const items = (body as { TransactItems: { Put?: { Item: Record<string, unknown> } }[] }).TransactItems;
      const inbox = items.at(-1)!.Put!;
      return { TransactItems: [...items.slice(0, -1), { Put: { ...inbox, Item: { ...inbox.Item, expiresAt: { N: String(at) } } } }] };
    };
    flow.invoke([['e-1', 1]], [{ body: expiring(commit('Billing', 'e-1', { Update: { TableName: 'Ledger' } }), 1_000 + 60), applied: true }]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: expiring(commit('Billing', 'e-1', { Update: { TableName: 'Ledger' } }), 1_180 + 60), applied: true }]);

    // THEN the window the runtime used is named, as the setting in code; a record written with the environment's window names the environment's
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.setting])).toEqual([
      ['deduplication-window-expired', { name: 'deduplicationWindowSeconds', value: 60, observedDelay: 180 }],
    ]);
    const same = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', windowSeconds: 60 });
    same.invoke([['e-1', 1]], [{ body: expiring(commit('Billing', 'e-1'), 1_000 + 60), applied: true }]);
    same.later(180);
    same.invoke([['e-1', 2]], [{ body: expiring(commit('Billing', 'e-1'), 1_180 + 60), applied: true }]);
    expect(same.attribution.causes('Fn', ['e-1']).map((cause) => cause.setting?.name)).toEqual(['IEF_DEDUPLICATION_WINDOW_SECONDS']);
  });

  describe("a lease or multi-step consumer's window set in code (the environment keeps the construct's 30 days): read from the window the runtime wrote on its processing record", () => {
    /** The processing record's claim as the runtime puts it: its window written on it (`deduplicationWindowSeconds`). */
    const claim = (windowSeconds: number, applied = true) => ({
      body: { TableName: 'Inbox', Item: { pk: { S: 'Mailer#e-1' }, status: { S: 'IN_PROGRESS' }, deduplicationWindowSeconds: { N: String(windowSeconds) } } },
      operation: 'PutItem',
      applied,
    });
    const complete = { body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied: true };

    test('an effect the run cannot see (an HTTP call), claimed again after the record expired: the window named as the config setting', () => {
      const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 2_592_000 });
      flow.invoke([['e-1', 1]], [claim(60), complete]);
      flow.later(180);
      flow.invoke([['e-1', 2]], [claim(60), complete]);

      expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.setting])).toEqual([
        ['deduplication-window-expired', { name: 'deduplicationWindowSeconds', value: 60, observedDelay: 180 }],
      ]);
      expect(flow.attribution.cause('Fn', ['e-1'])).toContain('(window 60 s, redelivered after 180 s)');
    });

    test('a multi-step effect the run sees, run again after the record expired: the window, not a plain applied again', () => {
      const flow = run({ subscriber: 'Mailer', mode: 'multi-step', inboxTable: 'Inbox', windowSeconds: 2_592_000 });
      const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
      flow.invoke([['e-1', 1]], [claim(60), mail, complete]);
      flow.later(180);
      flow.invoke([['e-1', 2]], [claim(60), mail, complete]);

      expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.setting])).toEqual([
        ['deduplication-window-expired', { name: 'deduplicationWindowSeconds', value: 60, observedDelay: 180 }],
      ]);
    });

    test('a record written with a window the redelivery stayed within is no window cause', () => {
      const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
      const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
      flow.invoke([['e-1', 1]], [claim(600), mail, complete]);
      flow.later(180);
      flow.invoke([['e-1', 2]], [claim(600), mail, complete]);

      expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).not.toContain('deduplication-window-expired');
    });
  });

  test("a lease effect's lost response retried, in a batch: the effect's write is the event's by the claim before it", () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox' });
    const claim = (eventId: string) => ({ body: { TableName: 'Inbox', Key: { pk: { S: `Mailer#${eventId}` } } }, operation: 'UpdateItem', applied: true });
    const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem' };
    flow.invoke([['e-1', 1], ['e-2', 1]], [claim('e-1'), { ...mail, applied: true }, claim('e-2'), { ...mail, fault: 'lose-response', applied: true }], RETURNED, ['e-2']);
    flow.later(180);
    flow.invoke([['e-2', 2]], [claim('e-2'), { ...mail, applied: true }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toBeUndefined();
    expect(flow.attribution.cause('Fn', ['e-2'])).toMatch(
      /^event e-2: applied by invocation #1 \(receive 1, at \+0 s\) \(Mail: 1 UpdateItem\); applied again by invocation #2 \(receive 2, at \+180 s\): the response of invocation #1 \(receive 1, at \+0 s\)'s UpdateItem on Mail was lost after DynamoDB applied it, and the failure was retried \(a lost response retried/,
    );
  });

  test("a lease effect re-run by the takeover after a crash BEFORE the completion write (the effect applied earlier in that invocation): a redelivery after a crash, not a plain 'applied again'", () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox' });
    const record = (fault?: 'crash-before') => ({ body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied: fault === undefined, ...(fault === undefined ? {} : { fault }) });
    const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
    // the claim, the mail, then the process dies before its completion write is sent
    flow.invoke([['e-1', 1]], [record(), mail, record('crash-before')], { kind: 'crashed', atRequest: 3, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [record(), mail, record()]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['redelivery-after-crash']);
    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(/applied again by invocation #2 \(receive 2, at \+180 s\): invocation #1 \(receive 1, at \+0 s\) crashed after DynamoDB applied its write, and the redelivery ran it again \(a redelivery after a crash\)/);
  });

  test("an effect applied again after an invocation that failed without a crash or a lost response: the plain 'applied again' (the fallback), a later crash before the effect's write not taken for its cause", () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox' });
    const claim = { body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied: true };
    const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
    // an earlier mail applied by invocation 1, then invocation 2 dies before sending its mail, and invocation 3 mails
    flow.invoke([['e-1', 1]], [claim, mail], { kind: 'threw', errorName: 'Error', errorMessage: 'boom' });
    flow.later(180);
    flow.invoke([['e-1', 2]], [claim, { ...mail, fault: 'crash-before', applied: false }], { kind: 'crashed', atRequest: 2, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 3]], [claim, mail]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['applied-again']);
  });

  test("a handler run again for one commit with other writes (a cache kept between attempts); a correct handler's reruns write the same and are not named", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const put = (total: number) => ({ Put: { TableName: 'Ledger', Item: { pk: { S: 'order-1' }, total: { N: String(total) } } } });
    flow.invoke([['e-1', 1]], [{ body: commit('Billing', 'e-1', put(100)), fault: 'conflict', applied: false }, { body: commit('Billing', 'e-1', put(200)), applied: true }]);
    flow.invoke([['e-2', 1]], [{ body: commit('Billing', 'e-2', put(5)), fault: 'conflict', applied: false }, { body: commit('Billing', 'e-2', put(5)), applied: true }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(
      /^event e-1: committed once, by invocation #1 \(receive 1, at \+0 s\), yet its handler ran 2 times with different writes \(commits not applied: invocation #1 \(receive 1, at \+0 s\): 1 refused by a transaction conflict\): .*a module-level cache written back/,
    );
    expect(flow.attribution.cause('Fn', ['e-2'])).toBeUndefined();
  });

  test("a count too low: a commit without the writes an earlier run of the handler staged (a set kept in memory) names the refused run and the committing one; a correct handler's rerun is not named", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const add = { Update: { TableName: 'Ledger', Key: { pk: { S: 'order-1' } }, UpdateExpression: 'ADD total :t' } };
    flow.invoke([['e-1', 1]], [{ body: commit('Billing', 'e-1', add), fault: 'conflict', applied: false }], { kind: 'threw', errorName: 'TransactionCanceledException', errorMessage: 'conflict' });
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: commit('Billing', 'e-1'), applied: true }]);
    flow.invoke([['e-2', 1]], [{ body: commit('Billing', 'e-2', add), fault: 'conflict', applied: false }, { body: commit('Billing', 'e-2', add), applied: true }]);

    expect(flow.attribution.shortCause('Fn', ['e-1'])).toMatch(
      /^event e-1: committed once, by invocation #2 \(receive 2, at \+180 s\), with none of the writes an earlier run of its handler staged for it \(commits not applied: invocation #1 \(receive 1, at \+0 s\): 1 refused by a transaction conflict\): the committing run read state/,
    );
    const [cause] = flow.attribution.shortCauses('Fn', ['e-1']);
    expect(cause).toMatchObject({ kind: 'state-kept-between-attempts', subscriber: 'Billing', eventIds: ['e-1'] });
    expect(cause!.invocations.map((invocation) => [invocation.number, invocation.role])).toEqual([[1, 'not-applied'], [2, 'applied']]);
    expect(flow.attribution.shortCauses('Fn', ['e-2'])).toEqual([]);
  });

  test("a count too low: a commit computed from a copy its environment kept since an earlier invocation, another environment having written the item in between (two environments' caches), names both; a handler that reads the item in its own invocation is not named", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const read = (pk: string) => ({ body: { TableName: 'Ledger', Key: { pk: { S: pk } }, ConsistentRead: true }, operation: 'GetItem', applied: false });
    const count = (pk: string, value: number) => ({ Update: { TableName: 'Ledger', Key: { pk: { S: pk } }, UpdateExpression: 'SET orderCount = :count', ExpressionAttributeValues: { ':count': { N: String(value) } } } });
    // environment 1 reads customer-1's count (0) and commits 1; environment 2 reads 1 and commits 2; environment 1
    // commits 2 from its copy, without reading the item again: one order lost
    flow.invoke([['e-1', 1]], [read('customer-1'), { body: commit('Billing', 'e-1', count('customer-1', 1)), applied: true }], RETURNED, [], 1);
    flow.invoke([['e-2', 1]], [read('customer-1'), { body: commit('Billing', 'e-2', count('customer-1', 2)), applied: true }], RETURNED, [], 2);
    flow.later(30);
    flow.invoke([['e-3', 1]], [{ body: commit('Billing', 'e-3', count('customer-1', 2)), applied: true }], RETURNED, [], 1);
    // customer-2: each invocation reads the item before its commit (no copy kept), in two environments
    flow.invoke([['e-4', 1]], [read('customer-2'), { body: commit('Billing', 'e-4', count('customer-2', 1)), applied: true }], RETURNED, [], 1);
    flow.invoke([['e-5', 1]], [read('customer-2'), { body: commit('Billing', 'e-5', count('customer-2', 2)), applied: true }], RETURNED, [], 2);
    flow.invoke([['e-6', 1]], [read('customer-2'), { body: commit('Billing', 'e-6', count('customer-2', 3)), applied: true }], RETURNED, [], 1);

    expect(flow.attribution.shortCause('Fn', ['e-1', 'e-2', 'e-3'])).toBe(
      'event e-3: committed once, by invocation #3 (receive 1, at +30 s), which wrote Ledger item {"pk":"customer-1"} from what its execution environment kept in memory since invocation #1 (receive 1, at +0 s), ' +
        'although invocation #2 (receive 1, at +0 s), in another environment, had written that item since (a lost update: a module-level cache kept across invocations is stale once another environment writes the item); ' +
        'compute each write from the event and what the transaction reads, never from memory',
    );
    const causes = flow.attribution.shortCauses('Fn', ['e-1', 'e-2', 'e-3']);
    expect(causes).toHaveLength(1);
    expect(causes[0]).toMatchObject({ kind: 'state-kept-between-attempts', subscriber: 'Billing', eventIds: ['e-3'] });
    expect(causes[0]!.invocations.map((invocation) => [invocation.number, invocation.role])).toEqual([[2, 'overwritten'], [3, 'applied']]);
    expect(flow.attribution.shortCauses('Fn', ['e-4', 'e-5', 'e-6'])).toEqual([]);

    // customer-3: environment 1 reads it, environment 2 commits, then environment 1 reads it again before its commit: a fresh read, nothing lost
    flow.invoke([['e-7', 1]], [read('customer-3')], { kind: 'threw', errorName: 'Error', errorMessage: 'not yet' }, [], 1);
    flow.invoke([['e-8', 1]], [read('customer-3'), { body: commit('Billing', 'e-8', count('customer-3', 1)), applied: true }], RETURNED, [], 2);
    flow.invoke([['e-7', 2]], [read('customer-3'), { body: commit('Billing', 'e-7', count('customer-3', 1)), applied: true }], RETURNED, [], 1);
    expect(flow.attribution.shortCauses('Fn', ['e-7', 'e-8'])).toEqual([]);
  });

  test("a count too low: a commit computed from its own invocation's read, another environment having written the item between the read and the commit, is a lost update; an ADD is never one", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const read = { body: { TableName: 'Ledger', Key: { pk: { S: 'customer-1' } } }, operation: 'GetItem', applied: false };
    const set = { Update: { TableName: 'Ledger', Key: { pk: { S: 'customer-1' } }, UpdateExpression: 'SET orderCount = :count', ExpressionAttributeValues: { ':count': { N: '1' } } } };
    const attribution = flow.attribution;
    // invocation #1 (environment 1) reads; invocation #2 (environment 2) reads and commits; then #1's commit: the
    // harness sends an invocation's requests together, so its read and commit go through onRequest by hand
    attribution.onRequest('Fn', 'Mapping|a|1', { operation: 'GetItem', index: 1, body: Buffer.from(JSON.stringify(read.body)) }, 'none', 1);
    attribution.onAnswered('Fn', 'Mapping|a|1', { index: 1 }, true);
    flow.invoke([['e-2', 1]], [read, { body: commit('Billing', 'e-2', set), applied: true }], RETURNED, [], 2);
    attribution.onRequest('Fn', 'Mapping|a|1', { operation: 'TransactWriteItems', index: 2, body: Buffer.from(JSON.stringify(commit('Billing', 'e-1', set))) }, 'none', 1);
    attribution.onAnswered('Fn', 'Mapping|a|1', { index: 2 }, true);
    attribution.onInvocation('Fn', 'Mapping|a|1', { messages: [{ messageId: 'msg-e-1', receiveCount: 1, origin: { eventId: 'e-1', via: 'sns' } }], outcome: RETURNED, failedMessageIds: [] });

    expect(attribution.shortCause('Fn', ['e-1', 'e-2'])).toMatch(
      /^event e-1: committed once, by invocation #2 \(receive 1, at \+0 s\), which wrote Ledger item \{"pk":"customer-1"\} computed from its own earlier read of it, although invocation #1 \(receive 1, at \+0 s\), in another environment, had written that item after the read \(a lost update/,
    );
    const [cause] = attribution.shortCauses('Fn', ['e-1', 'e-2']);
    expect(cause).toMatchObject({ kind: 'lost-update', subscriber: 'Billing', eventIds: ['e-1'] });
    expect(cause!.invocations.map((invocation) => [invocation.number, invocation.role])).toEqual([[1, 'overwritten'], [2, 'applied']]);

    // the same interleaving with ADD: the commit adds to what the item holds, nothing is lost
    const adding = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const add = { Update: { TableName: 'Ledger', Key: { pk: { S: 'customer-1' } }, UpdateExpression: 'ADD orderCount :one' } };
    adding.attribution.onRequest('Fn', 'Mapping|a|1', { operation: 'GetItem', index: 1, body: Buffer.from(JSON.stringify(read.body)) }, 'none', 1);
    adding.attribution.onAnswered('Fn', 'Mapping|a|1', { index: 1 }, true);
    adding.invoke([['e-2', 1]], [read, { body: commit('Billing', 'e-2', add), applied: true }], RETURNED, [], 2);
    adding.attribution.onRequest('Fn', 'Mapping|a|1', { operation: 'TransactWriteItems', index: 2, body: Buffer.from(JSON.stringify(commit('Billing', 'e-1', add))) }, 'none', 1);
    adding.attribution.onAnswered('Fn', 'Mapping|a|1', { index: 2 }, true);
    adding.attribution.onInvocation('Fn', 'Mapping|a|1', { messages: [{ messageId: 'msg-e-1', receiveCount: 1, origin: { eventId: 'e-1', via: 'sns' } }], outcome: RETURNED, failedMessageIds: [] });
    expect(adding.attribution.shortCauses('Fn', ['e-1', 'e-2'])).toEqual([]);
  });

  test("an own client's write left by a crashed invocation, then written again: named by invocation and table", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const update = { body: { TableName: 'Ledger', Key: { pk: { S: 'order-1' } } }, operation: 'UpdateItem', applied: true };
    flow.invoke([['e-1', 1]], [update, { body: commit('Billing', 'e-1'), fault: 'crash-before', applied: false }], { kind: 'crashed', atRequest: 2, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [update, { body: commit('Billing', 'e-1'), applied: true }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: applied by invocation #1 (receive 1, at +0 s) (Ledger: 1 UpdateItem); applied again by invocation #2 (receive 2, at +180 s) with its own client (Ledger: 1 UpdateItem), ' +
        'after invocation #1 (receive 1, at +0 s) crashed at DynamoDB request 2 (before DynamoDB applied it): a write outside the transaction is not undone when the commit fails, nor stopped by the inbox record when the event comes again (its own client: write through the transaction)',
    );
  });

  test("an own client's write at each run of the handler in ONE invocation (its commit refused by a conflict, then retried by the runtime): an application per run, named as the contention retry's rerun", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const update = { body: { TableName: 'Ledger', Key: { pk: { S: 'order-1' } } }, operation: 'UpdateItem', applied: true };
    flow.invoke([['e-1', 1]], [update, { body: commit('Billing', 'e-1'), fault: 'conflict', applied: false }, update, { body: commit('Billing', 'e-1'), applied: true }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: applied by invocation #1 (receive 1, at +0 s) (Ledger: 1 UpdateItem); applied again by invocation #1 (receive 1, at +0 s) with its own client (Ledger: 1 UpdateItem), ' +
        'after invocation #1 (receive 1, at +0 s) ran the handler once and its commit was refused by a transaction conflict, so the runtime ran the handler again in the same invocation to retry the commit: ' +
        'a write outside the transaction is not undone when the commit fails, nor stopped by the inbox record when the event comes again (its own client: write through the transaction)',
    );
  });

  test("a batch whose handlers all wrote with their own client before the first commit: each write is the event's whose subject it names", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const invoice = (order: string) => ({ body: { TransactItems: [{ Put: { TableName: 'Outbox', Item: { pk: { S: `OUTBOX#${order}-x` }, subject: { S: order } } } }] }, applied: true });
    flow.invoke([['placed-o-1', 1, 'o-1']], [invoice('o-1'), { body: commit('Billing', 'placed-o-1'), fault: 'crash-after', applied: true }], { kind: 'crashed', atRequest: 2, afterCommit: true });
    flow.later(180);
    // the batch's handlers run first, then its commits, in another order than the records
    flow.invoke([['placed-o-1', 2, 'o-1'], ['placed-o-2', 1, 'o-2'], ['placed-o-3', 1, 'o-3']], [invoice('o-1'), invoice('o-2'), invoice('o-3'), { body: commit('Billing', 'placed-o-3'), applied: true }, { body: commit('Billing', 'placed-o-2'), applied: true }, { body: commit('Billing', 'placed-o-1'), applied: false }]);

    expect(flow.attribution.cause('Fn', ['placed-o-1'])).toMatch(/^event placed-o-1: applied by invocation #1 \(receive 1, at \+0 s\) \(Outbox: 1 TransactWriteItems\); applied again by invocation #2 \(receive 2, at \+180 s\) with its own client \(Outbox: 1 TransactWriteItems\), after invocation #1/);
    expect(flow.attribution.cause('Fn', ['placed-o-2'])).toBeUndefined();
    expect(flow.attribution.cause('Fn', ['placed-o-3'])).toBeUndefined();
  });

  test("an aggregate's apply() writing with its own client, its commit lost to a crash, then redelivered: named as a write in apply(); the aggregate's own commits are not own-client writes", () => {
    const flow = run({ subscriber: 'Billing', mode: 'aggregate' });
    const update = { body: { TableName: 'Ledger', Key: { pk: { S: 'ORDER#o-1#ledger' } } }, operation: 'UpdateItem', applied: true };
    const aggregateCommit = (applied: boolean, fault?: 'crash-before') => ({
      body: { TableName: 'Ledger', Item: { pk: { S: 'BILLING#o-1' }, processedMessages: { L: [{ S: 'e-1 0123456789abcdef' }] } } },
      operation: 'PutItem',
      applied,
      ...(fault === undefined ? {} : { fault }),
    });
    flow.invoke([['e-1', 1]], [update, aggregateCommit(false, 'crash-before')], { kind: 'crashed', atRequest: 2, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [update, aggregateCommit(true)]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: applied by invocation #1 (receive 1, at +0 s) (Ledger: 1 UpdateItem); applied again by invocation #2 (receive 2, at +180 s) with its own client (Ledger: 1 UpdateItem), ' +
        'after invocation #1 (receive 1, at +0 s) crashed at DynamoDB request 2 (before DynamoDB applied it): a write outside the transaction, in apply(), is not undone when the commit fails, ' +
        'nor stopped by the processed ids when the event comes again (return the change as the state from apply() instead)',
    );
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['write-outside-transaction']);
  });

  test("an aggregate's apply() write with its own client, then a commit of the event: the own client named, never another mode's advice (a step's write, a redelivery after a crash)", () => {
    const flow = run({ subscriber: 'Loyalty', mode: 'aggregate' });
    const update = (fault?: 'lose-response') => ({ body: { TableName: 'Loyalty', Key: { pk: { S: 'BONUS#c-1' } }, UpdateExpression: 'ADD bonus :one' }, operation: 'UpdateItem', applied: true, ...(fault === undefined ? {} : { fault }) });
    const aggregateCommit = (eventId: string, applied: boolean, fault?: 'crash-before') => ({
      body: { TableName: 'Loyalty', Item: { pk: { S: `CUSTOMER#${eventId}` }, processedMessages: { L: [{ S: `${eventId} 0123456789abcdef` }] } } },
      operation: 'PutItem',
      applied,
      ...(fault === undefined ? {} : { fault }),
    });
    // e-1: apply() wrote with its own client, then the process died before the commit; the redelivery commits without
    // an own-client write (the run's apply() wrote only the first time)
    flow.invoke([['e-1', 1]], [update(), aggregateCommit('e-1', false, 'crash-before')], { kind: 'crashed', atRequest: 2, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [aggregateCommit('e-1', true)]);
    // e-2: apply()'s own write, its response lost, re-sent by the SDK in the same run, then the commit
    flow.invoke([['e-2', 1]], [update('lose-response'), update(), aggregateCommit('e-2', true)]);

    for (const eventId of ['e-1', 'e-2']) {
      const text = flow.attribution.cause('Fn', [eventId])!;
      expect(text, eventId).toContain('with its own client');
      expect(text, eventId).not.toMatch(/step|a redelivery after a crash|idempotency key/);
      expect(flow.attribution.causes('Fn', [eventId]).map((cause) => cause.kind), eventId).toEqual(['write-outside-transaction']);
    }
  });

  test("an aggregate's later commit whose processed ids list an earlier event is no second application of it (a redelivery the runtime skipped, beside a new event of the aggregate)", () => {
    const flow = run({ subscriber: 'Billing', mode: 'aggregate' });
    const aggregateCommit = (...eventIds: string[]) => ({
      body: { TableName: 'Ledger', Item: { pk: { S: 'BILLING#o-1' }, processedMessages: { L: eventIds.map((eventId) => ({ S: `${eventId} 0123456789abcdef` })) } } },
      operation: 'PutItem',
      applied: true,
    });
    // e-1 applied; its delete lost, it comes again beside e-2 of the same aggregate: the runtime skips e-1 (listed) and
    // commits e-2, whose item keeps e-1 in its processed ids
    flow.invoke([['e-1', 1]], [aggregateCommit('e-1')]);
    flow.later(180);
    flow.invoke([['e-1', 2], ['e-2', 1]], [aggregateCommit('e-1', 'e-2')]);
    flow.later(180);
    flow.invoke([['e-3', 1], ['e-1', 3]], [aggregateCommit('e-1', 'e-2', 'e-3')]);

    expect(flow.attribution.causes('Fn', ['e-1'])).toEqual([]);
    expect(flow.attribution.cause('Fn', ['e-1'])).toBeUndefined();
    expect(flow.attribution.causes('Fn', ['e-2', 'e-3'])).toEqual([]);
  });

  test("an aggregate's commits are ordered as DynamoDB applied them, not as their invocations ended: a copy that ended first, committed after the commit that added the event, is no second application (new-user trial NU18-3)", () => {
    // GIVEN Loyalty's item CUSTOMER#c: G's commit (invocation C), then E's (invocation B, a second copy of E), then F's
    // (invocation A, carrying E's first copy too, which it skips: listed), applied in that order, the invocations ending A, C, B
    const attribution = new ApplyAttribution(() => 1_000_000, () => ['pk']);
    attribution.watch('Fn', { subscriber: 'Loyalty', mode: 'aggregate' });
    const put = (index: number, ...eventIds: string[]) => ({
      operation: 'PutItem',
      index,
      body: Buffer.from(JSON.stringify({ TableName: 'Loyalty', Item: { pk: { S: 'CUSTOMER#c' }, processedMessages: { L: eventIds.map((eventId) => ({ S: `${eventId} 0123456789abcdef` })) } } })),
    });
    const [g, e, f] = [put(1, 'g'), put(1, 'g', 'e'), put(1, 'g', 'e', 'f')];
    attribution.onRequest('Fn', 'M|c|1', g, 'none');
    attribution.onAnswered('Fn', 'M|c|1', g, true);
    attribution.onRequest('Fn', 'M|b|2', e, 'none');
    attribution.onAnswered('Fn', 'M|b|2', e, true);
    attribution.onRequest('Fn', 'M|a|3', f, 'none');
    attribution.onAnswered('Fn', 'M|a|3', f, true);
    const ended = (key: string, ...events: [string, number][]) =>
      attribution.onInvocation('Fn', key, { messages: events.map(([eventId, receiveCount]) => ({ messageId: `${key}-${eventId}`, receiveCount, origin: { eventId, via: 'sns' } })), outcome: RETURNED, failedMessageIds: [] });
    ended('M|a|3', ['e', 3], ['f', 1]);
    ended('M|c|1', ['g', 1]);
    ended('M|b|2', ['e', 2]);

    // THEN e was applied once (by B), and the correct consumer is told no story of it
    expect(attribution.causes('Fn', ['e'])).toEqual([]);
    expect(attribution.cause('Fn', ['e', 'f', 'g'])).toBeUndefined();
  });

  test("an aggregate's event applied to a second item is still two applications (the key that differs), the second item's later commits not counted again", () => {
    const flow = run({ subscriber: 'Billing', mode: 'aggregate' });
    const commitTo = (item: string, ...eventIds: string[]) => ({
      body: { TableName: 'Ledger', Item: { pk: { S: item }, processedMessages: { L: eventIds.map((eventId) => ({ S: `${eventId} 0123456789abcdef` })) } } },
      operation: 'PutItem',
      applied: true,
    });
    flow.invoke([['e-1', 1]], [commitTo('ORDER#o-1#1', 'e-1')]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [commitTo('ORDER#o-1#4', 'e-1')]);
    flow.invoke([['e-1', 3], ['e-2', 1]], [commitTo('ORDER#o-1#4', 'e-1', 'e-2')]);

    const causes = flow.attribution.causes('Fn', ['e-1']);
    expect(causes.map((cause) => cause.kind)).toEqual(['aggregate-key-differs']);
    expect(causes[0]!.invocations.map((invocation) => [invocation.number, invocation.role])).toEqual([[1, 'applied'], [2, 'applied-again']]);
  });

  test('a handler that reads the item in the same run before each commit, its refused commit staged from an older read: other writes, explained by the fresh read, are not named state kept between attempts', () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox' });
    const read = { body: { TableName: 'Ledger', Key: { pk: { S: 'sku-1' } }, ConsistentRead: true }, operation: 'GetItem', applied: false };
    const reserved = (value: number) => ({ Update: { TableName: 'Ledger', Key: { pk: { S: 'sku-1' } }, UpdateExpression: 'SET reserved = :r', ExpressionAttributeValues: { ':r': { N: String(value) } } } });
    const log = { Put: { TableName: 'Log', Item: { pk: { S: 'res-1' } } } };
    // e-1: read 4, commit 5 refused; read again (another event made it 5), commit 6: a correct read-then-write retry
    flow.invoke([['e-1', 1]], [read, { body: commit('Billing', 'e-1', reserved(5), log), fault: 'conflict', applied: false }, read, { body: commit('Billing', 'e-1', reserved(6), log), applied: true }]);
    // e-2: the same shape, but the retry's commit is not preceded by a read of the item: a copy kept in memory
    flow.invoke([['e-2', 1]], [read, { body: commit('Billing', 'e-2', reserved(7), log), fault: 'conflict', applied: false }, { body: commit('Billing', 'e-2', reserved(8), log), applied: true }]);

    expect(flow.attribution.shortCauses('Fn', ['e-1']).map((cause) => cause.kind)).not.toContain('state-kept-between-attempts');
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).not.toContain('state-kept-between-attempts');
    expect(flow.attribution.shortCauses('Fn', ['e-2']).map((cause) => cause.kind)).toEqual(['state-kept-between-attempts']);
    expect(flow.attribution.causes('Fn', ['e-2']).map((cause) => cause.kind)).toEqual(['state-kept-between-attempts']);
  });

  test("a correct handler that emits with tx.emit, its commit refused then applied minutes later: the emitted envelope's time moves with the clock, and the handler is not told it keeps state", () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', outboxTable: 'Outbox' });
    const emitted = (time: string, writtenAt: number) => ({
      Put: {
        TableName: 'Outbox',
        Item: {
          pk: { S: 'OUTBOX#billed-1' },
          iefRecordType: { S: 'OutboxEvent.v1' },
          iefEventId: { S: 'billed-1' },
          iefEnvelope: { S: JSON.stringify({ specversion: '1.0', id: 'billed-1', type: 'OrderBilled', time, data: { orderId: 'o-1' } }) },
          iefWrittenAt: { N: String(writtenAt) },
          expiresAt: { N: String(Math.floor(writtenAt / 1000) + 86_400) },
        },
      },
    });
    const ledger = { Update: { TableName: 'Ledger', Key: { pk: { S: 'c-1' } }, UpdateExpression: 'ADD orderCount :one' } };
    flow.invoke([['e-1', 1]], [{ body: commit('Billing', 'e-1', ledger, emitted('2026-11-30T00:00:00.000Z', 1_000_000)), fault: 'conflict', applied: false }], { kind: 'threw', errorName: 'TransactionCanceledException', errorMessage: 'conflict' });
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: commit('Billing', 'e-1', ledger, emitted('2026-11-30T00:03:00.000Z', 1_180_000)), applied: true }]);

    expect(flow.attribution.causes('Fn', ['e-1'])).toEqual([]);
    // the emitted event's own content still tells two runs apart
    flow.invoke([['e-2', 1]], [{ body: commit('Billing', 'e-2', { Put: { ...emitted('t', 1).Put, Item: { ...emitted('t', 1).Put.Item, iefEnvelope: { S: '{"id":"b","data":{"n":1}}' } } } }), fault: 'conflict', applied: false }, { body: commit('Billing', 'e-2', { Put: { ...emitted('t', 1).Put, Item: { ...emitted('t', 1).Put.Item, iefEnvelope: { S: '{"id":"b","data":{"n":2}}' } } } }), applied: true }]);
    expect(flow.attribution.causes('Fn', ['e-2']).map((cause) => cause.kind)).toEqual(['state-kept-between-attempts']);
  });

  test('a lease effect the run cannot see (an HTTP call), its completed inbox record expired: the claim taken again after the window names the window and the delay', () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    const record = (applied = true) => ({ body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied });
    flow.invoke([['e-1', 1]], [record(), record()]);
    flow.later(30);
    // within the window the completed record refuses the claim
    flow.invoke([['e-1', 2]], [record(false)]);
    flow.later(150);
    flow.invoke([['e-1', 3]], [record(), record()]);

    const [cause, ...others] = flow.attribution.causes('Fn', ['e-1']);
    expect(others).toEqual([]);
    expect(cause).toMatchObject({ kind: 'deduplication-window-expired', subscriber: 'Mailer', setting: { name: 'IEF_DEDUPLICATION_WINDOW_SECONDS', value: 60, observedDelay: 180 } });
    expect(cause!.invocations.map((invocation) => [invocation.number, invocation.role])).toEqual([[1, 'applied'], [3, 'applied-again']]);
    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: completed by invocation #1 (receive 1, at +0 s); claimed and run again by invocation #3 (receive 3, at +180 s) after its inbox record expired (window 60 s, redelivered after 180 s): the deduplication window must cover every redelivery',
    );
  });

  test('a lease effect the run sees, its completed inbox record expired: the window, not a plain applied again', () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    const record = { body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied: true };
    const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
    flow.invoke([['e-1', 1]], [record, mail, record]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [record, mail, record]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.setting?.observedDelay, cause.setting?.needed])).toEqual([['deduplication-window-expired', 180, undefined]]);
  });

  test('a lease effect whose earlier invocation CRASHED after the effect, its processing record expired with the short window: the window, not a redelivery after a crash (a consumer that already blocks an expired lease)', () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    const record = (fault?: 'crash-before') => ({ body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied: fault === undefined, ...(fault === undefined ? {} : { fault }) });
    const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
    flow.invoke([['e-1', 1]], [record(), mail, record('crash-before')], { kind: 'crashed', atRequest: 3, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [record(), mail, record()]);

    const causes = flow.attribution.causes('Fn', ['e-1']);
    expect(causes.map((cause) => [cause.kind, cause.setting])).toEqual([['deduplication-window-expired', { name: 'IEF_DEDUPLICATION_WINDOW_SECONDS', value: 60, observedDelay: 180 }]]);
    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(/applied again by invocation #2 \(receive 2, at \+180 s\) after the inbox record of invocation #1 \(receive 1, at \+0 s\), which crashed after the effect, expired \(window 60 s, redelivered after 180 s\)/);
  });

  test('a lease effect the run cannot see, its claim left by a crash and expired with the short window: claimed afresh, the window named', () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    const record = (applied = true) => ({ body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied });
    flow.invoke([['e-1', 1]], [record(), { ...record(false), fault: 'crash-before' as const }], { kind: 'crashed', atRequest: 2, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [record(), record()]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['deduplication-window-expired']);
  });

  test('which consumed event an emitted event was emitted for: by the commit that put it (tx.emit), or by the event an own outbox write was made for; a failed write emitted nothing', () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', outboxTable: 'Outbox' });
    const outboxPut = (eventId: string) => ({ Put: { TableName: 'Outbox', Item: { pk: { S: `OUTBOX#${eventId}` }, iefEventId: { S: eventId } } } });
    flow.invoke([['e-1', 1], ['e-2', 1]], [{ body: commit('Billing', 'e-1', outboxPut('billed-1')), applied: true }, { body: commit('Billing', 'e-2', outboxPut('billed-2')), fault: 'conflict', applied: false }]);
    flow.invoke([['e-3', 1]], [{ body: { TransactItems: [outboxPut('billed-3')] }, applied: true }, { body: commit('Billing', 'e-3'), applied: true }]);

    expect([flow.attribution.emittedFor('billed-1'), flow.attribution.emittedFor('billed-2'), flow.attribution.emittedFor('billed-3'), flow.attribution.emittedFor('e-1')]).toEqual([['e-1'], [], ['e-3'], []]);
  });

  test('after close, nothing is recorded or told (a served run goes on invoking)', () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', windowSeconds: 60 });
    flow.invoke([['e-1', 1]], [{ body: commit('Billing', 'e-1'), applied: true }]);
    flow.attribution.close();
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: commit('Billing', 'e-1'), applied: true }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toBeUndefined();
  });
});

/** A lease or multi-step consumer's processing record writes, as the runtime sends them (lambda/processing/record-store.ts). */
const LEASE = 'leaseExpiresAtEpochMilliseconds';
const claim = (subscriber: string, eventId: string) => ({
  operation: 'PutItem',
  body: { TableName: 'Inbox', Item: { pk: { S: `${subscriber}#${eventId}` }, status: { S: 'IN_PROGRESS' }, [LEASE]: { N: '1000090000' } }, ConditionExpression: 'attribute_not_exists(pk)' },
});
/** A step's success that starts the next step: the lease set again. */
const advance = (subscriber: string, eventId: string) => ({
  operation: 'UpdateItem',
  body: {
    TableName: 'Inbox',
    Key: { pk: { S: `${subscriber}#${eventId}` } },
    UpdateExpression: 'SET #s0 = :s0, #s1 = :s1',
    ConditionExpression: '#owner = :owner AND #version = :observedVersion',
    ExpressionAttributeNames: { '#s0': 'activeStep', '#s1': LEASE, '#owner': 'owner', '#version': 'version' },
    ExpressionAttributeValues: { ':s0': { S: 'notify' }, ':s1': { N: '1000180000' } },
  },
});
/** The last step's success: the record completed, its lease removed. */
const complete = (subscriber: string, eventId: string) => ({
  operation: 'UpdateItem',
  body: {
    TableName: 'Inbox',
    Key: { pk: { S: `${subscriber}#${eventId}` } },
    UpdateExpression: 'SET #s0 = :s0 REMOVE #r0',
    ConditionExpression: '#owner = :owner AND #version = :observedVersion',
    ExpressionAttributeNames: { '#s0': 'status', '#r0': LEASE, '#owner': 'owner', '#version': 'version' },
    ExpressionAttributeValues: { ':s0': { S: 'COMPLETED' } },
  },
});

describe('an HTTP effect of a lease or multi-step consumer made outside its lease or step (new-user trial NU15-1)', () => {
  test('a lease consumer that POSTs before its lease claim: the call, each invocation that made it, and the fix', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox' });
    // GIVEN the handler POSTs /receipts, then the runtime claims: the first delivery crashes at its completion
    flow.invoke([['e-1', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), fault: 'crash-before', applied: false }], { kind: 'crashed', atRequest: 2, afterCommit: false }, [], 1, [
      { method: 'POST', host: '127.0.0.1:47392', path: '/receipts', afterRequest: 0 },
    ]);
    flow.later(180);
    // the redelivery POSTs again before its claim, which the live record refuses (or the expired lease blocks)
    flow.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: false }], RETURNED, ['e-1'], 1, [{ method: 'POST', host: '127.0.0.1:47392', path: '/receipts', afterRequest: 0 }]);

    const [cause, ...others] = flow.attribution.causes('Fn', ['e-1']);
    expect(others).toEqual([]);
    expect(cause).toEqual({
      kind: 'effect-outside-lease',
      subscriber: 'Receipts',
      eventIds: ['e-1'],
      invocations: [
        { number: 1, receive: 1, atSeconds: 0, role: 'applied' },
        { number: 2, receive: 2, atSeconds: 180, role: 'applied-again' },
      ],
      requests: [],
      calls: [{ method: 'POST', host: '127.0.0.1:47392', path: '/receipts', count: 2, when: 'before-claim' }],
      fix: fixFor('effect-outside-lease'),
    });
    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: POST 127.0.0.1:47392/receipts was called outside the lease by invocation #1 (receive 1, at +0 s) and again by invocation #2 (receive 2, at +180 s), ' +
        `each time before the lease claim: ${fixFor('effect-outside-lease')}`,
    );
    expect(fixFor('effect-outside-lease')).toMatch(/^move the call inside the lease's handle .*a redelivery repeats a call made outside it/);
  });

  test('a multi-step consumer that POSTs before its steps run: effect-outside-step, with the step wording', () => {
    const flow = run({ subscriber: 'Settlement', mode: 'multi-step', inboxTable: 'Inbox' });
    flow.invoke([['e-1', 1]], [{ ...claim('Settlement', 'e-1'), fault: 'crash-after', applied: true }], { kind: 'crashed', atRequest: 1, afterCommit: true }, [], 1, [{ path: '/settle', afterRequest: 0 }]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ ...claim('Settlement', 'e-1'), applied: false }], RETURNED, ['e-1'], 1, [{ path: '/settle', afterRequest: 0 }]);

    const causes = flow.attribution.causes('Fn', ['e-1']);
    expect(causes.map((cause) => [cause.kind, cause.calls, cause.fix])).toEqual([
      ['effect-outside-step', [{ method: 'POST', host: '127.0.0.1:8080', path: '/settle', count: 2, when: 'before-claim' }], fixFor('effect-outside-step')],
    ]);
    expect(fixFor('effect-outside-step')).toMatch(/into a step/);
    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(/POST 127\.0\.0\.1:8080\/settle was called outside any step by invocation #1 .* each time before the first step's claim: move the call into a step/);
  });

  test('in a batch, a call whose path names no event counts for each of the batch\'s events, and says so; one that names its event counts for it alone', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox' });
    flow.invoke([['e-1', 1], ['e-2', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...claim('Receipts', 'e-2'), fault: 'crash-before', applied: false }], { kind: 'crashed', atRequest: 2, afterCommit: false }, [], 1, [
      { path: '/receipts', afterRequest: 0 },
      { path: '/receipts', afterRequest: 0 },
      { path: '/cards/e-2', afterRequest: 0 },
    ]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: false }], RETURNED, [], 1, [{ path: '/receipts', afterRequest: 0 }]);
    flow.invoke([['e-2', 2]], [{ ...claim('Receipts', 'e-2'), applied: true }, { ...complete('Receipts', 'e-2'), applied: true }], RETURNED, [], 1, [{ path: '/cards/e-2', afterRequest: 0 }]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(
      /^event e-1: POST 127\.0\.0\.1:8080\/receipts was called outside the lease by invocation #1 \(receive 1, at \+0 s\) \(2 call\(s\) for its batch of 2 events\) and again by invocation #2 \(receive 2, at \+180 s\), each time before the lease claim: /,
    );
    // e-2's card call names e-2: it is told for e-2 alone, with its batch's /receipts calls
    expect(flow.attribution.causes('Fn', ['e-2']).map((cause) => cause.calls)).toEqual([
      [
        { method: 'POST', host: '127.0.0.1:8080', path: '/receipts', count: 2, when: 'before-claim' },
        { method: 'POST', host: '127.0.0.1:8080', path: '/cards/e-2', count: 2, when: 'before-claim' },
      ],
    ]);
  });

  test('a call after the record was completed (the handler POSTs once the runtime returned) is outside too', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox' });
    flow.invoke([['e-1', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], { kind: 'threw', errorName: 'Error', errorMessage: 'after' }, [], 1, [{ path: '/receipts', afterRequest: 2 }]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: false }], RETURNED, [], 1, [{ path: '/receipts', afterRequest: 1 }]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.calls])).toEqual([
      ['effect-outside-lease', [{ method: 'POST', host: '127.0.0.1:8080', path: '/receipts', count: 2, when: 'after-lease' }]],
    ]);
  });

  test('a correct lease consumer calling inside its lease, and a correct multi-step consumer calling inside each step: no such cause', () => {
    const lease = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox' });
    // the claim, the call (inside the lease), a crash before the completion; the takeover re-runs it (onExpiredLease 'retry')
    lease.invoke([['e-1', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), fault: 'crash-before', applied: false }], { kind: 'crashed', atRequest: 2, afterCommit: false }, [], 1, [{ path: '/receipts', afterRequest: 1 }]);
    lease.later(180);
    lease.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: false }, { ...advance('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], RETURNED, [], 1, [{ path: '/receipts', afterRequest: 2 }]);
    expect(lease.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).not.toContain('effect-outside-lease');

    const steps = run({ subscriber: 'Settlement', mode: 'multi-step', inboxTable: 'Inbox' });
    // claim, step 1's call, advance, step 2's call, completion; a second delivery finds it completed
    steps.invoke([['e-1', 1]], [{ ...claim('Settlement', 'e-1'), applied: true }, { ...advance('Settlement', 'e-1'), applied: true }, { ...complete('Settlement', 'e-1'), applied: true }], RETURNED, [], 1, [
      { path: '/settle', afterRequest: 1 },
      { path: '/notify', afterRequest: 2 },
    ]);
    steps.later(30);
    steps.invoke([['e-1', 2]], [{ ...claim('Settlement', 'e-1'), applied: false }]);
    // a claim whose response was lost: the SDK's retry is refused by the record it wrote, the runtime holds the lease
    steps.invoke([['e-2', 1]], [{ ...claim('Settlement', 'e-2'), fault: 'lose-response', applied: true }, { ...claim('Settlement', 'e-2'), applied: false }, { ...advance('Settlement', 'e-2'), applied: true }, { ...complete('Settlement', 'e-2'), applied: true }], RETURNED, [], 1, [
      { path: '/settle', afterRequest: 2 },
      { path: '/notify', afterRequest: 3 },
    ]);
    steps.invoke([['e-2', 2]], [{ ...claim('Settlement', 'e-2'), applied: false }]);
    expect(steps.attribution.causes('Fn', ['e-1', 'e-2']).map((cause) => cause.kind)).toEqual([]);
  });

  test('a GET outside the lease in each invocation (feature flags) does not take over the cause of the deduplication window (review r16b, R16B-1)', () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    const record = (applied = true) => ({ body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied });
    const flags = [{ method: 'GET', path: '/flags', afterRequest: 0 }];
    flow.invoke([['e-1', 1]], [record(), record()], undefined, [], 1, flags);
    flow.later(30);
    flow.invoke([['e-1', 2]], [record(false)], undefined, [], 1, flags);
    flow.later(150);
    flow.invoke([['e-1', 3]], [record(), record()], undefined, [], 1, flags);
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['deduplication-window-expired']);
  });

  test('a POST outside the lease made only by invocations that each claimed the lease afresh is not the cause: the window is (review r16b, R16B-1)', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    // GIVEN a token POST before each claim; the redelivery at +180 s claims again after the completed record expired
    const token = [{ path: '/oauth/token', afterRequest: 0 }];
    flow.invoke([['e-1', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], RETURNED, [], 1, token);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], RETURNED, [], 1, token);
    // THEN the handle ran twice under leases the runtime claimed: the window explains the count, not the call
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['deduplication-window-expired']);
    // AND a redelivery whose claim was refused, yet POSTed again, does not take the cause over: the two leased runs of
    // handle, the second after the window, explain the count; the call outside the lease is told only when nothing else
    // does (review r17, R17-3: a token POST before the claim, repeated by a refused duplicate, applies nothing)
    flow.later(30);
    flow.invoke([['e-1', 3]], [{ ...claim('Receipts', 'e-1'), applied: false }], RETURNED, ['e-1'], 1, token);
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['deduplication-window-expired']);
  });

  test('a token POST before the claim, repeated by a duplicate whose claim was refused, then a redelivery after the window: the window is the cause, not the call (review r17, R17-3)', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 60 });
    // GIVEN the token POST before the claim and the effect, POST /receipts, inside the lease
    const calls = [
      { path: '/oauth/token', afterRequest: 0 },
      { path: '/receipts', afterRequest: 1 },
    ];
    flow.invoke([['e-1', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], RETURNED, [], 1, calls);
    // AND a duplicate 30 s later POSTs the token and is refused its claim (the record is completed): no effect
    flow.later(30);
    flow.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: false }], RETURNED, [], 1, [calls[0]!]);
    // AND the redelivery after the 60 s window claims afresh and POSTs /receipts again inside its lease
    flow.later(150);
    flow.invoke([['e-1', 3]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], RETURNED, [], 1, calls);
    // THEN the cause is the window set too short, with its setting
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['deduplication-window-expired']);
  });

  test('a POST before the claim repeated by deliveries whose leases explain nothing (one leased application): still the call outside the lease', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox', windowSeconds: 3600 });
    const charge = [{ path: '/charge', afterRequest: 0 }];
    flow.invoke([['e-1', 1]], [{ ...claim('Receipts', 'e-1'), applied: true }, { ...complete('Receipts', 'e-1'), applied: true }], RETURNED, [], 1, charge);
    flow.later(30);
    flow.invoke([['e-1', 2]], [{ ...claim('Receipts', 'e-1'), applied: false }], RETURNED, [], 1, charge);
    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => [cause.kind, cause.calls?.map((call) => call.path)])).toEqual([['effect-outside-lease', ['/charge']]]);
  });
});
