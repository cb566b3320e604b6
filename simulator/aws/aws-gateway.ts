/**
 * One endpoint for every AWS call of a served run (`simulate --serve`), so a client configured with the SDK's global
 * endpoint setting (`AWS_ENDPOINT_URL`, which @aws-sdk v3 reads, service-specific `AWS_ENDPOINT_URL_<SERVICE>`
 * overriding it) reaches the run as it would an account. A request is routed by the service its SigV4 signature names
 * (`Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request`): `dynamodb` to the run's
 * DynamoDB Local, `sqs` to its SQS endpoint, `sns` to its SNS endpoint, `s3` to its S3 endpoint when the app has a
 * bucket (path-style: the SDK addresses an IP endpoint so) (each forwarded as it came: they take any credentials; to
 * DynamoDB Local with its access key id made of letters and digits, see {@link dynamoDbLocalAuthorization}), `cloudformation` and `lambda` to the handlers given (./cloudformation-endpoint.ts,
 * ./lambda-endpoint.ts). A request for another service, or unsigned, is answered 400 `UnknownService`, naming it.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, readBody, type LoopbackServer } from './loopback-server';

/** Answers one request of a service the gateway handles itself. */
export type ServiceHandler = (request: { readonly method: string; readonly path: string; readonly headers: IncomingMessage['headers']; readonly body: Buffer }) => Promise<GatewayAnswer>;

/** What a handler answers. */
export interface GatewayAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/** Where each service is served. */
export interface GatewayRoutes {
  /** Forwarded as they come: `http://127.0.0.1:<port>` by service name (`dynamodb`, `sqs`, `sns`, `s3`). */
  readonly forward: Readonly<Record<string, string>>;
  /** Answered here, by service name (`cloudformation`, `lambda`, `sts`). */
  readonly handle: Readonly<Record<string, ServiceHandler>>;
  /**
   * Where a request signed by `accessKeyId` for `service` is forwarded instead of `forward[service]` (e.g. the DynamoDB
   * requests of an assumed role's session, through a proxy that authorizes them under the role), or undefined.
   * @default every request of a service goes to `forward[service]`
   */
  readonly route?: (service: string, accessKeyId: string | undefined) => Promise<string | undefined>;
}

/** The signing name of the service a SigV4-signed request is for, or undefined when it is not signed. */
export function signedService(authorization: string | undefined): string | undefined {
  return /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\/aws4_request/.exec(authorization ?? '')?.[1];
}

/**
 * The `Authorization` header with its access key id made of letters and digits only: DynamoDB Local (2.0 on) rejects
 * any other (`UnrecognizedClientException`), and the served run's convention, `<account>.<role>` (which the served STS
 * and CloudFormation read), has a dot. DynamoDB Local checks no signature and shares one database across keys
 * (`-sharedDb`), so the key changes nothing else.
 */
export function dynamoDbLocalAuthorization(authorization: string | undefined): string | undefined {
  return authorization?.replace(/Credential=([^/]+)\//, (_match, key: string) => `Credential=${key.replace(/[^A-Za-z0-9]/g, 'x')}/`);
}

function forward(target: string, incoming: IncomingMessage, body: Buffer, response: ServerResponse, service?: string): void {
  const url = new URL(incoming.url ?? '/', target);
  const authorization = service === 'dynamodb' ? dynamoDbLocalAuthorization(incoming.headers.authorization) : incoming.headers.authorization;
  const headers = { ...incoming.headers, host: url.host, ...(authorization === undefined ? {} : { authorization }) };
  const outgoing = httpRequest(url, { method: incoming.method, headers }, (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(response);
  });
  outgoing.on('error', (error) => {
    if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
    response.end(`the served run's ${target} did not answer: ${error.message}`);
  });
  outgoing.end(body);
}

/** Starts the gateway on 127.0.0.1 at a free port. */
export async function startAwsGateway(routes: GatewayRoutes): Promise<LoopbackServer> {
  const server = createServer((incoming, response) => {
    void (async () => {
      const body = await readBody(incoming);
      const service = signedService(incoming.headers.authorization);
      const routed = service === undefined || routes.route === undefined ? undefined : await routes.route(service, /Credential=([^/]+)\//.exec(incoming.headers.authorization ?? '')?.[1]);
      const target = routed ?? (service === undefined ? undefined : routes.forward[service]);
      // a routed request goes to a proxy that reads its key (an assumed role's session); DynamoDB Local takes no dotted key
      if (target !== undefined) return forward(target, incoming, body, response, routed === undefined ? service : undefined);
      const handler = service === undefined ? undefined : routes.handle[service];
      if (handler === undefined) {
        const served = [...Object.keys(routes.forward), ...Object.keys(routes.handle)].join(', ');
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ __type: 'UnknownService', message: `the served run answers ${served}; this request is for ${service ?? 'no service (it is not SigV4-signed)'}` }));
        return;
      }
      const answer = await handler({ method: incoming.method ?? 'GET', path: incoming.url ?? '/', headers: incoming.headers, body });
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ __type: 'InternalFailure', message: error instanceof Error ? error.message : String(error) }));
    });
  });
  return listenOnLoopback(server);
}
