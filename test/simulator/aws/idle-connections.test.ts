/**
 * Every loopback server a worker talks to keeps an idle connection open. The AWS SDK in a worker pools its sockets; a
 * server that closes one after Node's default keep-alive timeout (5 s of real time) races the SDK's next request on
 * it, which then fails with `ECONNRESET` ("socket hang up") and is retried after a back-off: a virtual timer the
 * scheduler fires, which only some runs have. So whether an invocation met a retry depended on how long, in real
 * time, its environment sat idle between two invocations, that is on the machine's load. Seen with the SNS endpoint
 * (an ordered relay's fan-out publishes to it): two runs of one seed at --concurrency 4 of a four-stack app took
 * different turns from the first fan-out invocation whose socket the endpoint had closed (its timer offered in one
 * run, not in the other), and ended 15 against 19 rounds.
 *
 * The servers are caught as they start listening (each endpoint keeps its server to itself), and their timeouts read:
 * zero is "never".
 */
import { Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { listenOnLoopback, type LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { startBlockedEndpoint } from '../../../simulator/lambda/blocked-endpoint';

const started: LoopbackServer[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(started.splice(0).map((server) => server.stop()));
});

/** The HTTP servers that begin listening while `start` runs, and what it started. */
async function serversOf(start: () => Promise<LoopbackServer>): Promise<Server[]> {
  const servers: Server[] = [];
  const listen = Server.prototype.listen;
  vi.spyOn(Server.prototype, 'listen').mockImplementation(function (this: Server, ...args: unknown[]) {
    servers.push(this);
    return (listen as (...a: unknown[]) => Server).apply(this, args);
  });
  started.push(await start());
  vi.restoreAllMocks();
  return servers;
}

function timeouts(server: Server): { keepAlive: number; headers: number; request: number } {
  return { keepAlive: server.keepAliveTimeout, headers: server.headersTimeout, request: server.requestTimeout };
}

const NEVER = { keepAlive: 0, headers: 0, request: 0 };

describe('loopback servers keep idle connections open', () => {
  it('any server started with listenOnLoopback', async () => {
    const server = new Server(() => undefined);
    // Node's defaults close an idle keep-alive connection after 5 s
    expect(server.keepAliveTimeout).toBeGreaterThan(0);
    started.push(await listenOnLoopback(server));
    expect(timeouts(server)).toEqual(NEVER);
  });

  it('the SNS endpoint (an ordered relay fan-out publishes to it)', async () => {
    const servers = await serversOf(() => startSnsEndpoint({ resolveTopic: () => undefined }));
    expect(servers).toHaveLength(1);
    expect(timeouts(servers[0]!)).toEqual(NEVER);
  });

  it('the endpoint of the services that are not simulated', async () => {
    const servers = await serversOf(() => startBlockedEndpoint(() => undefined));
    expect(servers).toHaveLength(1);
    expect(timeouts(servers[0]!)).toEqual(NEVER);
  });

  it("the served run's AWS gateway", async () => {
    const servers = await serversOf(() => startAwsGateway({ forward: {}, handle: {} }));
    expect(servers).toHaveLength(1);
    expect(timeouts(servers[0]!)).toEqual(NEVER);
  });
});
