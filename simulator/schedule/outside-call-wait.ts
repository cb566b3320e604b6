/**
 * A call outside the simulation (a third-party API, a service the simulator does not emulate) is answered in real time:
 * the seeded scheduler waits for it, as for a worker's own work, before it takes its environment's next step. A call
 * that never answers would hold the run until the stalled-worker limit (15 minutes) and end it without a verdict,
 * although on AWS a timeout around the call (`AbortSignal.timeout`, a virtual timer in the simulator) would have ended
 * it. So the wait is bounded: an invocation that waits on nothing but calls outside the simulation for
 * {@link OUTSIDE_CALL_WAIT_MS} of real time gets its virtual timers again, as if the calls had not answered yet (its
 * next timer fires, or it times out when that timer is due after the function's timeout or it has none). Whether a
 * call answered within the wait is real time's choice, not the seed's: the run says so as a real-time event (see
 * {@link outsideCallChange}), and is not replayable.
 */

/** How long, in real time, a worker waiting on nothing but calls outside the simulation is waited for. */
export const OUTSIDE_CALL_WAIT_MS = 30_000;

/** The real-time event of an invocation whose outside calls did not answer within `waitMs` (see RealTimeEvent.change). */
export function outsideCallChange(outstanding: number, waitMs: number, timers: number): string {
  return (
    `${outstanding} call(s) outside the simulation did not answer within ${waitMs / 1000} s of real time: ` +
    (timers > 0 ? 'its virtual timers went on (a timeout around the call fires)' : 'it has no virtual timer: its invocation times out')
  );
}
