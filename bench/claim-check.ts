/**
 * What the claim-check (issue 42, docs/LARGE-EVENTS.md) adds to an offloaded event, beside an inline one: S3 requests
 * and bytes per event (counted at the simulator's S3 endpoint), and the time of the producer's conditional PutObject
 * (`offloadIfLarge`) and of the consumer's read and verification (`resolvePayload`: GetObject, size, SHA-256, JSON
 * parse), per data size. An inline event makes no S3 request, so its added time is the envelope size check alone. The
 * S3 is s3rver behind the simulator's S3 endpoint on 127.0.0.1: no network round trip, so the times are the local work
 * (hashing, copying, s3rver's disk); on AWS add one S3 round trip per PUT and per GET. DynamoDB is not involved: the
 * envelope the transaction writes is under 1 KiB either way.
 *
 *   npx tsx bench/claim-check.ts [--events N] [--sizes 1024,1048576,6291456]
 *
 * Results (Markdown) go to standard output, progress to standard error. Times vary with the machine and its load;
 * request and byte counts depend only on the arguments. Exits 1 if an event does not come back whole.
 */
import { createHash, randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { S3Client } from '@aws-sdk/client-s3';
import { S3PayloadStore } from '../lambda/claim-check/payload-store';
import { isOffloaded, resolvePayload } from '../lambda/claim-check/resolve-payload';
import { offloadIfLarge } from '../lambda/claim-check/offload';
import type { EventEnvelope } from '../lambda/envelope';
import { startS3Endpoint } from '../simulator/aws/s3-endpoint';
import { startLocalS3 } from '../simulator/aws/s3-local';

const BUCKET = 'bench-payloads';
const INLINE_LIMIT = 262_144;

function flag(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] !== undefined ? process.argv[index + 1]! : fallback;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function main(): Promise<void> {
  const events = Number(flag('events', '20'));
  const sizes = flag('sizes', '1024,1048576,6291456').split(',').map(Number);
  const local = await startLocalS3([BUCKET]);
  const requests: Record<string, number> = {};
  const endpoint = await startS3Endpoint({
    backend: local.endpoint,
    authorize: async ({ operation }) => {
      requests[operation] = (requests[operation] ?? 0) + 1;
      return undefined;
    },
  });
  const store = new S3PayloadStore(new S3Client({ endpoint: endpoint.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'BENCH', secretAccessKey: 'BENCH' } }));
  const claimCheck = { config: { bucketName: BUCKET, keyPrefix: 'event-data/' }, store };
  const rows: string[] = [];
  let failed = false;
  try {
    for (const size of sizes) {
      const put: number[] = [];
      const get: number[] = [];
      let envelopeBytes = 0;
      let offloaded = false;
      const before = { ...requests };
      for (let index = 0; index < events; index++) {
        const data = { orderId: `order-${index}`, attachment: 'x'.repeat(size) };
        const envelope: EventEnvelope = { specversion: '1.0', id: randomUUID(), source: 'bench', type: 'OrderPlaced', time: new Date(0).toISOString(), datacontenttype: 'application/json', data };
        const t0 = performance.now();
        const sent = await offloadIfLarge(envelope, claimCheck, INLINE_LIMIT);
        const t1 = performance.now();
        put.push(t1 - t0);
        envelopeBytes = Buffer.byteLength(JSON.stringify(JSON.stringify(sent)));
        offloaded = isOffloaded(sent);
        if (offloaded) {
          const t2 = performance.now();
          const resolved = await resolvePayload(sent, store, claimCheck.config);
          get.push(performance.now() - t2);
          const same = createHash('sha256').update(resolved.dataJson).digest('hex') === createHash('sha256').update(JSON.stringify(data)).digest('hex');
          if (!same) failed = true;
        } else get.push(0);
      }
      const count = (operation: string) => ((requests[operation] ?? 0) - (before[operation] ?? 0)) / events;
      rows.push(
        `| ${size.toLocaleString('en-US')} | ${offloaded ? 'offloaded' : 'inline'} | ${envelopeBytes.toLocaleString('en-US')} | ${count('PutObject')} | ${count('GetObject')} | ${percentile(put, 50).toFixed(2)} / ${percentile(put, 95).toFixed(2)} | ${percentile(get, 50).toFixed(2)} / ${percentile(get, 95).toFixed(2)} |`,
      );
      process.stderr.write(`size ${size}: done\n`);
    }
  } finally {
    await endpoint.stop();
    await local.stop();
  }
  process.stdout.write(
    [
      `Claim-check cost per event, ${events} events per size, S3 = s3rver behind the simulator's S3 endpoint on 127.0.0.1 (${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}):`,
      '',
      '| attachment bytes | travels | envelope as delivered (bytes) | PutObject per event | GetObject per event (one subscriber) | producer added ms p50 / p95 | consumer added ms p50 / p95 |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 2;
});
