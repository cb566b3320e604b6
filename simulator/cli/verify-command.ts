/**
 * `idempotent-event-flow verify`: runs a scenario against a deployed app and checks it with the simulator's own checks
 * (simulator/verify/verify-run.ts). Reaches AWS through the SDK's default credential chain, Region and endpoint
 * settings (`AWS_ENDPOINT_URL`: a served run of `simulate --serve` answers as an account would). Exits 0 only when the
 * verdict is OK (simulator/verify/verdict.ts); 1 when a check fails; 6 when the flow does not become quiet in time (then
 * `--json` holds a partial result saying what it waited for, with `verdict: { status: 'NOT QUIET', reason }`); 5
 * (as simulate's) when verify could not see something that might have failed (NOT PROVEN); 2 for a usage error; 3 when it refused to run before sending any command (a stack or
 * queue outside `--account`, no flow found, a scenario it cannot run: `--json` holds `verdict: { status: 'REFUSED',
 * reason }`); 4 when AWS was not reached or refused its credentials or calls (no credentials, an endpoint that does not
 * answer: ../verify/aws-unreached.ts; `--json` holds `verdict: { status: 'AWS NOT REACHED', reason }`), and for any
 * other error before a verdict (`--json`: `verdict: { status: 'ERROR', reason }`): no verdict. A `--stack` that does not
 * exist is refused (3).
 */
import * as path from 'node:path';
import { existsSync } from 'node:fs';
import { loadScenario, ScenarioError } from '../run/scenario';
import { outputFileProblem, writeOutputFile } from './output-file';
import { verifyClients } from '../verify/clients';
import { NoDeployedFlowError } from '../verify/deployed-flow';
import { verifyVerdict } from '../verify/verdict';
import { formatVerifyReport } from '../verify/verify-report';
import { RunIdError } from '../verify/run-ids';
import { AWS_ACCESS_HINT, awsUnreachedReason } from '../verify/aws-unreached';
import { isNotQuiet, runVerify, type NotQuietResult } from '../verify/verify-run';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from '../../operator/cli/command';

const USAGE = `Usage: idempotent-event-flow verify --scenario <module> [options]

Runs the scenario's producers against the deployed app, waits until the flow is quiet and checks, with the
simulator's own checks, that every event of the run was applied exactly once by every subscriber its filter took
(the scenario's effect probes against the real tables), that no dead letter is unexplained, and that ordered
subscribers applied each aggregate's events in order. It does not run the scenario's producer probes (simulate's
dual-write check) and says so. Finds the flow from the deployed stacks (their resources and
the subscribers' Operator outputs). Its commands' ids are unique to the run (it can run again in the same account).
It never injects faults and never deletes anything it did not create. Its commands are REAL: every subscriber acts
on them as on real traffic (mails sent, payments taken, calls outside AWS): never run it against production.
It ends OK, VIOLATED, or NOT PROVEN (something that might have failed it could not see: it says what), or it is
REFUSED before sending anything. Exit codes: 0 OK; 1 VIOLATED; 5 NOT PROVEN; 6 not quiet in time; 2 usage error
(or the simulator not installed beside the operator package);
3 refused (no --account, a stack or queue outside --account, an endpoint outside AWS no --allow-endpoint names,
no flow found or a --stack that does not exist, a scenario it cannot run); 4 AWS not reached or refusing verify's credentials or calls (no credentials found, an
endpoint that does not answer, access denied), or any other error before a verdict: no verdict (if it happened
after the commands were sent, their events are in the flow: run verify again).

AWS is reached as the SDK reaches it: the default credential chain, --region or AWS_REGION, and AWS_ENDPOINT_URL
(e.g. the one simulate --serve prints).

Options:
  --scenario <module>     the scenario module (as for simulate): its producers, effect probes, malformed events
  --stack <name>          a deployed stack of the app (repeatable); default: every stack with a subscriber's Operator output,
                          the stack of the flow whose outbox they name, and the stack each scenario producer names
  --account <id>          an account the run may send commands into (repeatable; required: without it verify
                          refuses, naming the accounts the stacks are in): a stack of the flow, or a subscription
                          of its topics to a queue, in any other refuses the run before any command is sent (the
                          guard against a production account)
  --allow-endpoint <e>    an endpoint outside AWS (an https URL, a mail address, a phone number) a subscription of
                          the flow's topic may deliver the run's events to (repeatable): any other such subscription
                          refuses the run before any command is sent, since --account cannot place it
  --count <n>             commands per producer (default 10, 1 to 10000)
  --seed <seed>           seeds the scenario's commands (default: verify)
  --timeout <seconds>     how long to wait for the flow to be quiet; past it, verify fails naming the events it
                          still waited for and where each is (0: look once, do not wait). Default: derived from
                          the deployed queues, maxReceiveCount x visibility timeout (per hop: each subscriber that
                          emits adds one) + 120 s, at least 600 s: a handler that throws on every event then ends
                          VIOLATED, its events dead-lettered and named, not "not quiet"
  --poll <seconds>        how often to look meanwhile (default 5)
  --cleanup               afterwards, when the verdict is OK, remove what the run created and say what: the
                          items of the stacks' tables whose key holds an id only this run has (exact ids, never a
                          substring; never an inbox record or fence), the dead letters of its events; it keeps (and
                          names, with when their lifecycle rule removes them) the S3 objects of the run's offloaded
                          events. A run not OK keeps everything (its dead letters and outbox items are the verdict's
                          evidence); a cleanup that fails is said after the verdict, whose exit code and --json stand
  --json <file>           write the result as JSON: the run's own event ids (eventIds: they carry the run id) and,
                          apart, the events subscribers emitted without an id (derivedEvents, each with the event
                          it derives from); when the flow is not quiet in time, a partial result (notQuiet: the
                          reason and what it still waited for; verdict.status NOT QUIET) and no checks. A path
                          it cannot write is a usage error (2) before anything is sent
  --quiet                 no progress lines
  --region <region>       the AWS Region of the flow's stacks (default: AWS_REGION, or the SDK's configuration)
`;

class UsageProblem extends Error {}

/**
 * The refusal of a `--stack` CloudFormation does not know (`ValidationError: Stack with id <name> does not exist`): no
 * flow found there (exit 3, as the help says), naming the stack. Undefined for any other error.
 */
function missingStack(error: unknown): string | undefined {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (name !== 'ValidationError' || typeof message !== 'string') return undefined;
  const match = /Stack with id (\S+) does not exist/.exec(message);
  return match === null ? undefined : `no stack ${match[1]!} in this account and Region (--stack; CloudFormation: ${message}): verify sends nothing`;
}

function text(parsed: ParsedArguments, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

function whole(parsed: ParsedArguments, name: string, fallback: number, min: number, max: number): number {
  const value = text(parsed, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageProblem(`--${name} must be a whole number from ${min} to ${max}, but '${value}' was given`);
  return Number(value);
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const { io } = context;
  const cwd = io.cwd ?? process.cwd();
  if (parsed.positionals.length > 0) return context.usageError(`unexpected argument '${parsed.positionals[0]}'`);
  const scenarioFile = text(parsed, 'scenario');
  if (scenarioFile === undefined) return context.usageError('give --scenario <module>: its producers drive the deployed flow');
  let settings;
  try {
    if (!existsSync(path.resolve(cwd, scenarioFile))) throw new UsageProblem(`--scenario ${scenarioFile}: there is no file ${path.resolve(cwd, scenarioFile)}`);
    settings = {
      count: whole(parsed, 'count', 10, 1, 10_000),
      ...(text(parsed, 'timeout') === undefined ? {} : { timeoutSeconds: whole(parsed, 'timeout', 0, 0, 86_400) }),
      pollSeconds: whole(parsed, 'poll', 5, 1, 600),
    };
  } catch (error) {
    if (error instanceof UsageProblem) return context.usageError(error.message);
    throw error;
  }
  const stacks = parsed.values.stack;
  const accounts = parsed.values.account;
  if (Array.isArray(accounts) && accounts.some((account) => typeof account !== 'string' || !/^\d{12}$/.test(account))) {
    return context.usageError(`--account must be a 12-digit AWS account id, but '${(accounts as unknown[]).find((account) => typeof account !== 'string' || !/^\d{12}$/.test(account))}' was given`);
  }
  const jsonText = text(parsed, 'json');
  const jsonFile = jsonText === undefined ? undefined : path.resolve(cwd, jsonText);
  // checked before anything is sent: a path it cannot write would otherwise fail after the run and lose its verdict
  const jsonProblem = jsonFile === undefined ? undefined : outputFileProblem(jsonFile);
  if (jsonProblem !== undefined) return context.usageError(`--json ${jsonText}: ${jsonProblem}`);
  /** Writes the --json (if asked); a failure is said and changes no exit code. */
  const writeJson = (value: unknown): void => {
    if (jsonFile === undefined) return;
    const problem = writeOutputFile(jsonFile, `${JSON.stringify(value, null, 2)}\n`);
    if (problem !== undefined) io.stderr(`error: the result could not be written to --json ${jsonText} (${problem}); the exit code is the run's\n`);
  };
  const clients = verifyClients(context.clientOptions.region);
  const quiet = parsed.values.quiet === true;
  let result;
  try {
    const scenario = await loadScenario(scenarioFile, cwd);
    result = await runVerify(clients, {
      scenario,
      ...(Array.isArray(stacks) ? { stacks: stacks as string[] } : {}),
      ...(Array.isArray(accounts) ? { accounts: accounts as string[] } : {}),
      ...(Array.isArray(parsed.values['allow-endpoint']) ? { allowedEndpoints: parsed.values['allow-endpoint'] as string[] } : {}),
      ...settings,
      seed: text(parsed, 'seed') ?? 'verify',
      cleanup: parsed.values.cleanup === true,
      onProgress: (line) => {
        if (!quiet) io.stderr(`${line}\n`);
      },
      // said even with --quiet: the commands are real
      onWarning: (line) => io.stderr(`${line}\n`),
    });
  } catch (error) {
    const missing = missingStack(error);
    if (error instanceof NoDeployedFlowError || error instanceof ScenarioError || error instanceof RunIdError || missing !== undefined) {
      // refused before any command was sent: its own exit code, and a --json a CI job can read
      const reason = missing ?? (error as Error).message;
      writeJson({ verdict: { status: 'REFUSED', reason } });
      io.stderr(`error: ${reason}\n`);
      return EXIT_CODE.REFUSED;
    }
    const unreached = awsUnreachedReason(error);
    if (unreached !== undefined) {
      // no verdict: not VIOLATED (exit 1) or NOT PROVEN (exit 5), which a CI job reads as the flow's fault
      const reason = `AWS not reached, or it refused verify's credentials or calls: ${unreached}. ${AWS_ACCESS_HINT}`;
      writeJson({ verdict: { status: 'AWS NOT REACHED', reason } });
      io.stderr(`error: ${reason}\n`);
      return EXIT_CODE.AWS_UNREACHED;
    }
    // any other error (a throttle after the SDK's retries, a table an Operator output names that is gone, a fault of
    // verify's): no verdict either, never VIOLATED's exit code (review r12, R12-7)
    const reason = `${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}; no verdict (if the commands were already sent, their events are in the flow: run verify again once fixed)`;
    writeJson({ verdict: { status: 'ERROR', reason } });
    io.stderr(`error: ${reason}\n`);
    return EXIT_CODE.AWS_UNREACHED;
  } finally {
    clients.destroy();
  }
  // at its time limit no check ran: the --json is partial (the reason, what it waited for, the run's events), with
  // its own verdict status and exit code, never VIOLATED's (review r13, R13-8)
  if (isNotQuiet(result)) {
    writeJson(notQuietJson(result));
    if (result.cleanupSkipped !== undefined) io.stderr(`cleanup: ${result.cleanupSkipped}\n`);
    io.stderr(`error: verify run ${result.runId}: ${result.notQuiet.reason}\n`);
    return EXIT_CODE.NOT_QUIET;
  }
  const verdict = verifyVerdict(result);
  io.stdout(formatVerifyReport(result));
  writeJson({ ...result, verdict });
  return verdict.status === 'OK' ? EXIT_CODE.OK : verdict.status === 'NOT PROVEN' ? EXIT_CODE.NOT_PROVEN : EXIT_CODE.FAILURE;
}

/** The `--json` of a run not quiet in time: the partial result, with `verdict: { status: 'NOT QUIET', reason }`. */
export function notQuietJson(result: NotQuietResult): NotQuietResult & { readonly verdict: { readonly status: 'NOT QUIET'; readonly reason: string } } {
  return { ...result, verdict: { status: 'NOT QUIET', reason: result.notQuiet.reason } };
}

/** The `verify` subcommand. */
export const verifyCommand: Command = {
  name: 'verify',
  summary: 'run a scenario against a deployed app and check it with the simulator\'s checks',
  usage: USAGE,
  options: {
    scenario: { type: 'string' },
    stack: { type: 'string', multiple: true },
    account: { type: 'string', multiple: true },
    'allow-endpoint': { type: 'string', multiple: true },
    count: { type: 'string' },
    seed: { type: 'string' },
    timeout: { type: 'string' },
    poll: { type: 'string' },
    cleanup: { type: 'boolean' },
    json: { type: 'string' },
    quiet: { type: 'boolean' },
  },
  run,
};
