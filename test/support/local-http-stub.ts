/**
 * A local HTTP stub in the simulator's process, the outside service of a fixture app (http-subscribers,
 * http-outside-lease): its scenario starts it and its probes and operator decisions read what it recorded. It answers
 * at once (no real-time wait). Each stub is registered in the process under its name (on `globalThis`: the scenario
 * module is bundled on its own, and a test reads the stub the scenario started), and a second start in one process
 * (a test runs its scenario more than once) closes the first stub and starts empty. Not a test file.
 */
import { createServer, type IncomingMessage } from 'node:http';

/** A stub's answer to one request: an HTTP status and the JSON value of the body. */
export interface StubAnswer {
  readonly status: number;
  readonly value: unknown;
}

/** What a stub answers `request`, given the request's JSON body (`{}` when empty); it records what it keeps. */
export type StubResponder = (request: IncomingMessage, data: Record<string, unknown>) => StubAnswer;

/** A started stub: the record it keeps (`calls`, `state`...), whether it listens, and how to close it. */
export type LocalHttpStub<Kept extends object> = Kept & {
  /** Resolves once it listens; rejects, naming the port, when it cannot. */
  readonly listening: Promise<void>;
  /** Closes the stub and its open connections. */
  close(): Promise<void>;
};

/** What {@link startLocalHttpStub} starts. */
export interface LocalHttpStubSettings<Kept extends object> {
  /** The fixture's name: the stub's key in the process, and in the message of a failed listen. */
  readonly name: string;
  /** The port on 127.0.0.1 (the fixture's, where its functions' `STUB_URL` points). */
  readonly port: number;
  /** What the stub keeps, empty at the start; `respond` records into it. */
  readonly record: Kept;
  /** The stub's answer to each request (a body that is not JSON is answered 400, with no call to it). */
  readonly respond: StubResponder;
}

const registryKey = (name: string): symbol => Symbol.for(`idempotent-event-flow.test.${name}.stub`);
type Registry = { [key: symbol]: LocalHttpStub<object> | undefined };

async function body(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
}

/** Starts the stub `settings` describe, closing the one of the same name this process started before; registers it. */
export function startLocalHttpStub<Kept extends object>(settings: LocalHttpStubSettings<Kept>): LocalHttpStub<Kept> {
  const registry = globalThis as unknown as Registry;
  const key = registryKey(settings.name);
  const previous = registry[key];
  const server = createServer((request, response) => {
    const answer = (status: number, value: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    body(request).then(
      (data) => {
        const { status, value } = settings.respond(request, data);
        answer(status, value);
      },
      (error: unknown) => answer(400, { message: String(error) }),
    );
  });
  const listening = (previous === undefined ? Promise.resolve() : previous.close()).then(
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', (error) => reject(new Error(`the ${settings.name} stub could not listen on 127.0.0.1:${settings.port}: ${error.message}`)));
        server.listen(settings.port, '127.0.0.1', () => resolve());
      }),
  );
  // a failed listen fails a test that awaits listeningLocalHttpStub, else the probes that read the stub; the process
  // (the simulator's, when the CLI runs the scenario) must not die of it before then
  listening.catch(() => undefined);
  server.unref();
  const stub: LocalHttpStub<Kept> = {
    ...settings.record,
    listening,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        if (!server.listening) resolve();
      }),
  };
  registry[key] = stub;
  return stub;
}

/** The stub named `name` this process started last (the one the latest run called), if any. */
export function currentLocalHttpStub<Kept extends object>(name: string): LocalHttpStub<Kept> | undefined {
  return (globalThis as unknown as Registry)[registryKey(name)] as LocalHttpStub<Kept> | undefined;
}

/**
 * The stub named `name` this process started last, once it listens: throws when none was started, and rejects, naming
 * the port, when it could not listen. A test awaits it after loading its scenario and before the run, so a taken port
 * fails the test at once rather than through the counts of a run whose functions called another process's stub.
 */
export async function listeningLocalHttpStub<Kept extends object>(name: string): Promise<LocalHttpStub<Kept>> {
  const stub = currentLocalHttpStub<Kept>(name);
  if (stub === undefined) throw new Error(`no ${name} stub was started in this process (its scenario starts it as it loads)`);
  await stub.listening;
  return stub;
}
