/**
 * `replay --flow-profile` naming a profile the AWS config does not have fails naming the profile: the SDK's own error
 * says only that no provider loaded credentials (mutant replay-flow-profile-unnamed). The client's credentials are
 * resolved before any request leaves, so no endpoint answers: the AWS config and credentials files are empty ones of
 * the test, and the instance metadata service is off (no remote provider is tried).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { flowAccountClient, nameMissingOutbox } from '../../operator/cli/flow-account-client';
import { unloadableProfileMessage } from '../../operator/cli/flow-identity';

const PROFILE = 'no-such-outbox-profile';
let directory: string;

beforeEach(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-flow-profile-'));
  writeFileSync(path.join(directory, 'config'), '[profile someone-else]\nregion = eu-west-1\n');
  writeFileSync(path.join(directory, 'credentials'), '');
  vi.stubEnv('AWS_CONFIG_FILE', path.join(directory, 'config'));
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', path.join(directory, 'credentials'));
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  for (const name of ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_WEB_IDENTITY_TOKEN_FILE']) {
    vi.stubEnv(name, undefined);
  }
});

afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(directory, { recursive: true, force: true });
});

describe('--flow-profile naming a profile the AWS config lacks', () => {
  test("a read of the outbox fails naming the profile, with the SDK's reason", async () => {
    const client = flowAccountClient({ endpoint: 'http://127.0.0.1:9' }, PROFILE, 'eu-west-1');
    nameMissingOutbox(client, 'flow-outbox', PROFILE);
    const failure = await client.send(new DescribeTableCommand({ TableName: 'flow-outbox' })).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    client.destroy();
    expect(failure).toBeInstanceOf(Error);
    // the shared message up to where the SDK's reason goes
    const named = unloadableProfileMessage(PROFILE, new Error('\0')).split('\0')[0];
    expect(failure!.message).toContain(`--flow-profile ${PROFILE}`);
    expect(failure!.message.startsWith(named)).toBe(true);
  });
});
