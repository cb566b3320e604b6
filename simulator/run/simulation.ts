/**
 * One simulation run, start to end, in stages, each a file of its own:
 *
 *   prepare (./prepare.ts: the options, the app read) → build (./build.ts: DynamoDB Local, the recorders, the local
 *   flow) → drive (./drive.ts: the producers, the rounds until the run settles) → operate (./operate.ts: the
 *   scenario's operator, the run settled again) → facts (./facts.ts: what the checks read, produced once) → check
 *   (./check.ts: every registered check, simulator/check/registry.ts) → report (./report.ts: the result).
 */
import { startTableClockProxy } from '../aws/table-clock-proxy';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isRunTable, runTableIdentities, runTableTimeToLive } from './run-table-identity';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { hasAppCommand } from '../model/synthesize';
import { SeededScheduler } from '../schedule/seeded-scheduler';
import { buildRun, type StartedParts } from './build';
import { checkRun } from './check';
import { driveRun } from './drive';
import { readRunFacts } from './facts';
import { operateRun } from './operate';
import type { SimulationOptions } from './options';
import { prepareApp, runSettings } from './prepare';
import { reportRun } from './report';
import type { SimulationResult } from './result';
import { PhaseTimer } from './run-profile';
import { runOutputs } from './assembly-source';
import { runServices } from './run-services';
import { withoutTableSuffix } from './table-suffix';

export { NothingToSimulateError, RegionContradictionError } from './prepare';
export type { IamReport, RelayFigures, SimulationResult, SubscriberReport } from './result';

/** Runs a simulation; see the module comment. The caller decides what a violation means (the CLI exits 1). */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const startedAt = Date.now();
  const given = runSettings(options);
  const workDirectory = mkdtempSync(path.join(tmpdir(), 'ief-simulate-'));
  const phases = new PhaseTimer();
  const scheduler = new SeededScheduler(given.seed);
  const started: StartedParts = {};
  let servicesKept = false;
  try {
    const app = await prepareApp(options, given, workDirectory, phases);
    // the run's Region is the stacks' own when they all name one (./prepare.ts)
    const settings = { ...given, region: app.region };
    const built = await buildRun(options, settings, app, scheduler, phases, started);
    const driven = await driveRun(options, settings, app, built, phases);
    const operated = await operateRun(options, app, built, driven, phases);
    const { facts } = await readRunFacts(options, settings, app, built, driven, operated, DynamoDBDocumentClient.from(built.client));
    const violations = checkRun(facts);
    // the tables named as the templates name them, without the suffix of a run against another's DynamoDB Local
    const result = withoutTableSuffix(
      reportRun(settings, app, built, operated, facts, violations, startedAt, { count: scheduler.realTimeEventCount(), first: scheduler.realTimeEvents() }),
      built.tableNameSuffix,
    );
    phases.ended('checks');
    built.attribution.close();
    // simulate --serve: the services go on serving what the run left; the callee stops them
    if (options.keepServices !== undefined) {
      const watchable = options.app !== undefined || hasAppCommand(path.join(options.cwd, 'cdk.json'));
      const logFile = options.logFile === undefined ? undefined : path.resolve(options.cwd, options.logFile);
      const watch = watchable
        ? { cwd: options.cwd, ...runOutputs(options), ...(options.app === undefined ? {} : { app: options.app }), ...(options.stacks === undefined ? {} : { stacks: options.stacks }) }
        : undefined;
      // the operator's DynamoDB endpoint tells the run's tables' creation on the run's clock (../aws/table-clock-proxy.ts):
      // the run created them at its start; a table made while it serves, when the clock runs with real time. A run table
      // is the one the run made (its TableId, else its real creation time), not any of its name: one deleted and made
      // again under it while serving (a restore under the table's own name) was made then (review ro15b, RO15B-4)
      const runTables = await runTableIdentities(built.client, [...built.flow.tables.values()].map((table) => table.tableName));
      // and it tells their TTL as the template defines it, which the run never turns on in DynamoDB Local (../aws/tables.ts)
      const timeToLiveAttributes = new Map(
        app.model.tables.flatMap((table) => {
          const tableName = built.flow.tables.get(table.key)?.tableName;
          return tableName === undefined || table.timeToLiveAttribute === undefined ? [] : [[tableName, table.timeToLiveAttribute] as const];
        }),
      );
      const tableClock = await startTableClockProxy(
        built.database.endpoint,
        (tableName, realCreatedAt, tableId) => (isRunTable(runTables.get(tableName), realCreatedAt, tableId) ? settings.startTime : realCreatedAt + built.clock.now() - Date.now()),
        runTableTimeToLive(built.client, runTables, timeToLiveAttributes),
      );
      const database = {
        endpoint: tableClock.endpoint,
        ...(built.database.pid === undefined ? {} : { pid: built.database.pid }),
        stop: async () => {
          await tableClock.stop();
          await built.database.stop();
        },
      };
      options.keepServices(
        runServices(app.model, built.flow, database, built.clock, settings.region, {
          relays: driven.relays,
          ledger: built.ledger,
          concurrency: settings.concurrency,
          stopFaults: () => settings.plan.stopFaults(),
          ...(watch === undefined ? {} : { watch }),
          ...(logFile === undefined ? {} : { logFile }),
        }),
      );
    }
    servicesKept = options.keepServices !== undefined;
    return result;
  } finally {
    const coldStarts = { coldStarts: 0, preInitialized: 0 };
    for (const runner of started.flow?.runners.values() ?? []) {
      const stats = runner.stats();
      coldStarts.coldStarts += stats.coldStarts;
      coldStarts.preInitialized += stats.preInitialized;
    }
    if (!servicesKept) {
      await started.flow?.stop();
      await started.database?.stop();
      phases.ended('stop');
    }
    rmSync(workDirectory, { recursive: true, force: true });
    options.onProfile?.(phases.profile({ timings: scheduler.timings(), figures: scheduler.figures() }, coldStarts));
  }
}
