/**
 * `simulate` on an app the construct refuses at synth (test/simulator/fixtures/synth-refused): the verdict is the
 * documented `synth-error` violation, exit code 1 as any violated run, the construct's message said without the synth's
 * stack trace, and `--json` written with that violation, so that a CI step reads why nothing ran.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';

const PROJECT = path.resolve(__dirname, '../..');
const APP = 'npx tsx test/simulator/fixtures/synth-refused/app.ts';
/** The construct's own message for the fixture's subscriber (lib/consumer/private/validate-subscriber-props.ts). */
const REFUSAL =
  "«IdempotentEventFlowValidation» Subscriber 'Receipts': deduplicationWindow must be at least subscriptionDeadLetterRetentionPeriod + retentionPeriod + deadLetterRetentionPeriod (7 days + 4 days + 14 days = 25 days), but 1 day was provided";

describe('simulate: an app the construct refuses at synth', () => {
  test('says the construct\'s message as a synth-error violation (no stack trace), writes --json with it and the verdict VIOLATED, and exits 1', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-synth-refused-'));
    const json = path.join(directory, 'result.json');
    const events = path.join(directory, 'events.json');
    writeFileSync(events, JSON.stringify([{ type: 'OrderPlaced', data: { orderId: 'order-1' } }]));
    let stdout = '';
    let stderr = '';
    const code = await main(
      ['simulate', '--app', APP, '--events', events, '--seed', '7', '--quiet', '--json', json, '--endpoint', inject('dynamoDbEndpoint')],
      { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT },
    );

    expect(code).toBe(EXIT_CODE.FAILURE);
    const output = stdout + stderr;
    expect(stdout).toContain(`VIOLATED: 1 invariant violation(s):\n  [synth-error] cdk synth refused the app (exit code 1): ${REFUSAL}\n`);
    // none of the synth's stack: no frame, no node internals, no error class
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('triggerUncaughtException');
    expect(output).not.toContain('SynthesisError');
    expect(existsSync(json)).toBe(true);
    const written = JSON.parse(readFileSync(json, 'utf8')) as { verdict: unknown; violations: unknown; seed: unknown; replayCommand: unknown };
    // the run's verdict, as every run's --json gives it (a CI step gates on it)
    expect(written.verdict).toBe('VIOLATED');
    expect(written.violations).toEqual([{ kind: 'synth-error', detail: `cdk synth refused the app (exit code 1): ${REFUSAL}` }]);
    expect(written.seed).toBe('7');
    expect(written.replayCommand).toEqual(expect.stringContaining('simulate --app'));
  });
});
