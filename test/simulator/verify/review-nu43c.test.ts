/**
 * What the new-user trial nu43c (session 13) found in `verify` (/work/runs/s13/nu43c.md): each test names what verify
 * said wrongly, or did not say, and what it says now. Pure: the checks over what verify read, its texts, no AWS.
 */
import { describe, expect, test } from 'vitest';
import { untakenEventsRule } from '../../../simulator/check/rules/untaken-events';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';
import type { DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { checkVerifiedRun, VERIFY_RULES } from '../../../simulator/verify/verify-checks';
import { deadLettersNotRemovedLine, LATER_RUN_CLEANS_ITS_OWN } from '../../../simulator/verify/cleanup';
import { notQuietCleanupSkippedReason } from '../../../simulator/verify/verify-run';
import { verifyCommand } from '../../../simulator/cli/verify-command';
import { verifyResult } from './verify-result-kit';

function subscriberOf(name: string): DeployedSubscriber {
  return {
    name,
    stackName: 'App',
    environment: {},
    deployment: { format: 1, subscriberName: name, processingMode: 'transactional', deduplicationWindowSeconds: 86400, inboxTable: `${name}Inbox`, outboxTable: 'Outbox', queueUrl: `http://127.0.0.1/111111111111/${name}`, deadLetterQueueUrl: `http://127.0.0.1/111111111111/${name}-dlq` },
  };
}

const event = (id: string, type: string): SimulatedEvent => ({ specversion: '1.0', id, type, source: 'test', data: {} }) as unknown as SimulatedEvent;
const placed = ['order-placed-v0-01020304-order-1', 'order-placed-v0-01020304-order-2'];
const runEvents = new Map([...placed.map((id) => [id, event(id, 'OrderPlaced')] as const), ['order-noted-v0-01020304-order-1', event('order-noted-v0-01020304-order-1', 'OrderNoted')]]);

describe("NU43C-1: verify applies the scenario's expectConsumed (simulate's untaken-event rule)", () => {
  test('verify runs the untaken-event rule', () => {
    expect(VERIFY_RULES).toContain(untakenEventsRule.name);
  });

  test('a filter that takes no OrderPlaced, which the scenario expects consumed: VIOLATED untaken-event, not NOT PROVEN', () => {
    const violations = checkVerifiedRun([{ subscriber: subscriberOf('Billing'), taken: new Set(), deadLetters: [], onQueue: 0, applied: new Set() }], runEvents, () => false, { expectConsumed: ['OrderPlaced'], publishedOutside: ['OrderNoted'] });
    expect(violations.map((violation) => violation.kind)).toEqual(['untaken-event']);
    expect(violations[0]!.detail).toContain(`2 committed OrderPlaced event(s)`);
    expect(violations[0]!.detail).toContain(placed[0]);
    expect(violations[0]!.detail).toContain('expectConsumed');
    expect(verifyVerdict(verifyResult({ violations })).status).toBe('VIOLATED');
  });

  test('types the scenario publishes for consumers outside the app, and events some filter took, are no violation; a type it names nowhere is one', () => {
    const taken = new Set(placed);
    expect(checkVerifiedRun([{ subscriber: subscriberOf('Billing'), taken, deadLetters: [], onQueue: 0, applied: taken }], runEvents, () => false, { expectConsumed: ['OrderPlaced'], publishedOutside: ['OrderNoted'] })).toEqual([]);
    const unnamed = checkVerifiedRun([{ subscriber: subscriberOf('Billing'), taken, deadLetters: [], onQueue: 0, applied: taken }], runEvents, () => false, { expectConsumed: ['OrderPlaced'] });
    expect(unnamed.map((violation) => violation.detail.split(' reached')[0])).toEqual(['1 committed OrderNoted event(s)']);
    expect(checkVerifiedRun([{ subscriber: subscriberOf('Billing'), taken: new Set(), deadLetters: [], onQueue: 0, applied: new Set() }], runEvents, () => false)).toEqual([]);
  });

  test('events taken by a subscriber left out of the checks (its dead letters unread) are taken, not untaken', () => {
    const violations = checkVerifiedRun([], runEvents, () => false, { expectConsumed: ['OrderPlaced'], publishedOutside: ['OrderNoted'], takenElsewhere: new Set(placed) });
    expect(violations).toEqual([]);
  });
});

describe('NU43C-2: the cleanup advice says what works (a later verify --cleanup cleans up only its own run)', () => {
  test('not quiet: it names the run id to remove by hand and does not send the user to verify --cleanup again', () => {
    const reason = notQuietCleanupSkippedReason('v0-01020304');
    expect(reason).not.toContain('verify --cleanup again');
    expect(reason).toContain('the run id v0-01020304');
    expect(reason).toContain(LATER_RUN_CLEANS_ITS_OWN);
  });

  test('dead letters not visible yet: the same', () => {
    const line = deadLettersNotRemovedLine('https://sqs/Billing-dlq', 2, 'a receive hid them', 'v0-01020304');
    expect(line).not.toContain('verify --cleanup again');
    expect(line).toMatch(/^nothing more from https:\/\/sqs\/Billing-dlq: a receive hid them;.*the run id v0-01020304/);
    expect(line).toContain(LATER_RUN_CLEANS_ITS_OWN);
  });
});

describe('NU43C-3: verify --help lists every option verify reads, --region among them', () => {
  test('its Options list names --region (the common option that sets the Region its clients use)', () => {
    const options = verifyCommand.usage.slice(verifyCommand.usage.indexOf('Options:'));
    expect(options).toMatch(/^ {2}--region <region> /m);
    for (const name of Object.keys(verifyCommand.options)) expect(options).toMatch(new RegExp(`^ {2}--${name}\\b`, 'm'));
  });
});
