/**
 * While `simulate --serve` serves, the run's flow goes on working, in real time and without the run's faults: every
 * relay reads its stream and every event source mapping polls its queue and invokes its function, as on AWS. So an
 * operator's drill ends where it would in production: fix the handler, redrive the dead letters (or replay an event),
 * and watch the event applied once, or failing again.
 *
 * The app is watched too (when the run knows how to synthesize it: `--app`, or the project's cdk.json): when anything
 * that can change its synthesis changes (the same inputs as the assembly cache's key: the app's files, cdk.json, the
 * environment), the app is synthesized again into a directory of the serve's own, which bundles each handler with
 * esbuild as `cdk synth` does, and each function whose code changed takes the new code for its next invocation
 * (an environment of the old code finishes what it runs and is shut down: `FunctionRunner.useCode`). Only function
 * code is taken: a changed table, queue, policy or variable is not applied to a served run (a new run tests it), and
 * consumption pauses while the app synthesizes, so no invocation after a save runs the code from before it.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { assemblyKey, type Synthesizer } from '../model/assembly-cache';
import type { RunOutputs } from '../model/run-outputs';
import type { ResourceKey } from '../model/flow-model';
import { shownName } from '../model/find-resource';
import { readAssembly } from '../model/read-assembly';
import { synthesize } from '../model/synthesize';
import type { LocalFlow } from './build-flow';
import type { InvocationReport, RunLedger } from '../observation/ledger';
import { describeFailure } from '../observation/observer';
import { jsonLine, loggedRecordOutcomes } from '../observation/record-outcomes';
import type { CatchingUpRelay } from './relay-catch-up';

/** One message of a served invocation. */
export interface ServedMessage {
  /** The envelope id of its event. @default unknown (not an envelope) */
  readonly eventId?: string;
  readonly receiveCount: number;
  /** How it reached the queue (`sns`, `send-message` for a redrive or replay sent by the CLI, `redrive` by SQS). */
  readonly via: string;
  /** The outcome the runtime logged for it (`applied`, `duplicate`, `failed`, ...), else whether it was reported failed. */
  readonly outcome: string;
}

/** What the served flow did, as it happens. */
export type ServeActivity =
  | {
      readonly kind: 'invocation';
      readonly subscriber: string;
      readonly messages: readonly ServedMessage[];
      /** Why the whole invocation failed (it threw, crashed, timed out). @default it returned */
      readonly failure?: string;
    }
  /** A change was seen: the app synthesizes again (consumption waits). */
  | { readonly kind: 'synthesizing' }
  /** The functions (shown names) that take new code from their next invocation; none when no function's code changed. */
  | { readonly kind: 'code-replaced'; readonly functions: readonly string[] }
  | { readonly kind: 'synthesis-failed'; readonly error: string };

/**
 * How the served flow is watched for changes of the app. The run's outputs (its log, its --json, its redirected stdout,
 * where the served invocations are printed) are no sources: writing them is no change of the app.
 */
export interface ServeWatch extends RunOutputs {
  /** The project directory (the run's). */
  readonly cwd: string;
  /** The app command. @default the project's cdk.json */
  readonly app?: string;
  /** The stacks the run selected. @default every stack */
  readonly stacks?: readonly string[];
  /** @default the real synthesis (`cdk synth`) */
  readonly synthesizer?: Synthesizer;
}

/** What a {@link ServeConsumer} drives. */
export interface ServeConsumerOptions {
  readonly flow: Pick<LocalFlow, 'mappings' | 'runners' | 'subscribers'>;
  readonly relays: readonly Pick<CatchingUpRelay, 'poll'>[];
  readonly ledger: Pick<RunLedger, 'addInvocationListener'>;
  /** Invocations per function at once (the run's). */
  readonly concurrency: number;
  /** @default the app is not watched */
  readonly watch?: ServeWatch;
  /** Real time between two polls of the queues when nothing was to do. @default 500 */
  readonly idleMs?: number;
  readonly onActivity: (activity: ServeActivity) => void;
}

/** Real ms between two looks at the app's files (each lists the project's files). */
const WATCH_INTERVAL_MS = 1000;

/** Real ms between two polls of the queues when the last found nothing to do. */
const DEFAULT_IDLE_MS = 500;

/** The served flow at work (see the module comment); {@link ServeConsumer.stop} ends it. */
export class ServeConsumer {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private watchedKey: string | undefined;
  /** When the app's files were last looked at (real ms). */
  private watchedAt = 0;
  private readonly synthesized: string[] = [];

  public constructor(private readonly options: ServeConsumerOptions) {
    const subscriberOf = new Map<ResourceKey, string>();
    for (const subscriber of options.flow.subscribers) if (subscriber.mapping !== undefined) subscriberOf.set(subscriber.mapping.key, subscriber.name);
    options.ledger.addInvocationListener((mapping, invocation) => {
      if (this.loop === undefined || this.stopped) return;
      options.onActivity(invocationActivity(subscriberOf.get(mapping) ?? mapping, invocation));
    });
  }

  /** Starts polling (and watching); a second call does nothing. */
  public start(): void {
    if (this.loop !== undefined) return;
    if (this.options.watch !== undefined) this.watchedKey = this.keyOf(this.options.watch);
    this.loop = this.run();
  }

  /** Stops polling, once the invocations under way have ended. */
  public async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** Removes the assemblies the serve synthesized: call it once the functions that loaded their code are stopped. */
  public removeAssemblies(): void {
    for (const directory of this.synthesized.splice(0)) rmSync(directory, { recursive: true, force: true });
  }

  private keyOf(watch: ServeWatch): string {
    return assemblyKey({
      cwd: watch.cwd,
      ...(watch.app === undefined ? {} : { app: watch.app }),
      ...(watch.outputFiles === undefined ? {} : { outputFiles: watch.outputFiles }),
      ...(watch.outputDescriptors === undefined ? {} : { outputDescriptors: watch.outputDescriptors }),
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.takeChangedCode();
      let work = 0;
      for (const relay of this.options.relays) work += await relay.poll();
      const invocations = await Promise.all(this.options.flow.mappings.map((mapping) => mapping.runRound(this.options.concurrency)));
      work += invocations.reduce((sum, count) => sum + count, 0);
      if (work === 0 && !this.stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.idleMs ?? DEFAULT_IDLE_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** When the app changed: synthesizes it again and gives each function whose code changed the new code. */
  private async takeChangedCode(): Promise<void> {
    const watch = this.options.watch;
    if (watch === undefined || this.stopped || Date.now() - this.watchedAt < WATCH_INTERVAL_MS) return;
    this.watchedAt = Date.now();
    const key = this.keyOf(watch);
    if (key === this.watchedKey) return;
    this.watchedKey = key;
    this.options.onActivity({ kind: 'synthesizing' });
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-serve-'));
    this.synthesized.push(directory);
    try {
      const outputDirectory = path.join(directory, 'cdk.out');
      await (watch.synthesizer ?? synthesize)({ cwd: watch.cwd, outputDirectory, ...(watch.app === undefined ? {} : { app: watch.app }) });
      const model = readAssembly(outputDirectory, watch.stacks === undefined ? {} : { stacks: [...watch.stacks] });
      const replaced: string[] = [];
      for (const fn of model.functions) {
        const runner = this.options.flow.runners.get(fn.key);
        if (runner === undefined || sameCode(runner.codeDirectory, fn.assetDirectory)) continue;
        runner.useCode(fn.assetDirectory);
        replaced.push(shownName(fn));
      }
      this.options.onActivity({ kind: 'code-replaced', functions: replaced });
    } catch (error) {
      this.options.onActivity({ kind: 'synthesis-failed', error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** Whether two asset directories hold the same files with the same content. */
function sameCode(current: string, next: string): boolean {
  return current === next || contentHash(current) === contentHash(next);
}

/** A hash of a directory's files, by relative path and content. */
function contentHash(directory: string): string {
  const hash = createHash('sha256');
  const files = readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
  for (const file of files) hash.update(path.relative(directory, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/** The outcome counts of the runtime's one INFO line per batch (`{"message":"batch","outcomes":{...}}`), when it wrote one. */
function batchOutcomes(lines: readonly string[]): Map<string, number> | undefined {
  for (const line of lines) {
    const parsed = jsonLine(line);
    if (parsed?.message !== 'batch' || typeof parsed.outcomes !== 'object' || parsed.outcomes === null) continue;
    return new Map(Object.entries(parsed.outcomes as Record<string, unknown>).flatMap(([name, count]) => (typeof count === 'number' ? [[name, count] as const] : [])));
  }
  return undefined;
}

/**
 * The outcome of the messages of a returned invocation that logged no line of their own (the runtime logs an applied
 * message, `processed`, and a `duplicate` at DEBUG only): what the batch line counts that no message's line explains,
 * when that is one outcome; else what is known of them.
 */
function unloggedOutcome(lines: readonly string[], logged: ReadonlyMap<string, { readonly outcome: string }>): string {
  const counts = batchOutcomes(lines);
  if (counts === undefined) return 'acknowledged';
  for (const { outcome } of logged.values()) counts.set(outcome, (counts.get(outcome) ?? 0) - 1);
  const left = [...counts].filter(([, count]) => count > 0).map(([name]) => name);
  return left.length === 1 ? left[0]! : `acknowledged (${left.join(' or ') || 'no outcome counted'})`;
}

function invocationActivity(subscriber: string, invocation: InvocationReport): ServeActivity {
  const lines = invocation.output ?? [];
  const logged = loggedRecordOutcomes(lines);
  const failed = new Set(invocation.failedMessageIds);
  const failure = describeFailure(invocation.outcome);
  const unlogged = failure === undefined ? unloggedOutcome(lines, logged) : 'failed';
  const messages = invocation.messages.map(
    (message): ServedMessage => ({
      ...(message.origin?.eventId === undefined ? {} : { eventId: message.origin.eventId }),
      receiveCount: message.receiveCount,
      via: message.origin?.via ?? 'unknown',
      outcome: logged.get(message.messageId)?.outcome ?? (failed.has(message.messageId) ? 'failed' : unlogged),
    }),
  );
  return { kind: 'invocation', subscriber, messages, ...(failure === undefined ? {} : { failure }) };
}
