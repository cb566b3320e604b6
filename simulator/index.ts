/**
 * `@idempotent-event-flow/simulator`: run a synthesized flow on this machine with faults injected and check it is
 * exactly-once (docs/SIMULATOR.md). The command line is `npx idempotent-event-flow simulate`; this is its API, and
 * the types a scenario module is written against.
 *
 * @module @idempotent-event-flow/simulator
 */
export type { EffectProbe, EffectProbeContext, ProducerProbe, ProducerProbeContext, ScenarioProducer, SentMessage, SimulationScenario } from './run/scenario';
export type { SimulatedEvent } from './observation/run-facts';
export { loadScenario, ScenarioError } from './run/scenario';
export type { BusinessChange, EffectTally } from './observation/run-facts';
export type { BlockedStep, OperatorDecision, OperatorFigures, OperatorResolution } from './run/operator';
export type { SimulationOptions, SimulationProgress, UserEvent } from './run/options';
export type { RunServices, ServedRelay, ServedSubscriber } from './run/run-services';
export type { ServeActivity, ServedMessage } from './run/serve-consumer';
export type { SubscriberDeployment } from '../lambda/contract/subscriber-deployment';
export { formatProfile, type RunPhase, type RunProfile } from './run/run-profile';
export type { SchedulerFigures, SchedulerTimings, StepKind } from './schedule/schedule-types';
export { DEFAULT_FAULT_RATES, SimulationOptionError } from './run/options';
export type { FaultKind, FaultRates } from './faults/fault-plan';
export type { ConflictingOperation, TransactionConflictFigures } from './aws/transaction-conflicts';
export type { AccessDenial, GrantedPermission, IamFigures } from './iam/access-types';
export type { ProducerFailure, ProducerFigures, ProducerFiguresOf } from './observation/run-facts';
export type { SendFigures, SendRepeat } from './check/repeated-sends';
export type { SynthAnnotation } from './model/synth-annotations';
export type { RealTimeEvent } from './schedule/schedule-types';
export type { RealTimeEvents } from './run/result';
export { NothingToSimulateError, runSimulation, type IamReport, type RelayFigures, type SimulationResult, type SubscriberReport } from './run/simulation';
export type { Violation, ViolationKind } from './check/invariants';
export type { DeadLetterFinding } from './check/dead-letters';
export { FAILURE_PATHS, type FailurePath, type FailurePathCounts, type FailurePathsNotMet, type NotSteeredFailurePaths } from './check/failure-paths';
export { runVerdict, type RunVerdict } from './run/verdict';
export type { AggregateOrderCoverage } from './check/aggregate-order-coverage';
export { formatSummary } from './report/summary';
export { historyMark, type HistoryKey, type HistoryOperation } from './check/history';
export type { AssemblySource } from './model/assembly-cache';
export type { RunOutputs } from './model/run-outputs';
