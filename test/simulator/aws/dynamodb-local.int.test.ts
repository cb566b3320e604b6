import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../../simulator/aws/dynamodb-local';
import { listeningAddresses } from '../../support/listening-sockets';

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
  test('listens on 127.0.0.1 only: every listening socket of the process it started is bound to loopback', async () => {
    const warnings: string[] = [];
    const server = await start({ warn: (message) => warnings.push(message) });
    expect(server.pid).toBeTypeOf('number');
    expect(listeningAddresses(server.pid!)).toEqual([`127.0.0.1:${server.port}`]);
    expect(server.loopbackOnly).toBe(true);
    expect(warnings).toEqual([]);
  });

  test('when the loopback launcher cannot bind loopback, the server still starts, says loudly that it listens on all interfaces, and reports loopbackOnly false', async () => {
    const launcher = path.join(temporary, 'CannotBind.java');
    writeFileSync(
      launcher,
      'public class CannotBind { public static void main(String[] a) { System.err.println("no setHost in this jar"); System.exit(3); } }\n',
    );
    const warnings: string[] = [];
    const server = await start({ warn: (message) => warnings.push(message), loopbackLauncher: launcher });
    expect(server.loopbackOnly).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not be bound to 127\.0\.0\.1 only \(no setHost in this jar\).*ALL network interfaces/);
    // and that is the truth: the plain jar's listener is not loopback
    const addresses = listeningAddresses(server.pid!);
    expect(addresses).toHaveLength(1);
    expect(addresses[0]).not.toMatch(/^127\./);
    expect(addresses[0]).toMatch(new RegExp(`:${server.port}$`));
  });
});
