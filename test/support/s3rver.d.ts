/** The little of s3rver 3.7 (which ships no types) that test/support/s3-local.ts uses. */
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface S3rverOptions {
    readonly port?: number;
    readonly address?: string;
    readonly silent?: boolean;
    readonly directory?: string;
  }

  export default class S3rver {
    public constructor(options: S3rverOptions);
    /** The Koa app's request handler. */
    public callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
