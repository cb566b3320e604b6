/**
 * Review r8 (issue 43, verify): two deployed subscribers with the same subscriberName. The constructs allow it when
 * they keep different inbox tables (claimSubscriberName refuses a name only per inbox table), e.g. an 'Audit'
 * subscriber on each of two flows. Verify keys what it read by the subscriber's name (the rules' ledger, the probes,
 * the dead-letter report), so the second subscriber's reading replaces the first's. Failed on s8-rv8 (27b8873) when
 * committed. Pure: checkVerifiedRun is handed what runVerify read (no AWS service touched here).
 */
import { describe, expect, test } from 'vitest';
import type { DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { checkVerifiedRun, type VerifiedSubscriber } from '../../../simulator/verify/verify-checks';
import { runEvent } from './verify-test-kit';

function audit(flow: string): DeployedSubscriber {
  return {
    name: 'Audit',
    stackName: 'App',
    environment: {},
    deployment: {
      format: 1,
      subscriberName: 'Audit',
      processingMode: 'transactional',
      queueUrl: `https://sqs.us-east-1.amazonaws.com/111111111111/${flow}-Audit`,
      deadLetterQueueUrl: `https://sqs.us-east-1.amazonaws.com/111111111111/${flow}-AuditDlq`,
      inboxTable: `${flow}-AuditInbox`,
    },
  };
}

describe('review r8: verify with two subscribers of one name', () => {
  test("R8-4: an event the first 'Audit' subscriber never applied is a violation, though the second 'Audit' (another flow, another inbox) applied all of its own", () => {
    // GIVEN the run's two events: orders-1 taken by the Audit of flow Orders, which never applied it (no inbox record,
    // not dead-lettered, its queue empty), and payments-1 taken by the Audit of flow Payments, which applied it
    const lostOne = runEvent('vrun-orders-1');
    const appliedOne = runEvent('vrun-payments-1');
    const eventsById = new Map([lostOne, appliedOne].map((item) => [item.event.id, item.event]));
    const verified: VerifiedSubscriber[] = [
      { subscriber: audit('Orders'), taken: new Set(['vrun-orders-1']), deadLetters: [], onQueue: 0, applied: new Set() },
      { subscriber: audit('Payments'), taken: new Set(['vrun-payments-1']), deadLetters: [], onQueue: 0, applied: new Set(['vrun-payments-1']) },
    ];

    // WHEN verify's checks run over what it read
    const violations = checkVerifiedRun(verified, eventsById, () => false);

    // THEN orders-1 is lost; instead the ledger (keyed by name) holds only Payments' Audit, so both subscribers are
    // checked against payments-1, applied, and the verdict is OK
    expect(violations.filter((violation) => violation.kind === 'lost').map((violation) => violation.detail)).toEqual([expect.stringContaining('vrun-orders-1')]);
  });
});
