/**
 * A reader of the payload bucket in another Region than its flow (a subscriber of another Region, issue 41 with issue
 * 42) gets `IEF_PAYLOAD_BUCKET_REGION`: `S3PayloadStore.fromEnvironment` sends its requests to the bucket's Region,
 * not the function's own (`AWS_REGION`), since S3 answers a bucket of another Region with a redirect the SDK does not
 * follow. Without the variable the client keeps the environment's Region; a Region given in `config` wins.
 */
import { describe, expect, test } from 'vitest';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';

async function regionOf(store: S3PayloadStore): Promise<string> {
  const client = (store as unknown as { client: { config: { region: () => Promise<string> } } }).client;
  return client.config.region();
}

describe('S3PayloadStore.fromEnvironment and the bucket Region', () => {
  test('IEF_PAYLOAD_BUCKET_REGION sets the client Region', async () => {
    expect(await regionOf(S3PayloadStore.fromEnvironment({}, { IEF_PAYLOAD_BUCKET_REGION: 'eu-west-1', AWS_REGION: 'eu-central-1' }))).toBe('eu-west-1');
  });

  test('without it, the Region comes from the environment (here, config); a Region in config wins over the variable', async () => {
    expect(await regionOf(S3PayloadStore.fromEnvironment({ region: 'ap-south-1' }, {}))).toBe('ap-south-1');
    expect(await regionOf(S3PayloadStore.fromEnvironment({ region: 'ap-south-1' }, { IEF_PAYLOAD_BUCKET_REGION: 'eu-west-1' }))).toBe('ap-south-1');
  });
});
