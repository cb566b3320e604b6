/**
 * The run's first stage: the options checked and defaulted, and the app read: the cloud assembly synthesized (or
 * reused), the flow modelled from its templates, the synth's annotations, the scenario's producers found among its
 * functions, the IAM policy engine loaded.
 */
import { FaultPlan } from '../faults/fault-plan';
import { loadPolicyEngine, type PolicyEngine } from '../iam/policy-engine';
import type { FlowModel, FunctionModel } from '../model/flow-model';
import { readAssembly } from '../model/read-assembly';
import { singleRegionOf } from '../model/stack-environments';
import { readSynthAnnotations, type SynthAnnotation } from '../model/synth-annotations';
import { runAssembly } from './assembly-source';
import { checkInteger, DEFAULT_FAULT_RATES, defaultStartTime, SIMULATION_BOUNDS, SIMULATION_DEFAULTS, type SimulationOptions } from './options';
import { findFunction } from './producer-driver';
import type { PhaseTimer } from './run-profile';
import { scenarioProducers, type ScenarioProducer } from './scenario';

/** `--region` names another Region than the one every stack of the app names: the caller's mistake. */
export class RegionContradictionError extends Error {
  public override readonly name = 'RegionContradictionError';
}

/** Thrown when the app has nothing the simulator can run. */
export class NothingToSimulateError extends Error {
  public override readonly name = 'NothingToSimulateError';
}

/** The run's settings, from the options and their defaults. */
export interface RunSettings {
  readonly seed: string;
  readonly count: number;
  readonly concurrency: number;
  readonly region: string;
  /** Where the run's clock stands when it begins (epoch ms; see `SimulationOptions.startTime`). */
  readonly startTime: number;
  readonly plan: FaultPlan;
  readonly scenarioProducers: readonly ScenarioProducer[];
}

/** The app, read. */
export interface PreparedApp {
  readonly assemblyDirectory: string;
  readonly model: FlowModel;
  readonly synthAnnotations: readonly SynthAnnotation[];
  /** The scenario's producers and their functions. */
  readonly producers: readonly { readonly producer: ScenarioProducer; readonly fn: FunctionModel }[];
  readonly policyEngine?: PolicyEngine;
  /** The run's Region: the one every stack names, else `--region`'s, else us-east-1. */
  readonly region: string;
}

/**
 * Checks the options (naming the bound a value breaks) and refuses a run nothing drives. `realNow`: this machine's
 * clock, read once for the default `startTime` only.
 */
export function runSettings(options: SimulationOptions, realNow: () => number = Date.now): RunSettings {
  const seed = options.seed ?? SIMULATION_DEFAULTS.seed;
  const count = checkInteger('--count', options.count ?? SIMULATION_DEFAULTS.count, SIMULATION_BOUNDS.count);
  const concurrency = checkInteger('--concurrency', options.concurrency ?? SIMULATION_DEFAULTS.concurrency, SIMULATION_BOUNDS.concurrency);
  // the real time to the whole second unless given: the times the run reads then differ between two runs of one seed
  // only by whole seconds, never in what a rounding to the second decides (an expiresAt against now)
  const startTime = checkInteger('startTime', options.startTime ?? defaultStartTime(realNow()), SIMULATION_BOUNDS.startTime);
  const region = options.region ?? SIMULATION_DEFAULTS.region;
  const plan = new FaultPlan(seed, options.rates ?? DEFAULT_FAULT_RATES);
  const producers = scenarioProducers(options.scenario);
  if (producers.length === 0 && options.events === undefined) {
    throw new NothingToSimulateError('nothing drives the flow: give a scenario with a producer (--scenario) or events (--events)');
  }
  return { seed, count, concurrency, region, startTime, plan, scenarioProducers: producers };
}

/** Reads the app into `workDirectory`; refuses an app with no subscriber the simulator can run. */
export async function prepareApp(options: SimulationOptions, settings: RunSettings, workDirectory: string, phases: PhaseTimer): Promise<PreparedApp> {
  const assemblyDirectory = await runAssembly(options, workDirectory);
  const model: FlowModel = readAssembly(assemblyDirectory, { stacks: options.stacks, region: settings.region });
  phases.ended('assembly');
  const region = runRegion(model, options.region, settings.region);
  const synthAnnotations = readSynthAnnotations(assemblyDirectory, model.stackNames);
  if (model.eventSourceMappings.length === 0 || model.subscriptions.length === 0) {
    throw new NothingToSimulateError(
      `the app has no SNS → SQS → Lambda subscriber the simulator can run (${model.subscriptions.length} subscription(s), ${model.eventSourceMappings.length} SQS event source mapping(s))` +
        (model.notSimulated.length ? `; not simulated: ${model.notSimulated.join('; ')}` : ''),
    );
  }
  const producers = settings.scenarioProducers.map((producer) => ({ producer, fn: findFunction(model, producer.function) }));
  const policyEngine = options.iam === false ? undefined : loadPolicyEngine(options.cwd);
  phases.ended('IAM engine');
  return { assemblyDirectory, model, synthAnnotations, producers, region, ...(policyEngine === undefined ? {} : { policyEngine }) };
}

/**
 * The run's Region: the one Region every stack is placed in (its templates carry it), else the given or default one.
 * A `--region` that names another than the stacks' one is refused: the run would mix two Regions.
 */
function runRegion(model: FlowModel, given: string | undefined, fallback: string): string {
  const stacksRegion = singleRegionOf(model.environments);
  if (stacksRegion === undefined) return fallback;
  if (given !== undefined && given !== stacksRegion) {
    throw new RegionContradictionError(
      `--region ${given} contradicts the app: every stack of it is in ${stacksRegion} (its env), which its templates and ARNs carry; ` +
        `drop --region (the run takes ${stacksRegion}) or pass --region ${stacksRegion}`,
    );
  }
  return stacksRegion;
}
