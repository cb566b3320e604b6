/**
 * What an S3 request of @aws-sdk/client-s3 v3 is, as the simulator's S3 endpoint reads it: path-style addressing (the
 * SDK uses it when its endpoint is an IP address, as the endpoint's `http://127.0.0.1:<port>` is), after an optional
 * sender path (`/sender/<n>`, see ./sqs-senders.ts); the object operation from the method; and the body of an
 * `aws-chunked` upload (the SDK's streaming uploads with a trailing checksum) decoded to the object's bytes, which the
 * local S3 behind the endpoint does not decode itself.
 */
import { SENDER_PATH_PREFIX } from './sqs-senders';

/** The object operations the endpoint emulates. */
export type S3ObjectOperation = 'PutObject' | 'GetObject' | 'HeadObject' | 'DeleteObject';

/** A request as the endpoint sees it. */
export interface S3RequestTarget {
  /** `/sender/<n>` when the request came through an environment's endpoint. @default none: an unattributed caller (an operator) */
  readonly senderPath?: string;
  readonly bucket: string;
  /** The object key, decoded. @default none: a bucket-level request */
  readonly key?: string;
  /** The path and query the local S3 is sent, without the sender path. */
  readonly upstreamPath: string;
  /** The query's parameter names other than the SDK's `x-id` (a sub-resource: `?tagging`, `?uploads`, ...). */
  readonly subresources: readonly string[];
}

/** The request's bucket, key and sender, from its path; undefined when the path names no bucket. */
export function s3RequestTarget(url: string): S3RequestTarget | undefined {
  const parsed = new URL(url, 'http://localhost');
  let path = parsed.pathname;
  let senderPath: string | undefined;
  const sender = new RegExp(`^${SENDER_PATH_PREFIX}(\\d+)(?=/)`).exec(path);
  if (sender !== null) {
    senderPath = sender[0];
    path = path.slice(sender[0].length);
  }
  const match = /^\/([^/]+)(?:\/(.*))?$/.exec(path);
  if (match === null) return undefined;
  const bucket = decodeURIComponent(match[1]!);
  const key = match[2] === undefined || match[2] === '' ? undefined : decodeURIComponent(match[2]);
  const subresources = [...parsed.searchParams.keys()].filter((name) => name !== 'x-id');
  return { ...(senderPath === undefined ? {} : { senderPath }), bucket, ...(key === undefined ? {} : { key }), upstreamPath: `${path}${parsed.search}`, subresources };
}

/** The object operation of a method on an object key; undefined for anything else (a copy, a multipart part, a sub-resource). */
export function objectOperationOf(method: string | undefined, target: S3RequestTarget, headers: Readonly<Record<string, string | string[] | undefined>>): S3ObjectOperation | undefined {
  if (target.key === undefined || target.subresources.length > 0) return undefined;
  switch (method) {
    case 'PUT':
      return headers['x-amz-copy-source'] === undefined ? 'PutObject' : undefined;
    case 'GET':
      return 'GetObject';
    case 'HEAD':
      return 'HeadObject';
    case 'DELETE':
      return 'DeleteObject';
    default:
      return undefined;
  }
}

/** Whether the body is `aws-chunked` (`Content-Encoding`, or a `STREAMING-` payload hash). */
export function isAwsChunked(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const encoding = String(headers['content-encoding'] ?? '');
  const payload = String(headers['x-amz-content-sha256'] ?? '');
  return encoding.split(',').some((part) => part.trim() === 'aws-chunked') || payload.startsWith('STREAMING-');
}

/**
 * The data of an `aws-chunked` body: chunks of `<hex size>[;chunk-signature=...]\r\n<bytes>\r\n`, the last of size 0,
 * then the trailers (a checksum) and an empty line. Throws on a body that is not well formed.
 */
export function decodeAwsChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', offset);
    if (lineEnd < 0) throw new Error('aws-chunked body: a chunk header has no line end');
    const size = Number.parseInt(body.subarray(offset, lineEnd).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isInteger(size) || size < 0) throw new Error('aws-chunked body: a chunk size is not a hexadecimal number');
    offset = lineEnd + 2;
    if (size === 0) return Buffer.concat(parts);
    if (offset + size > body.length) throw new Error('aws-chunked body: a chunk is shorter than its size');
    parts.push(body.subarray(offset, offset + size));
    offset += size + 2;
  }
}
