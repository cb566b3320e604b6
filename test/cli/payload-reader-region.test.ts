/**
 * `dlq show --fetch` reads an offloaded event's data from the flow's payload bucket, which is in the flow's Region
 * (review rx14, RX14-4). The operator's `--region` is the subscriber's (its queues and inbox), and for a subscriber in
 * another Region than its flow, S3 answers a request signed for the wrong Region with `301 PermanentRedirect` and the
 * bucket's Region in `x-amz-bucket-region`, which the AWS SDK does not follow unless asked. Against a local HTTP server
 * that answers as S3 does: a GetObject signed for another Region than the bucket's is redirected.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';
import { payloadS3Client } from '../../operator/cli/payload-client';

const BUCKET_REGION = 'eu-west-1';
const DATA = '{"document":"large"}';

let server: Server;
let endpoint: string;
const signedFor: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const region = /Credential=[^/]+\/\d{8}\/([^/]+)\/s3\//.exec(request.headers.authorization ?? '')?.[1] ?? 'none';
    signedFor.push(region);
    if (region !== BUCKET_REGION) {
      response.writeHead(301, { 'content-type': 'application/xml', 'x-amz-bucket-region': BUCKET_REGION });
      response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message><Bucket>payloads</Bucket></Error>`);
      return;
    }
    if (request.url?.startsWith('/payloads/event-data/key') !== true) {
      response.writeHead(404, { 'content-type': 'application/xml' });
      response.end('<Error><Code>NoSuchKey</Code></Error>');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(Buffer.byteLength(DATA)) });
    response.end(DATA);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("dlq show --fetch reads the payload bucket in its own Region (RX14-4)", () => {
  test("a reader of the operator's Region (the subscriber's) reads an object of a bucket in the flow's Region", async () => {
    const client = payloadS3Client('us-east-1', { endpoint, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const read = await new S3PayloadStore(client).get('payloads', 'event-data/key');

      expect(Buffer.from(read!).toString('utf8')).toBe(DATA);
      // the first request was signed for the operator's Region and redirected; the read for the bucket's
      expect(signedFor).toEqual(['us-east-1', BUCKET_REGION]);
    } finally {
      client.destroy();
    }
  });
});
