/**
 * Events of any size through a whole simulated run (issue 42): `--events` of 1 MiB and 6 MiB through a flow with
 * `offloadLargeEvents` (test/simulator/fixtures/large-events), with the default faults (S3's included: failed and slow
 * requests, a lost PutObject response) and with IAM evaluated. Each event is offloaded to the run's S3 (s3rver behind
 * the run's S3 endpoint), fetched and verified by the runtime, and handed whole to both subscribers (each checks the
 * attachment's size and SHA-256 against what its sender computed, and dead-letters a mismatch, which would fail the run).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { synthesizedFixture } from './fixture-run-kit';

const FIXTURE = 'test/simulator/fixtures/large-events';
const MiB = 1024 * 1024;

const fixture = synthesizedFixture(FIXTURE);
const cli = fixture.simulate;

/** An order whose attachment is `bytes` long (ASCII), with the size and digest its sender computed. */
function order(orderId: string, bytes: number) {
  const attachment = orderId.slice(-1).repeat(bytes);
  return { type: 'com.example.OrderPlaced', subject: orderId, data: { orderId, attachment, attachmentBytes: bytes, attachmentSha256: createHash('sha256').update(attachment).digest('hex') } };
}

/** The `events` column of a subscriber's row in the report's table. */
function eventsOf(stdout: string, subscriber: string): number {
  const row = stdout.split('\n').find((line) => line.startsWith(`${subscriber} `));
  return Number(row?.trim().split(/\s+/)[2]);
}

describe('events of 1 MiB and 6 MiB through a flow with offloadLargeEvents', () => {
  test('with the default faults, every subscriber applies each exactly once: OK', async () => {
    const file = path.join(fixture.directory(), 'large.json');
    writeFileSync(file, JSON.stringify([order('order-1', MiB), order('order-6', 6 * MiB), order('order-s', 100)]));

    const json = path.join(fixture.directory(), 'large-result.json');
    const { code, stdout } = await cli('--events', file, '--seed', 'large-events', '--json', json);

    expect(stdout).toMatch(/producer: 3\/3 succeeded/);
    // the two large events went to the payload bucket, the small one inline: the summary and --json count them
    expect(stdout).toMatch(/^relay: 3 events committed to the outbox \(2 of them offloaded: /m);
    expect((JSON.parse(readFileSync(json, 'utf8')) as { relay: { committedEvents: number; offloadedEvents: number } }).relay).toMatchObject({ committedEvents: 3, offloadedEvents: 2 });
    expect(eventsOf(stdout, 'Billing')).toBe(3);
    expect(eventsOf(stdout, 'Archive')).toBe(3);
    expect(stdout).not.toMatch(/valid-event-rejected|unapplied-event|producer-failed/);
    expect(stdout).toMatch(/^OK/m);
    expect(code).toBe(EXIT_CODE.OK);
  });
});
