/** The report `simulate` prints: its verdict says what was checked, and points at subscribers nothing reached. */
import { describe, expect, test } from 'vitest';
import { DEAD_LETTER_NOT_STEERED_TEXT, NOT_REPLAYABLE, catchUpLimitUnmet, formatSummary, replayLines } from '../../simulator/report/summary';
import { replayability } from '../../simulator/run/replayability';
import { resultJson } from '../../simulator/run/result-json';
import { IAM_NOT_CHECKED, IAM_NOT_PROVEN_TEXT, iamNotEvaluated, iamNotProvenReason } from '../../simulator/check/iam-not-evaluated';
import type { SimulationResult, SubscriberReport } from '../../simulator/run/simulation';
import { reportedRun } from '../support/simulation-result';
import { FAILURE_PATHS_NOT_MET_ADVICE, notSteeredFailurePaths, notSteeredReason } from '../../simulator/check/failure-paths';
import { runVerdict } from '../../simulator/run/verdict';
import { probeOutcomeText } from '../../simulator/report/last-receive-probe-lines';
import { DEFAULT_FAULT_RATES } from '../../simulator/run/options';
import { HOW_TO_INSTALL_POLICY_ENGINE } from '../../simulator/iam/policy-engine';

const NO_FAILURE_PATHS = { 'handler-error': 0, 'lost-response': 0, conflict: 0, 'crash-before-commit': 0, 'crash-after-commit': 0, redelivery: 0, 'dead-letter': 0 };

function subscriber(name: string, events: number, effects?: SubscriberReport['effects']): SubscriberReport {
  return { name, events, deliveries: events, duplicatesSuppressed: 0, faults: 0, faultsByKind: {}, retries: 0, deadLettered: 0, failurePaths: NO_FAILURE_PATHS, ...(effects ? { effects } : {}) };
}

function result(subscribers: SubscriberReport[], effectsNotCounted: string[]): SimulationResult {
  return reportedRun({ subscribers, effectsNotCounted });
}

describe('formatSummary', () => {
  test('a run whose IAM was not evaluated (the policy engine is not installed) says so in its verdict and in --json, loudly; it never reads as IAM checked (NUX14-2)', () => {
    const withoutEngine = { ...result([subscriber('Billing', 2)], []), iam: iamNotEvaluated('engine-missing') };

    const text = formatSummary(withoutEngine);
    const verdict = text.split('\n').find((line) => line.startsWith('OK: '))!;
    expect(verdict).toContain(`IAM NOT EVALUATED: ${IAM_NOT_CHECKED}`);
    expect(verdict).toContain('@cloud-copilot/iam-simulate');
    // its IAM line says it once, and why: the engine is not installed
    expect(text.split('\n').find((line) => line.startsWith('IAM: '))).toBe(`IAM: not evaluated: the policy engine @cloud-copilot/iam-simulate is not installed: ${HOW_TO_INSTALL_POLICY_ENGINE}`);
    const json = JSON.parse(JSON.stringify(resultJson(withoutEngine))) as { iam: { evaluated: boolean; notChecked?: string; cause?: string } };
    expect(json.iam).toMatchObject({ evaluated: false, cause: 'engine-missing', notChecked: IAM_NOT_CHECKED });
    // with --iam off the verdict says it too
    expect(formatSummary({ ...withoutEngine, iam: iamNotEvaluated('off') }).split('\n').find((line) => line.startsWith('OK: '))).toContain('IAM NOT EVALUATED (--iam off)');
  });

  test('an app across accounts run without IAM evaluation is NOT PROVEN, never OK, naming the accounts and how to check them (NUX15-2)', () => {
    const acrossAccounts = { ...result([subscriber('Billing', 2)], []), iam: iamNotEvaluated('engine-missing', ['111111111111', '222222222222', '111111111111']) };
    const lines = formatSummary(acrossAccounts).split('\n');
    expect(lines.some((line) => line.startsWith('OK'))).toBe(false);
    const verdict = lines.find((line) => line.startsWith('NOT PROVEN: '))!;
    expect(verdict).toContain(`${IAM_NOT_PROVEN_TEXT} 2 accounts (111111111111, 222222222222)`);
    expect(verdict).toContain('npm install --save-dev @cloud-copilot/iam-simulate');
    expect(verdict).not.toContain('--iam off');
    expect(iamNotProvenReason(iamNotEvaluated('off', ['111111111111', '222222222222']))).toContain('run it without --iam off');
    const json = JSON.parse(JSON.stringify(resultJson(acrossAccounts))) as { iam: { accounts?: string[] } };
    expect(json.iam.accounts).toEqual(['111111111111', '222222222222']);
    // one account: OK with the note, as before; IAM evaluated: never
    expect(iamNotProvenReason(iamNotEvaluated('off', ['111111111111', '111111111111']))).toBeUndefined();
    expect(iamNotProvenReason({ evaluated: true })).toBeUndefined();
  });

  test("a relay's catch-up that gave up at its real-time limit is on the relay line and in --json; a run that never met it says nothing of it", () => {
    const met = { ...result([subscriber('Billing', 2)], []), relay: { ...result([], []).relay, catchUpLimitMet: 2 } };

    expect(formatSummary(met)).toContain(`relay: 2 events committed to the outbox, 2 stream records read, 0 publish attempt(s) failed and retried; ${catchUpLimitUnmet(2)}`);
    expect(catchUpLimitUnmet(2)).toMatch(/^a relay stopped waiting for its stream to catch up with its table 2 time\(s\), after 60 s of real time each: .*may not replay/);
    expect((JSON.parse(JSON.stringify(resultJson(met))) as { relay: { catchUpLimitMet?: number } }).relay.catchUpLimitMet).toBe(2);
    expect(formatSummary(result([subscriber('Billing', 2)], []))).not.toContain('stopped waiting for its stream');
  });

  test('a run with subscribers not exercised ends NOT PROVEN, not OK, naming each and why; a violation still wins', () => {
    const relayGaveUp = {
      ...result([subscriber('Billing', 0), subscriber('Shipping', 0)], ['Billing', 'Shipping']),
      relay: { streamRecords: 2, committedEvents: 2, offloadedEvents: 0, failedAttempts: 22, deadLettered: 2, deadLetterMessages: 2, lost: 0 },
      notExercised: [
        { subscriber: 'Billing', reason: 'the relay gave up on all 2 committed event(s) its filter takes before they reached its topic' },
        { subscriber: 'Shipping', reason: 'the relay gave up on all 2 committed event(s) its filter takes before they reached its topic' },
      ],
    };
    const text = formatSummary(relayGaveUp);
    expect(text).not.toMatch(/^OK: /m);
    expect(text).toContain(
      'NOT PROVEN: no check failed (every event reached every matching subscriber or is on a dead-letter queue an alarm watches (2 given up by the relay, 0 by SNS); ' +
        'every valid event applied by every subscriber its filter took; every dead letter explained), but exactly-once was not exercised for 2 subscriber(s) that received no event:\n' +
        '  Billing: received no event: the relay gave up on all 2 committed event(s) its filter takes before they reached its topic\n' +
        '  Shipping: received no event: the relay gave up on all 2 committed event(s) its filter takes before they reached its topic\n',
    );

    const violated = formatSummary({ ...relayGaveUp, violations: [{ kind: 'lost', subscriber: 'Billing', detail: 'event e-1 lost' }] });
    expect(violated).toContain('VIOLATED: 1 invariant violation(s):');
    expect(violated).not.toContain('NOT PROVEN');
  });

  test('a run whose subscribers never met a failure path steered to them ends NOT PROVEN (not VIOLATED), naming each, the paths, the events and the advice; --json has them and its verdict', () => {
    const tracking = { ...subscriber('OrderTracking', 3), failurePaths: { ...NO_FAILURE_PATHS, 'lost-response': 1, 'crash-before-commit': 1, redelivery: 2 } };
    const notMet = {
      ...result([subscriber('Billing', 2), tracking], ['Billing', 'OrderTracking']),
      failurePathsNotMet: [
        { subscriber: 'OrderTracking', paths: ['handler-error', 'conflict', 'crash-after-commit'] as const, eventsReached: 3 },
        { subscriber: 'Billing', paths: ['conflict'] as const, eventsReached: 2 },
      ],
    };

    const text = formatSummary(notMet);
    expect(text).not.toMatch(/^OK: /m);
    expect(text).not.toContain('VIOLATED');
    expect(text).toContain(
      'NOT PROVEN: no check failed (every event reached every matching subscriber; every valid event applied by every subscriber its filter took; every dead letter explained), ' +
        "but 2 subscriber(s) never met a failure path the run's fault rates steer to them, so this run does not prove they handle it (not-exercised):\n" +
        '  OrderTracking: never met handler-error, conflict, crash-after-commit (3 event(s) reached it)\n' +
        '  Billing: never met conflict (2 event(s) reached it)\n' +
        `  ${FAILURE_PATHS_NOT_MET_ADVICE}\n`,
    );
    expect(text).toContain('Failure paths this run never took, so this run does not prove them: ');
    expect(runVerdict(notMet)).toBe('NOT PROVEN');
    const json = JSON.parse(JSON.stringify(resultJson(notMet))) as { verdict: string; violations: unknown[]; failurePathsNotMet: unknown[] };
    expect(json.verdict).toBe('NOT PROVEN');
    expect(json.violations).toEqual([]);
    expect(json.failurePathsNotMet).toEqual([
      { subscriber: 'OrderTracking', paths: ['handler-error', 'conflict', 'crash-after-commit'], eventsReached: 3 },
      { subscriber: 'Billing', paths: ['conflict'], eventsReached: 2 },
    ]);

    // with subscribers that received no event, or IAM not proven across accounts, the paths not met are said too
    const both = { ...notMet, notExercised: [{ subscriber: 'Audit', reason: 'the relay gave up on all 2 committed event(s) its filter takes before they reached its topic' }] };
    const bothText = formatSummary(both);
    expect(bothText).toContain('exactly-once was not exercised for 1 subscriber(s) that received no event:\n  Audit: received no event: ');
    expect(bothText).toContain("\nAlso not proven: 2 subscriber(s) never met a failure path the run's fault rates steer to them, so this run does not prove they handle it (not-exercised):\n  OrderTracking: never met ");
    expect(runVerdict(both)).toBe('NOT PROVEN');
    const acrossAccounts = formatSummary({ ...notMet, iam: iamNotEvaluated('engine-missing', ['111111111111', '222222222222']) });
    expect(acrossAccounts).toMatch(new RegExp(`^NOT PROVEN: .*${IAM_NOT_PROVEN_TEXT}`, 'm'));
    expect(acrossAccounts).toContain('\nAlso not proven: 2 subscriber(s) never met ');

    // a violation wins: VIOLATED, and the paths not met are still said, as what the run does not prove
    const violated = { ...notMet, violations: [{ kind: 'lost' as const, subscriber: 'Billing', detail: 'event e-1 lost' }] };
    const violatedText = formatSummary(violated);
    expect(violatedText).toContain('VIOLATED: 1 invariant violation(s):\n  [lost] Billing: event e-1 lost\n');
    expect(violatedText).not.toMatch(/^NOT PROVEN/m);
    expect(violatedText).toContain("\nAlso not proven: 2 subscriber(s) never met a failure path the run's fault rates steer to them, so this run does not prove they handle it (not-exercised):\n  OrderTracking: never met handler-error, conflict, crash-after-commit (3 event(s) reached it)\n");
    expect(runVerdict(violated)).toBe('VIOLATED');
    expect((JSON.parse(JSON.stringify(resultJson(violated))) as { verdict: string }).verdict).toBe('VIOLATED');
  });

  test('the --json verdict is the one the text gives: OK, NOT PROVEN (subscribers not exercised, IAM across accounts), VIOLATED', () => {
    const ok = result([subscriber('Billing', 2)], []);
    expect(runVerdict(ok)).toBe('OK');
    expect((JSON.parse(JSON.stringify(resultJson(ok))) as { verdict: string }).verdict).toBe('OK');
    expect(formatSummary(ok)).toMatch(/^OK: /m);
    const unreached = { ...ok, notExercised: [{ subscriber: 'Billing', reason: 'filtered out' }] };
    expect(runVerdict(unreached)).toBe('NOT PROVEN');
    expect(runVerdict({ ...ok, iam: iamNotEvaluated('off', ['111111111111', '222222222222']) })).toBe('NOT PROVEN');
    expect(runVerdict({ ...unreached, violations: [{ kind: 'lost', detail: 'event e-1 lost' }] })).toBe('VIOLATED');
  });

  test('lists, per type, the committed events no subscription took', () => {
    const text = formatSummary({ ...result([subscriber('A', 2)], []), untakenEvents: [{ type: 'OrderPlaced.v2', eventIds: ['e-2', 'e-4'] }] });
    expect(text).toContain('events no subscription took: 2 of 2 committed (OrderPlaced.v2 2): no filter policy takes them');
    expect(formatSummary(result([subscriber('A', 2)], []))).not.toContain('events no subscription took');
  });

  test('claims exactly-once effects only when every subscriber had a probe', () => {
    const counted = formatSummary(result([subscriber('A', 2, { applied: 2, min: 2, max: 2 })], []));
    expect(counted).toContain('OK: every event reached every matching subscriber; each effect applied exactly once');
  });

  test('says that exactly-once was not checked for subscribers without a probe', () => {
    const none = formatSummary(result([subscriber('A', 2), subscriber('B', 2)], ['A', 'B']));
    expect(none).not.toContain('each effect applied exactly once');
    expect(none).toContain('OK: every event reached every matching subscriber; every valid event applied by every subscriber its filter took; every dead letter explained.');
    expect(none).toContain('Effects were NOT checked for A, B (no effect probe in the scenario): exactly-once is unproven for them.');

    const some = formatSummary(result([subscriber('A', 2, { applied: 2, min: 2, max: 2 }), subscriber('B', 2)], ['B']));
    expect(some).toContain('each counted effect applied exactly once (at most once when dead-lettered)');
    expect(some).toContain('Effects were NOT checked for B (no effect probe in the scenario)');
  });

  test('claims the producer wrote each business change with its events only when its probe checked it', () => {
    const unchecked = formatSummary(result([subscriber('A', 2, { applied: 2, min: 2, max: 2 })], []));
    expect(unchecked).not.toContain('business change');

    const checked = formatSummary({ ...result([subscriber('A', 2, { applied: 2, min: 2, max: 2 })], []), producerWritesChecked: true });
    expect(checked).toContain('OK: every business change of the producer committed with its events; every event reached every matching subscriber;');
  });

  test('shows per subscriber how often it met each failure path, and names the paths it never met', () => {
    const met = { ...subscriber('Billing', 4), failurePaths: { ...NO_FAILURE_PATHS, 'handler-error': 2, 'lost-response': 1, conflict: 1, 'crash-before-commit': 1, 'crash-after-commit': 1, redelivery: 5 } };

    const text = formatSummary(result([met, subscriber('Audit', 2)], []));

    expect(text).toContain(
      'failure paths met (a path a subscriber never met is not proven by this run):\n' +
        '  Billing: handler-error 2, lost-response 1, conflict 1, crash-before-commit 1, crash-after-commit 1, redelivery 5, dead-letter 0 · never met: dead-letter\n' +
        '  Audit: handler-error 0, lost-response 0, conflict 0, crash-before-commit 0, crash-after-commit 0, redelivery 0, dead-letter 0 · never met: handler-error, lost-response, conflict, crash-before-commit, crash-after-commit, redelivery, dead-letter\n',
    );
    expect(text).toContain(`Failure paths this run never took, so this OK does not prove them: Billing (dead-letter); Audit (handler-error, lost-response, conflict, crash-before-commit, crash-after-commit, redelivery, dead-letter). ${DEAD_LETTER_NOT_STEERED_TEXT}`);
  });

  test('an OK names the paths the run could not steer to a subscriber whose queue\'s maxReceiveCount is below the steerable count as not proven, and why, advising no production setting', () => {
    const paths = notSteeredFailurePaths(DEFAULT_FAULT_RATES, 2);
    const billing = { ...subscriber('Billing', 4), failurePaths: { ...NO_FAILURE_PATHS, 'lost-response': 3, conflict: 1 }, failurePathsNotSteered: { maxReceiveCount: 2, paths } };

    const text = formatSummary(result([billing], []));

    const unproven = ['handler-error', 'crash-before-commit', 'crash-after-commit', 'redelivery'].join(', ');
    expect(text).toMatch(/^OK: /m);
    expect(text).toContain(`\n    not steered to Billing, so not proven: ${unproven} (${notSteeredReason(2)})\n`);
    expect(text).toContain(`\nNot steered to Billing, so not proven: ${unproven} (${notSteeredReason(2)}).`);
    expect(notSteeredReason(2)).toContain("its queue's maxReceiveCount is 2, so the run steers no transaction conflict to it (nor a crash)");
    // probed: the words hold whatever became of the probe's event (its own line says that)
    expect(notSteeredReason(2, true)).toContain("but the last-receive probe's (one event, failed at every receive: see its line)");
    expect(notSteeredReason(2, true)).not.toContain('dead-lettered and redriven');
    expect(text).not.toMatch(/maxReceiveCount of \d+ or more/);
    // a subscriber that met every path not steered to it has nothing to say about them
    const metAll = { ...billing, failurePaths: { ...NO_FAILURE_PATHS, 'handler-error': 1, 'lost-response': 3, conflict: 1, 'crash-before-commit': 1, 'crash-after-commit': 1, redelivery: 2 } };
    expect(formatSummary(result([metAll], []))).not.toContain('not steered');
  });

  test('names each aggregate an ordered subscriber is held in: where it stopped, the event it waits for and why', () => {
    const held = [
      { aggregateId: 'acct-2', appliedUpTo: 2, waitsFor: { sequence: 3, eventId: 'acct-2-e2' }, cause: 'dead-lettered' as const },
      { aggregateId: 'acct-9', appliedUpTo: 0, waitsFor: { sequence: 1, eventId: 'acct-9-open' }, cause: 'not applied' as const },
    ];
    const books = { ...subscriber('Books', 20, { applied: 17, min: 17, max: 20 }), orderChecked: { aggregates: 4, events: 17, held } };

    const text = formatSummary(result([books], []));

    expect(text).toContain('  Books: 17 event(s) of 4 aggregate(s) checked; held: acct-2 applied up to 2, sequence 3 (event acct-2-e2) dead-lettered; acct-9 applied up to 0, sequence 1 (event acct-9-open) not applied\n');
  });

  test('shows per ordered subscriber how many events of how many aggregates the order check read, and claims order in the verdict only when there is an ordered subscriber', () => {
    const tracking = { ...subscriber('OrderTracking', 9, { applied: 9, min: 9, max: 9 }), orderChecked: { aggregates: 3, events: 9 } };

    const text = formatSummary(result([subscriber('Billing', 2, { applied: 2, min: 2, max: 2 }), tracking], []));

    expect(text).toContain("order per aggregate (aggregate-order: each aggregate's events applied in sequence, no gap left):\n  OrderTracking: 9 event(s) of 3 aggregate(s) checked\n");
    expect(text).not.toMatch(/^ {2}Billing: \d+ event/m);
    expect(text).toContain("each effect applied exactly once (at most once when dead-lettered); each aggregate's events applied in sequence by the ordered subscriber; every valid event");
    const unordered = formatSummary(result([subscriber('Billing', 2, { applied: 2, min: 2, max: 2 })], []));
    expect(unordered).not.toContain('order per aggregate');
    expect(unordered).not.toContain('in sequence');
  });

  test('says the relay gave up on every event, not that the filter policies matched none, when no event reached a topic', () => {
    const relay = { streamRecords: 2, committedEvents: 2, offloadedEvents: 0, failedAttempts: 22, deadLettered: 2, deadLetterMessages: 2, lost: 0 };

    const text = formatSummary({ ...result([subscriber('A', 0)], ['A']), relay });

    expect(text).toContain('no event reached A: the relay gave up on all 2 committed event(s) before they reached a topic (see the relay line), so no filter policy was tried.');
    expect(text).not.toContain('none matched its filter policy');
  });

  test('lists the new kinds of violation with their detail', () => {
    const violations = [
      { kind: 'producer-failed' as const, detail: '3 of 3 producer command(s) failed all 3 attempt(s) (#0, #1, #2): the invocation threw Error: down' },
      { kind: 'configuration-error' as const, subscriber: 'A', detail: '4 dead letter(s) failed with Runtime.HandlerNotFound, a configuration or deployment error' },
    ];
    const text = formatSummary({ ...result([subscriber('A', 2)], ['A']), violations });
    expect(text).toContain('VIOLATED: 2 invariant violation(s):');
    expect(text).toContain('  [producer-failed] 3 of 3 producer command(s) failed all 3 attempt(s)');
    expect(text).toContain('  [configuration-error] A: 4 dead letter(s) failed with Runtime.HandlerNotFound');
  });

  test('counts the DynamoDB requests refused with a transaction conflict, by operation, after the sns line', () => {
    const none = formatSummary(result([subscriber('A', 2)], ['A']));
    expect(none).toMatch(/\nsns: .*\ndynamodb: 0 request\(s\) refused with a transaction conflict by contention \(two requests meeting on one item\)\n/);

    const some = formatSummary({ ...result([subscriber('A', 2)], ['A']), transactionConflicts: { refused: 5, byOperation: { TransactWriteItems: 3, PutItem: 2 } } });
    expect(some).toContain('dynamodb: 5 request(s) refused with a transaction conflict by contention (two requests meeting on one item) (3 TransactWriteItems, 2 PutItem)\n');
  });

  test("the DynamoDB line tells the genuine conflicts from the injected ones a subscriber's conflict path counts too, so the two agree", () => {
    const injected = { ...subscriber('Ledger', 2), faultsByKind: { 'transaction-conflict': 190 }, failurePaths: { ...NO_FAILURE_PATHS, conflict: 190 } };
    const text = formatSummary(result([injected, subscriber('B', 2)], ['Ledger', 'B']));
    expect(text).toContain(
      "dynamodb: 0 request(s) refused with a transaction conflict by contention (two requests meeting on one item), and 190 by injected faults (fault steering); a subscriber's conflict path below counts both\n",
    );
  });

  test('counts the SQS messages the functions sent with their own clients, per function and queue, with the repeats', () => {
    const none = formatSummary(result([subscriber('A', 2)], ['A']));
    expect(none).not.toContain('sqs:');

    const some = formatSummary({ ...result([subscriber('A', 2)], ['A']), sqsSends: [{ functionName: 'Stack/Seats', queueName: 'notifications', sends: 104, events: 40, repeatedEvents: 38, extraMessages: 64, repeats: [] }] });
    expect(some).toMatch(/\ndynamodb: .*\nsqs: messages the functions sent with their own clients: Stack\/Seats to notifications 104 for 40 event\(s\), 38 event\(s\) sent more than once, 64 extra message\(s\)\n/);
  });

  test("shows the synth's warnings and errors with their construct paths", () => {
    expect(formatSummary(result([subscriber('A', 2)], ['A']))).not.toContain('synth:');

    const text = formatSummary({
      ...result([subscriber('A', 2)], ['A']),
      synthAnnotations: [{ level: 'warning', path: '/Orders/Consumer/Resource', message: "Function timeout is larger than the queue's visibility timeout" }],
    });
    expect(text).toContain("synth: 1 warning(s), 0 error(s) (cdk synth printed them too):\n  [warning] /Orders/Consumer/Resource: Function timeout is larger than the queue's visibility timeout\n");
  });

  test("cuts a long synth warning in its middle: the sentence that says what to do and its acknowledgement stay (new-user trial NU18-8)", () => {
    const message =
      'maxReceiveCount 3 is below 5, the least AWS recommends for a queue a Lambda function reads: a valid message whose 3 receives each meet a transient failure ' +
      '(a throttled request, an invocation that crashed or timed out, which fails its whole batch) is moved to the dead-letter queue. Set maxReceiveCount to 5 or more. ' +
      '[ack: idempotent-event-flow:fewReceives]';
    const text = formatSummary({ ...result([subscriber('A', 2)], ['A']), synthAnnotations: [{ level: 'warning', path: '/App/Receipts/Queue', message }] });

    const line = text.split('\n').find((candidate) => candidate.startsWith('  [warning] /App/Receipts/Queue: '))!;
    expect(line).toMatch(/^  \[warning\] \/App\/Receipts\/Queue: maxReceiveCount 3 is below 5, the least AWS recommends .*… .*Set maxReceiveCount to 5 or more\. \[ack: idempotent-event-flow:fewReceives\]$/);
    expect(line.length).toBeLessThan(`  [warning] /App/Receipts/Queue: ${message}`.length);
  });

  test("lists the unused permissions per role and per who granted them: the library's grant methods and constructs first, the user's last", () => {
    const permission = (action: string, resource: string, grantedBy: string) => ({ policy: 'App/Orders/Billing/Function/Role/DefaultPolicy/Resource', statement: '1', action, resource, grantedBy });
    const iam = {
      evaluated: true as const,
      requests: 10,
      authorized: 10,
      denied: 0,
      notEvaluated: 0,
      rolesEvaluated: 1,
      denials: [],
      notEvaluatedReasons: [],
      unusedPermissions: {
        'App/Orders/Billing/Function/Role': [
          permission('dynamodb:GetItem', 'App/Orders/OutboxTable', 'you'),
          permission('kms:Encrypt', 'App/Orders/EventTopic/Key', "idempotent-event-flow's Subscriber"),
          permission('dynamodb:BatchGetItem', 'App/Orders/Billing/InboxTable', "idempotent-event-flow's grantRecordMessages"),
          permission('dynamodb:GetItem', 'App/LedgerTable', 'you'),
        ],
      },
    };

    const text = formatSummary({ ...result([subscriber('A', 2)], ['A']), iam });

    expect(text).toContain(
      "  unused by App/Orders/Billing/Function/Role, granted by idempotent-event-flow's Subscriber: kms:Encrypt on App/Orders/EventTopic/Key\n" +
        "  unused by App/Orders/Billing/Function/Role, granted by idempotent-event-flow's grantRecordMessages: dynamodb:BatchGetItem on App/Orders/Billing/InboxTable\n" +
        '  unused by App/Orders/Billing/Function/Role, granted by you: dynamodb:GetItem on App/Orders/OutboxTable, dynamodb:GetItem on App/LedgerTable\n',
    );
    expect(text).toMatch(/idempotent-event-flow's grants are marked by their Sid/);
  });

  test("counts the committed events whose data was offloaded to the flow's payload bucket (claim-check), and says nothing of it when none was", () => {
    const run = result([subscriber('A', 5)], []);
    const offloaded = formatSummary({ ...run, relay: { ...run.relay, committedEvents: 5, streamRecords: 5, offloadedEvents: 3 } });
    expect(offloaded).toContain('relay: 5 events committed to the outbox (3 of them offloaded: their data in the payload bucket, the event carrying its reference), 5 stream records read,');
    expect(formatSummary(run)).toContain('relay: 2 events committed to the outbox, 2 stream records read,');
  });

  test('points at subscribers that no event reached', () => {
    const text = formatSummary(result([subscriber('A1', 2), subscriber('B1', 0)], []));
    expect(text).toMatch(/no event reached B1: none matched its filter policy, or its topic is fed by another outbox/);
  });

  test('says when the run depended on real time: not replayable, how often, in which functions, the first change; the verdict kept', () => {
    const first = [
      { environment: 'Billing/Handler#2', turn: 12, change: 'virtual timers pending 2 → 1 (the earliest due 3000 → 4000 ms into its invocation)' },
      { environment: 'Billing/Handler#1', turn: 30, change: 'HTTP calls started 3 → 4' },
      { environment: 'Stats/Handler#1', turn: 41, change: 'virtual timers pending 1 → 0 (none left of the earliest, due 3000 ms into its invocation)' },
    ];
    const text = formatSummary({ ...result([subscriber('Billing', 2, { applied: 2, min: 2, max: 2 })], []), replayable: false, realTimeEvents: { count: 5, first } });
    expect(text).toContain(
      `${NOT_REPLAYABLE}: something outside the seed acted on a worker between two steps, 5 time(s) (Billing/Handler 2, Stats/Handler 1 of the first 3); ` +
        'first at turn 12, Billing/Handler#2: virtual timers pending 2 → 1 (the earliest due 3000 → 4000 ms into its invocation).',
    );
    expect(text).toMatch(/^OK: /m);
    expect(formatSummary(result([subscriber('Billing', 2, { applied: 2, min: 2, max: 2 })], []))).not.toContain(NOT_REPLAYABLE);
  });

  test("a relay's catch-up limit met makes the run not replayable: replayable false with its cause in --json, and the NOT REPLAYABLE line names the relay, not the workers", () => {
    const relay = { ...result([], []).relay, catchUpLimitMet: 2 };
    expect(replayability({ count: 0, first: [] }, relay)).toEqual({ replayable: false, notReplayableCauses: ['relay-catch-up-limit'] });
    expect(replayability({ count: 0, first: [] }, result([], []).relay)).toEqual({ replayable: true });
    const met = { ...result([subscriber('Billing', 2, { applied: 2, min: 2, max: 2 })], []), relay, ...replayability({ count: 0, first: [] }, relay) };
    const text = formatSummary(met);
    expect(text).toContain(`${NOT_REPLAYABLE}: a relay stopped waiting for its stream to catch up with its table 2 time(s) (see the relay line)`);
    expect(text).not.toContain('something outside the seed acted on a worker');
    expect(text).toMatch(/^OK: /m);
    const json = JSON.parse(JSON.stringify(resultJson(met))) as { replayable: boolean; notReplayableCauses?: string[]; relay: { catchUpLimitMet?: number } };
    expect(json).toMatchObject({ replayable: false, notReplayableCauses: ['relay-catch-up-limit'], relay: { catchUpLimitMet: 2 } });

    // both causes: one line naming each
    const realTime = { count: 1, first: [{ environment: 'Billing/Handler#1', turn: 3, change: 'HTTP calls started 0 → 1' }] };
    const both = { ...met, realTimeEvents: realTime, ...replayability(realTime, relay) };
    expect(both.notReplayableCauses).toEqual(['real-time-events', 'relay-catch-up-limit']);
    const line = formatSummary(both).split('\n').find((candidate) => candidate.startsWith(NOT_REPLAYABLE));
    expect(line).toMatch(/^NOT REPLAYABLE: something outside the seed acted on a worker between two steps, 1 time\(s\) .*; and a relay stopped waiting for its stream to catch up with its table 2 time\(s\)/);
    expect(replayability(realTime, result([], []).relay)).toEqual({ replayable: false, notReplayableCauses: ['real-time-events'] });
  });

  test("a failing run's replay line says when the run was not replayable", () => {
    const command = 'npx idempotent-event-flow simulate --seed 7 --concurrency 4';
    expect(replayLines(command, true)).toBe(`replay this run: ${command}\n`);
    expect(replayLines(command, false)).toBe(`replay this run: ${command}\n  (it may give another run: ${NOT_REPLAYABLE}, see above)\n`);
  });
});

describe('the last-receive probe in the report', () => {
  const probe = { subscriber: 'Audit', eventId: 'event-6', lastReceive: 5, redriven: 0, refused: [] as string[] };

  test('each outcome says what became of the event, and blames the consumer only when its message was deleted', () => {
    expect(probeOutcomeText({ subscriber: 'Audit', state: 'not-chosen', redriven: 0, refused: [] })).toContain("no event chosen (none was written at its first receive whose own time dlq redrive's window rule would take");
    expect(probeOutcomeText({ ...probe, state: 'redriven', redriven: 1 })).toBe('Audit: event event-6 dead-lettered and redriven (dead-letter path met)');
    expect(probeOutcomeText({ ...probe, state: 'acknowledged' })).toContain('Audit: event event-6 was NOT dead-lettered: its consumer acknowledged it though the run failed its record at every receive (the last seen: receive 5)');
    // acknowledged by its answer, then dead-lettered all the same (a lost delete): the line does not say it was not
    const answered = probeOutcomeText({ ...probe, state: 'acknowledged', redriven: 1, acknowledgedAt: { messageId: 'm-6', receiveCount: 5 } });
    expect(answered).toContain('Audit: event event-6 was acknowledged by its consumer at receive 5 (message m-6 left out of batchItemFailures) though the run failed its record at every receive');
    expect(answered).not.toContain('NOT dead-lettered');
    // dropped by SQS's retention: the run's doing, the consumer not blamed
    const expired = probeOutcomeText({ ...probe, state: 'expired', expired: { queue: 'AuditDlq', retentionSeconds: 960, at: '2026-11-29T00:16:00.000Z' } });
    expect(expired).toContain('SQS dropped it by retention (AuditDlq, retention 960 s, at 2026-11-29T00:16:00.000Z)');
    expect(expired).not.toContain('acknowledged');
    const cut = probeOutcomeText({ ...probe, state: 'cut-off' });
    expect(cut).toContain('the run was cut off before it settled');
    expect(cut).not.toContain('acknowledged');
    const onQueue = probeOutcomeText({ ...probe, state: 'on-queue' });
    expect(onQueue).toContain('still on its queue');
    expect(onQueue).not.toContain('acknowledged');
    expect(probeOutcomeText({ ...probe, state: 'refused', refused: ['event-6: its event is 27 days old'] })).toBe(
      "Audit: event event-6 left in the dead-letter queue: dlq redrive refuses it: its event is 27 days old (the run's own dead letter: not counted as unapplied)",
    );
  });

  test('a queue of maxReceiveCount 2 the probe steered a conflict to is not told it got none', () => {
    const paths = notSteeredFailurePaths(DEFAULT_FAULT_RATES, 2);
    const billing = { ...subscriber('Billing', 4), failurePaths: { ...NO_FAILURE_PATHS, conflict: 1 }, failurePathsNotSteered: { maxReceiveCount: 2, paths, probed: true } };

    const text = formatSummary(result([billing], []));

    expect(text).toContain(notSteeredReason(2, true));
    expect(notSteeredReason(2, true)).toContain("steers no transaction conflict to it but the last-receive probe's");
    expect(text).not.toContain('steers no transaction conflict to it (');
  });
});
