/**
 * Lambda for a served run (./aws-gateway.ts), in the REST-JSON protocol of @aws-sdk/client-lambda v3: `Invoke`,
 * `GetFunctionConfiguration` (name, ARN, environment variables resolved to the run's names) and
 * `ListEventSourceMappings` (by `EventSourceArn` and/or `FunctionName`). `Invoke`:
 * `POST /2015-03-31/functions/<FunctionName>/invocations` with the payload as the body; the function named by its
 * name, its ARN or a partial ARN (`function:<name>`), with an optional `:<qualifier>` that must be `$LATEST`. A
 * synchronous invocation (`X-Amz-Invocation-Type: RequestResponse`, the default) answers 200 with the function's
 * response; a handler that threw, crashed or timed out answers 200 with `X-Amz-Function-Error: Unhandled` and
 * `{errorType, errorMessage}`, as Lambda does. Another invocation type is refused (`InvalidParameterValueException`),
 * and a function the run does not run `ResourceNotFoundException` (404).
 */
import type { GatewayAnswer, ServiceHandler } from './aws-gateway';
import type { InvocationOutcome } from '../observation/observer';

/** A function the served run can invoke. */
export interface InvokableFunction {
  readonly arn: string;
  /** Its environment variables, resolved to the run's names. */
  readonly environment: Readonly<Record<string, string>>;
  invoke(event: unknown): Promise<InvocationOutcome>;
}

/** An event source mapping of the served run. */
export interface ServedEventSourceMapping {
  readonly uuid: string;
  readonly eventSourceArn: string;
  readonly functionName: string;
  readonly batchSize: number;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): GatewayAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

function refused(status: number, type: string, message: string): GatewayAnswer {
  return json(status, { Type: 'User', message }, { 'x-amzn-errortype': type });
}

/** The name an Invoke path names: `arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`, `function:<name>`, or `<name>`. */
export function invokedFunction(pathName: string): { readonly name: string; readonly qualifier?: string } | undefined {
  const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(pathName);
  if (match === null) return undefined;
  const parts = decodeURIComponent(match[1]!).split(':');
  const at = parts.indexOf('function');
  const [name, qualifier] = at >= 0 ? parts.slice(at + 1) : parts;
  return name === undefined ? undefined : { name, ...(qualifier === undefined ? {} : { qualifier }) };
}

/** The function named by a name, an ARN or a partial ARN (`function:<name>`), with no qualifier or `$LATEST`. */
function nameOf(reference: string): string {
  const parts = reference.split(':');
  const at = parts.indexOf('function');
  return (at >= 0 ? parts[at + 1] : parts[0]) ?? reference;
}

/** The handler of Lambda's calls over `functions` (by function name) and `mappings`. */
export function lambdaHandler(functions: ReadonlyMap<string, InvokableFunction>, mappings: readonly ServedEventSourceMapping[], runName: () => string): ServiceHandler {
  return async ({ method, path, headers, body }) => {
    const url = new URL(path, 'http://gateway');
    const configuration = method === 'GET' ? /^\/2015-03-31\/functions\/([^/]+)\/configuration$/.exec(url.pathname) : null;
    if (configuration !== null) {
      const name = nameOf(decodeURIComponent(configuration[1]!));
      const fn = functions.get(name);
      if (fn === undefined) return refused(404, 'ResourceNotFoundException', `Function not found: ${name}`);
      return json(200, { FunctionName: name, FunctionArn: fn.arn, Version: '$LATEST', State: 'Active', Environment: { Variables: fn.environment } });
    }
    if (method === 'GET' && /^\/2015-03-31\/event-source-mappings\/?$/.test(url.pathname)) {
      const source = url.searchParams.get('EventSourceArn');
      const functionName = url.searchParams.get('FunctionName');
      const listed = mappings.filter((mapping) => (source === null || mapping.eventSourceArn === source) && (functionName === null || mapping.functionName === nameOf(functionName)));
      return json(200, {
        EventSourceMappings: listed.map((mapping) => ({
          UUID: mapping.uuid,
          EventSourceArn: mapping.eventSourceArn,
          FunctionArn: functions.get(mapping.functionName)?.arn ?? mapping.functionName,
          BatchSize: mapping.batchSize,
          State: 'Enabled',
        })),
      });
    }
    const invoked = method === 'POST' ? invokedFunction(url.pathname) : undefined;
    if (invoked === undefined) return refused(400, 'InvalidRequestContentException', `the served run answers Lambda's Invoke, GetFunctionConfiguration and ListEventSourceMappings, not ${method} ${url.pathname}`);
    const qualifier = invoked.qualifier ?? url.searchParams.get('Qualifier') ?? '$LATEST';
    const fn = functions.get(invoked.name);
    if (fn === undefined || qualifier !== '$LATEST') {
      return refused(404, 'ResourceNotFoundException', `Function not found: ${invoked.name}${qualifier === '$LATEST' ? '' : `:${qualifier}`} (${runName()} runs ${[...functions.keys()].join(', ') || 'no function'})`);
    }
    const type = headers['x-amz-invocation-type'] ?? 'RequestResponse';
    if (type !== 'RequestResponse') return refused(400, 'InvalidParameterValueException', `the served run invokes synchronously (RequestResponse) only, not ${String(type)}`);
    let event: unknown;
    try {
      event = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
    } catch {
      return refused(400, 'InvalidRequestContentException', 'Could not parse request body into json');
    }
    const outcome = await fn.invoke(event);
    const version = { 'x-amz-executed-version': '$LATEST' };
    switch (outcome.kind) {
      case 'returned':
        return { status: 200, headers: { 'content-type': 'application/json', ...version }, body: outcome.response === undefined ? 'null' : JSON.stringify(outcome.response) };
      case 'threw':
        return json(200, { errorType: outcome.errorName, errorMessage: outcome.errorMessage }, { ...version, 'x-amz-function-error': 'Unhandled' });
      case 'crashed':
        return json(200, { errorType: 'Runtime.ExitError', errorMessage: 'RequestId: the runtime exited before the invocation completed' }, { ...version, 'x-amz-function-error': 'Unhandled' });
      case 'timed-out':
        return json(200, { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${outcome.timeoutSeconds}.00 seconds` }, { ...version, 'x-amz-function-error': 'Unhandled' });
    }
  };
}
