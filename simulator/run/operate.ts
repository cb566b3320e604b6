/**
 * The run's fourth stage, after the run settled: the last-receive probes' events redriven from the dead-letter queues
 * (./last-receive-probe.ts), the run settled again; then the scenario's operator: resolve the blocked steps, redrive the
 * dead letters (./operator.ts), let the run settle again; at most {@link MAX_OPERATOR_PASSES} passes. Neither after a
 * run cut off by its limits.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startOperatorClient } from '../iam/operator-access';
import type { RoundsOutcome } from '../observation/run-facts';
import type { BuiltRun } from './build';
import { readCommittedOutbox } from './committed-events';
import type { DrivenRun } from './drive';
import { MAX_OPERATOR_PASSES, noOperatorFigures, operatorPass, type OperatorDecision, type OperatorFigures } from './operator';
import type { SimulationOptions } from './options';
import type { PreparedApp } from './prepare';
import { runRounds } from './rounds';
import type { PhaseTimer } from './run-profile';
import { redriveProbes, type LastReceiveProbeOutcome } from './last-receive-probe';

/** What the operator stage did, and how the run ended after it. */
export interface OperatedRun {
  /** The scenario's decisions, when the operator acted (undefined: no operator, or turned off). */
  readonly decisions?: Readonly<Record<string, OperatorDecision>>;
  readonly operator?: OperatorFigures;
  /** How the last rounds ended. */
  readonly roundsOutcome: RoundsOutcome;
  /** Rounds in all, the drive's and the operator's. */
  readonly rounds: number;
  /** What became of each probed subscriber's last-receive probe (./last-receive-probe.ts). */
  readonly lastReceiveProbes: readonly LastReceiveProbeOutcome[];
}

/** Runs the operator's passes (see the module comment). */
export async function operateRun(options: SimulationOptions, app: PreparedApp, built: BuiltRun, driven: DrivenRun, phases: PhaseTimer): Promise<OperatedRun> {
  const { model } = app;
  const { flow, client, clock, ledger } = built;
  let roundsOutcome = driven.roundsOutcome;
  let rounds = roundsOutcome.rounds;
  const documents = DynamoDBDocumentClient.from(client);
  const decisions = options.operator === false ? undefined : options.scenario?.operator;
  const operator = decisions !== undefined ? noOperatorFigures() : undefined;
  // the probes' events failed at every receive are the run's doing: redriven whatever the scenario's operator
  const probes = built.endProbes();
  // a run cut off before the redrive: the event may still be on its queue, its consumer is not blamed unless its own
  // answer acknowledged the event at a receive the run refused
  let lastReceiveProbes: LastReceiveProbeOutcome[] = probes.map(({ subscriber, eventId, lastReceive }) =>
    eventId === undefined
      ? { subscriber, state: 'not-chosen', redriven: 0, refused: [] }
      : { subscriber, eventId, state: 'cut-off', ...(lastReceive === undefined ? {} : { lastReceive }), redriven: 0, refused: [] },
  );
  lastReceiveProbes = lastReceiveProbes.map((outcome, index) => {
    const acknowledgedAt = probes[index]?.acknowledged?.[0];
    return acknowledgedAt === undefined || outcome.state === 'not-chosen' ? outcome : { ...outcome, state: 'acknowledged', acknowledgedAt };
  });
  if (roundsOutcome.cutOff === undefined && probes.length > 0) {
    lastReceiveProbes = await redriveProbes(probes, flow.subscribers, { documents, clock }, ledger.expired);
    if (lastReceiveProbes.some((probe) => probe.redriven > 0)) {
      roundsOutcome = await runRounds(flow, driven.relays, ledger, clock, undefined, driven.roundsOptions);
      rounds += roundsOutcome.rounds;
    }
  }
  if (decisions !== undefined && operator !== undefined) {
    const operatorRole = options.scenario?.operatorRole;
    const operatorClient =
      operatorRole !== undefined && flow.access !== undefined && model.access !== undefined
        ? await startOperatorClient(model.access, flow.access, operatorRole, built.clientConfig, flow.transactionConflicts)
        : undefined;
    try {
      for (let pass = 1; pass <= MAX_OPERATOR_PASSES && roundsOutcome.cutOff === undefined; pass += 1) {
        const { eventsById } = await readCommittedOutbox(model, flow, client);
        const resolved = await operatorPass(flow.subscribers, decisions, {
            client: operatorClient?.client ?? client,
            documents,
            clock,
            eventsById,
            // the checks name a TRY_AGAIN of a step whose effect had been applied as the cause of its repeat
            onResolved: (subscriber, eventId, step, status) => built.attribution.onOperatorResolution(subscriber, eventId, step, status),
          }, operator);
        if (resolved === 0) break;
        roundsOutcome = await runRounds(flow, driven.relays, ledger, clock, undefined, driven.roundsOptions);
        rounds += roundsOutcome.rounds;
      }
    } finally {
      await operatorClient?.stop();
    }
  }
  phases.ended('operator');
  return { ...(decisions === undefined ? {} : { decisions }), ...(operator === undefined ? {} : { operator }), roundsOutcome, rounds, lastReceiveProbes };
}
