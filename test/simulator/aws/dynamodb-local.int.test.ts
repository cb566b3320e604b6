import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createServer } from 'node:http';
import { freePort, startDynamoDbLocal, START_HANG_LIMIT_MS, type DynamoDbLocal } from '../../../simulator/aws/dynamodb-local';
import { listenOnLoopback } from '../../../simulator/aws/loopback-server';
import { listeningAddresses } from '../../../simulator/aws/listening-sockets';

const started: DynamoDbLocal[] = [];
const temporary = mkdtempSync(path.join(tmpdir(), 'ief-dynamodb-local-'));

afterAll(async () => {
  await Promise.all(started.map((server) => server.stop()));
  rmSync(temporary, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startDynamoDbLocal>[0] = {}): Promise<DynamoDbLocal> {
  const server = await startDynamoDbLocal(options);
  started.push(server);
  return server;
}

describe("the simulator's DynamoDB Local", () => {
  test('listens on 127.0.0.1 only, at the port its own process bound: every listening socket of the process it started is there', async () => {
    const warnings: string[] = [];
    const server = await start({ warn: (message) => warnings.push(message) });
    expect(server.pid).toBeTypeOf('number');
    expect(server.endpoint).toBe(`http://127.0.0.1:${server.port}`);
    expect(listeningAddresses(server.pid!)).toEqual([`127.0.0.1:${server.port}`]);
    expect(server.loopbackOnly).toBe(true);
    expect(warnings).toEqual([]);
  });

  /** A launcher that cannot bind loopback, as one that finds no setHost in the installed jar. */
  function cannotBindLauncher(): string {
    const launcher = path.join(temporary, 'CannotBind.java');
    writeFileSync(
      launcher,
      'public class CannotBind { public static void main(String[] a) { System.err.println("no setHost in this jar"); System.exit(3); } }\n',
    );
    return launcher;
  }

  test('when the loopback launcher cannot bind loopback, refuses to listen on all interfaces unless allowed, saying how', async () => {
    const warnings: string[] = [];
    await expect(startDynamoDbLocal({ warn: (message) => warnings.push(message), loopbackLauncher: cannotBindLauncher() })).rejects.toThrow(
      /could not be bound to 127\.0\.0\.1 only \(no setHost in this jar\)\. The simulator does not start it on all network interfaces unless asked to.*--dynamodb-all-interfaces/s,
    );
    expect(warnings).toEqual([]);
  });

  test('with allowAllInterfaces, it starts on all interfaces, says so loudly, and reports loopbackOnly false', async () => {
    const warnings: string[] = [];
    const server = await start({ warn: (message) => warnings.push(message), loopbackLauncher: cannotBindLauncher(), allowAllInterfaces: true });
    expect(server.loopbackOnly).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not be bound to 127\.0\.0\.1 only \(no setHost in this jar\).*ALL network interfaces/);
    // and that is the truth: the plain jar's listener is not loopback
    const addresses = listeningAddresses(server.pid!);
    expect(addresses).toHaveLength(1);
    expect(addresses[0]).not.toMatch(/^127\./);
    expect(addresses[0]).toMatch(new RegExp(`:${server.port}$`));
  });

  test('on all interfaces, an answer from another program on the chosen port does not count as started', async () => {
    // another program took the port between its choice and Java's bind, and answers every request with 200
    const impostor = createServer((_request, response) => response.end('{"TableNames":[]}'));
    const listening = await listenOnLoopback(impostor);
    const port = Number(new URL(listening.endpoint).port);
    const attempt = startDynamoDbLocal({ warn: () => undefined, loopbackLauncher: cannotBindLauncher(), allowAllInterfaces: true, choosePort: async () => port });
    try {
      await expect(attempt).rejects.toThrow(new RegExp(`something else answered on port ${port}, and the DynamoDB Local started there failed`));
    } finally {
      // a start that wrongly counted as started leaves no server behind (it would bind the port once the impostor left)
      await attempt.then((server) => server.stop(), () => undefined);
      await listening.stop();
    }
  });

  test('a server that reports its port but cannot be reached fails at once with the connect error, its banner without tabs', async () => {
    // as with loopback down (a network namespace of its own): the launcher reports LISTENING, every connect fails
    const port = await freePort();
    const launcher = path.join(temporary, 'Unreachable.java');
    writeFileSync(
      launcher,
      'public class Unreachable { public static void main(String[] a) throws Exception { ' +
        `System.out.println("Port:\\t8000"); System.out.println("LISTENING 127.0.0.1:${port}"); Thread.sleep(600000); } }\n`,
    );
    const began = Date.now();
    const failure = await startDynamoDbLocal({ warn: () => undefined, loopbackLauncher: launcher, classDataSharing: false }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(new RegExp(`DynamoDB Local reported port ${port} but could not be reached there: .*ECONNREFUSED`));
    expect(failure?.message).toContain('Port: 8000');
    expect(failure?.message).not.toContain('\t');
    expect(Date.now() - began).toBeLessThan(START_HANG_LIMIT_MS / 4);
  }, 240_000);
});
