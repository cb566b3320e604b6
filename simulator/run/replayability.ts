/**
 * Whether a run's seed replays it, and if not, why: something outside the seed acted on a worker between two steps
 * (`realTimeEvents`), or a relay's catch-up stopped at its real-time limit (`relay.catchUpLimitMet`, see
 * ./relay-catch-up.ts). Either way what the seed chose next may differ from one run of the seed to the next.
 */
import type { NotReplayableCause, RealTimeEvents, RelayFigures } from './result';

/** `replayable`, and when false `notReplayableCauses`, as the result carries them. */
export function replayability(realTime: RealTimeEvents, relay: Pick<RelayFigures, 'catchUpLimitMet'>): { replayable: boolean; notReplayableCauses?: readonly NotReplayableCause[] } {
  const causes: NotReplayableCause[] = [];
  if (realTime.count > 0) causes.push('real-time-events');
  if ((relay.catchUpLimitMet ?? 0) > 0) causes.push('relay-catch-up-limit');
  return causes.length === 0 ? { replayable: true } : { replayable: false, notReplayableCauses: causes };
}
