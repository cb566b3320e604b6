/**
 * Waits until the deployed flow is quiet after the run's commands: every subscriber's queue empty (nothing visible, in
 * flight or delayed), its dead-letter queues' counts unchanged since the last look, and every run event its filter
 * takes either seen applied by the scenario's effect probe or matched by a dead letter the run added (the count above
 * the one before the run: the relay caught up, an event still in the pipe is neither); twice in a row. A subscriber
 * without an effect probe is quiet when its queues are: its events still in the relay are not seen. Polls every `pollSeconds`, tells each look to `onProgress`
 * (what it still waits for), and gives up after `timeoutSeconds`, saying what it still waited for.
 */
import type { VerifyClients } from './clients';
import type { DeployedFlow } from './deployed-flow';
import { deadLetterQueuesOf, messagesOn, probeEffects, takenEvents, type RunEvent } from './observe';
import type { EffectProbe } from '../run/scenario';

/** Thrown when the flow did not become quiet in time. */
export class NotQuietError extends Error {
  public override readonly name = 'NotQuietError';
}

/** How to wait. */
export interface SettleOptions {
  readonly timeoutSeconds: number;
  readonly pollSeconds: number;
  readonly probes: Readonly<Record<string, EffectProbe>>;
  readonly readEvents: () => Promise<ReadonlyMap<string, RunEvent>>;
  readonly onProgress: (line: string) => void;
  /** Each dead-letter queue's message count before the run's commands: only what the run added counts. */
  readonly deadLetterBaseline: ReadonlyMap<string, number>;
  /** The clock of the time limit. @default the system clock */
  readonly now?: () => number;
  /** Waits between looks. @default a timer */
  readonly pause?: (seconds: number) => Promise<void>;
}

/** What one look found still moving: one phrase per thing, empty when quiet. */
async function stillMoving(clients: VerifyClients, flow: DeployedFlow, options: SettleOptions, previousDeadLetters: Map<string, number>): Promise<string[]> {
  const waiting: string[] = [];
  const events = await options.readEvents();
  for (const subscriber of flow.subscribers) {
    const onQueue = await messagesOn(clients, subscriber.deployment.queueUrl);
    if (onQueue > 0) waiting.push(`${subscriber.name}'s queue (${onQueue} message(s))`);
    let deadLetters = 0;
    for (const url of deadLetterQueuesOf(subscriber)) {
      const count = await messagesOn(clients, url);
      deadLetters += Math.max(0, count - (options.deadLetterBaseline.get(url) ?? 0));
      if (previousDeadLetters.get(url) !== count) waiting.push(`${subscriber.name}'s dead-letter queue (its count moved to ${count})`);
      previousDeadLetters.set(url, count);
    }
    const probe = options.probes[subscriber.name];
    const taken = takenEvents(subscriber, events);
    if (probe === undefined || taken.size === 0) continue;
    const outcome = await probeEffects(clients, probe, subscriber, taken, events);
    if ('error' in outcome) continue;
    // per tally, the events whose effect is not there yet (an aggregate tally counts several events)
    const open = outcome.tallies.reduce((sum, tally) => sum + Math.max(0, tally.eventIds.filter((id) => taken.has(id)).length - tally.applied), 0);
    if (open > deadLetters) waiting.push(`${subscriber.name}: ${open - deadLetters} of ${taken.size} event(s) neither applied nor dead-lettered yet (in the relay or on the way)`);
  }
  return waiting;
}

/** Resolves once the flow is quiet (see the module comment); rejects with {@link NotQuietError} at the time limit. */
export async function waitUntilQuiet(clients: VerifyClients, flow: DeployedFlow, options: SettleOptions): Promise<void> {
  const now = options.now ?? Date.now;
  const pause = options.pause ?? ((seconds: number) => new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000)));
  const deadline = now() + options.timeoutSeconds * 1000;
  const deadLetters = new Map<string, number>();
  let quietLooks = 0;
  let waiting: string[] = [];
  for (;;) {
    waiting = await stillMoving(clients, flow, options, deadLetters);
    quietLooks = waiting.length === 0 ? quietLooks + 1 : 0;
    if (quietLooks >= 2) return;
    const left = Math.max(0, Math.round((deadline - now()) / 1000));
    options.onProgress(waiting.length === 0 ? `quiet once; looking again (${left}s left)` : `waiting for ${waiting.join('; ')} (${left}s left)`);
    if (now() >= deadline) {
      throw new NotQuietError(`the flow was not quiet after ${options.timeoutSeconds}s (--timeout); still waiting for ${waiting.join('; ') || 'a second quiet look'}`);
    }
    await pause(options.pollSeconds);
  }
}
