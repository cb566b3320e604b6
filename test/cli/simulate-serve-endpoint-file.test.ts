/**
 * Trial nu12, item 5: `simulate --serve` printed its endpoint (a random port) only in its human banner, so a CI job
 * that starts the serve in the background had to grep it. The serve writes the lines to export into a file while it
 * serves (0600: they hold its local credentials), names the file in its banner, and removes it when it stops.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { serveRun } from '../../simulator/cli/simulate-serve';
import type { RunServices } from '../../simulator/run/run-services';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-serve-endpoint-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function services(): RunServices {
  return {
    dynamoDbEndpoint: 'http://127.0.0.1:8000',
    sqsEndpoint: 'http://127.0.0.1:9324',
    region: 'eu-west-1',
    relays: [],
    subscribers: [],
    watchesApp: false,
    now: () => 0,
    runClockWithRealTime: () => undefined,
    startAwsEndpoint: async () => 'http://127.0.0.1:4566',
    startConsuming: () => undefined,
    stop: async () => undefined,
  } as unknown as RunServices;
}

describe('simulate --serve, its endpoint in a file', () => {
  test('while it serves the file holds the export lines, the banner names it, and it is removed at the stop', async () => {
    const envFile = path.join(directory, 'simulate-serve.env');
    const stopping = new AbortController();
    let stdout = '';
    let serving: () => void = () => undefined;
    const banner = new Promise<void>((resolve) => (serving = resolve));
    const served = serveRun(services(), { stdout: (text) => ((stdout += text), text.includes('AWS_ENDPOINT_URL') ? serving() : undefined), stderr: () => undefined, stopSignal: stopping.signal }, envFile);

    await banner;
    const lines = readFileSync(envFile, 'utf8');
    expect(lines).toContain('export AWS_ENDPOINT_URL=http://127.0.0.1:4566 AWS_REGION=eu-west-1\n');
    expect(lines).toMatch(/^export AWS_ACCESS_KEY_ID=\S+ AWS_SECRET_ACCESS_KEY=\S+/m);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(stdout).toContain(`endpoint file   ${envFile}`);

    stopping.abort();
    await served;
    expect(existsSync(envFile)).toBe(false);
  });
});
