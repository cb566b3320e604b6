/**
 * Waits until the deployed flow is quiet after the run's commands: every queue of a subscriber that takes run events empty (nothing visible, in
 * flight or delayed), its dead-letter queues' counts unchanged since the last look, every run event its filter takes
 * seen applied or dead-lettered, and no relay dead-letter queue above its count before the run; twice in a row.
 * - Applied: by the scenario's effect probe (per event: {@link openEvents}); for a subscriber without a probe (or whose
 *   probe threw), by its inbox records of the run's events, read by their exact keys. A subscriber that keeps no inbox
 *   and has no probe (aggregate mode) cannot be seen: it does not hold the wait, and the verdict says it is unproven.
 * - Dead-lettered: the run's event is itself in a dead-letter queue (read, matched by exact event id, when the queue
 *   holds messages and events are still open, whatever its count before the run: a dead letter may have left it
 *   meanwhile, a redrive): a dead letter of real traffic or another run stands in for none of the run's. A queue that
 *   cannot be read whole (messages held by another reader) holds the wait.
 * - Acknowledged without its effect: a subscriber whose queue is empty and whose inbox holds every run event it took
 *   (or its DLQs do) holds the wait only for a bounded grace ({@link ACKNOWLEDGED_GRACE_SECONDS}: an effect may land
 *   after the record) though its probe does not see the effects: then its handler returned without them, and the
 *   checks say so (`effect-count`); while only some are in its inbox, the wait says how many.
 * - A subscriber whose filter takes none of the run's events does not hold the wait: its queues' own traffic is not
 *   the run's.
 * - A relay dead-letter queue above its count before the run holds a batch the pipe gave up on: its events never
 *   arrive, and which they are is not in the message; the wait runs to its time limit naming it.
 * - Other traffic: messages on the queue of a subscriber whose inbox (or DLQs) holds every run event it took hold the
 *   wait (a duplicate not yet applied would be an effect applied twice), but when they are all it waits for at the time
 *   limit, the wait ends naming them ({@link HeldByOtherTraffic}): the checks run, and the verdict is NOT PROVEN.
 * Polls every `pollSeconds`, tells each look to `onProgress` (what it still waits for), and gives up after
 * `timeoutSeconds`, saying what it still waited for.
 */
import type { VerifyClients } from './clients';
import type { DeployedFlow, DeployedSubscriber } from './deployed-flow';
import { appliedByInbox, countsOn, DeadLettersUnreadError, deadLetterQueuesOf, messagesOn, probeEffects, readDeadLetters, takenEvents, type QueueCounts, type RunEvent } from './observe';
import type { QueueSettings } from './queue-settings';
import type { EffectTally } from '../observation/run-facts';
import type { EffectProbe } from '../run/scenario';

/** Thrown when the flow did not become quiet in time: says the limit and what it still waited for. */
export class NotQuietError extends Error {
  public override readonly name = 'NotQuietError';

  public constructor(
    /** The time limit (`--timeout`), in seconds. */
    public readonly timeoutSeconds: number,
    /** What the last look still waited for, one phrase per thing (empty: a second quiet look). */
    public readonly waitingFor: readonly string[],
  ) {
    super(`the flow was not quiet after ${timeoutSeconds}s (--timeout); still waiting for ${waitingFor.join('; ') || 'a second quiet look'}`);
  }
}

/**
 * How many of the `taken` events an effect probe's tallies show not applied yet, counted per event, whatever number of
 * tallies a probe gives an event (the example's Invoicing counts an invoice and a mail per order): the tallies are
 * grouped by the events they cover, and a group's shortfall is the largest of its tallies'. A per-event group short
 * of its effect is one open event; an aggregate group (a tally over several events, e.g. per customer) adds the
 * shortfall its per-event groups do not explain already (its open events are not known by name). Aggregate groups
 * that overlap without being equal may count an event twice: the wait then ends at its time limit, saying so.
 */
export function openEvents(tallies: readonly EffectTally[], taken: ReadonlySet<string>): number {
  const { named, unnamed } = openEventsOf(tallies, taken);
  return named.length + unnamed;
}

/**
 * The open events of {@link openEvents}: those known by name (a per-event tally short of its effect), sorted, and how
 * many more an aggregate tally's shortfall adds (not known by name).
 */
export function openEventsOf(tallies: readonly EffectTally[], taken: ReadonlySet<string>): { readonly named: readonly string[]; readonly unnamed: number } {
  const shortfalls = new Map<string, { readonly eventIds: readonly string[]; shortfall: number }>();
  for (const tally of tallies) {
    const eventIds = [...new Set(tally.eventIds.filter((id) => taken.has(id)))].sort();
    if (eventIds.length === 0) continue;
    const key = eventIds.join('\u0000');
    const group = shortfalls.get(key) ?? { eventIds, shortfall: 0 };
    group.shortfall = Math.max(group.shortfall, eventIds.length - tally.applied);
    shortfalls.set(key, group);
  }
  const openSingles = new Set([...shortfalls.values()].filter((group) => group.eventIds.length === 1 && group.shortfall > 0).map((group) => group.eventIds[0]!));
  let unnamed = 0;
  for (const group of shortfalls.values()) {
    if (group.eventIds.length > 1) unnamed += Math.max(0, group.shortfall - group.eventIds.filter((id) => openSingles.has(id)).length);
  }
  return { named: [...openSingles].sort(), unnamed };
}

/** How to wait. */
export interface SettleOptions {
  readonly timeoutSeconds: number;
  readonly pollSeconds: number;
  readonly probes: Readonly<Record<string, EffectProbe>>;
  readonly readEvents: () => Promise<ReadonlyMap<string, RunEvent>>;
  readonly onProgress: (line: string) => void;
  /** Each dead-letter queue's message count before the run's commands (the subscribers' and the relays'): a queue above it is read. */
  readonly deadLetterBaseline: ReadonlyMap<string, number>;
  /** The clock of the time limit. @default the system clock */
  readonly now?: () => number;
  /** Waits between looks. @default a timer */
  readonly pause?: (seconds: number) => Promise<void>;
  /** The subscribers' queue settings (./queue-settings.ts): what a not-applied event's retries are told by. @default not read */
  readonly queueSettings?: ReadonlyMap<string, QueueSettings>;
}

/** At most this many event ids are named per phrase (the rest counted). */
const NAMED_EVENTS = 10;

function eventList(ids: readonly string[], unnamed: number): string {
  const shown = ids.slice(0, NAMED_EVENTS).join(', ');
  const more = ids.length - Math.min(ids.length, NAMED_EVENTS) + unnamed;
  return `${shown}${more > 0 ? `${shown === '' ? '' : ', '}${more} more${unnamed > 0 ? ' (an aggregate tally: not known by name)' : ''}` : ''}`;
}

/** Said of the open events a subscriber's inbox holds while its probe does not see their effect (trial nu12, item 3). */
export const ACKNOWLEDGED_WITHOUT_EFFECT = 'acknowledged (its inbox holds their records) without the effect its probe counts: the handler returned without it';

/** A subscriber's queues, each named apart: its queue, its DLQ (the queue's redrive target), its subscription's DLQ (SNS's). */
function queueLabel(subscriber: DeployedSubscriber, url: string): string {
  const { deadLetterQueueUrl, subscriptionDeadLetterQueueUrl } = subscriber.deployment;
  if (url === deadLetterQueueUrl && url === subscriptionDeadLetterQueueUrl) return `${subscriber.name}'s DLQ (also its subscription's)`;
  if (url === deadLetterQueueUrl) return `${subscriber.name}'s DLQ`;
  if (url === subscriptionDeadLetterQueueUrl) return `${subscriber.name}'s subscription DLQ`;
  return `${subscriber.name}'s queue`;
}

/**
 * Where a subscriber's open events are, as far as its queue's counts show (SQS does not say which message is which
 * event without receiving it, and a receive by verify would count against the message's maxReceiveCount: verify
 * never receives from a subscriber's queue). Messages in flight on the queue while their events stay unapplied are
 * being received and failing (or still running): the handler's failure is in the consumer's logs; SQS moves each to
 * the DLQ after maxReceiveCount receives, one per visibility timeout.
 */
function whereOpen(
  subscriber: DeployedSubscriber,
  open: { readonly named: readonly string[]; readonly unnamed: number },
  taken: number,
  counts: QueueCounts,
  settings: QueueSettings | undefined,
  seen: string,
  acknowledged = 0,
): string {
  const total = open.named.length + open.unnamed;
  const onQueue = counts.visible + counts.inFlight + counts.delayed;
  const queue = queueLabel(subscriber, subscriber.deployment.queueUrl);
  const head = `${subscriber.name}: ${total} of ${taken} event(s) ${seen} (${eventList(open.named, open.unnamed)})`;
  const notOnQueue = `none on ${queue} yet (in the relay, the pipe's retries, or SNS's delivery)`;
  if (onQueue === 0 && acknowledged > 0) return `${head}: ${acknowledged} of them ${ACKNOWLEDGED_WITHOUT_EFFECT}; the rest ${notOnQueue}`;
  if (onQueue === 0) return `${head}: ${notOnQueue}`;
  const retries =
    settings === undefined
      ? ''
      : settings.maxReceiveCount === undefined
        ? `; each receive that fails comes back after the visibility timeout of ${settings.visibilityTimeoutSeconds} s, and the queue has no redrive policy: it is retried until its retention ends`
        : `; a receive that fails comes back after the visibility timeout of ${settings.visibilityTimeoutSeconds} s, and SQS moves it to the DLQ after maxReceiveCount ${settings.maxReceiveCount} receives (up to ${settings.maxReceiveCount * settings.visibilityTimeoutSeconds} s after its first)`;
  const state = `${counts.inFlight} in flight (received by its consumer, not deleted: being processed, or failing and retried: the consumer's logs say why)${counts.visible > 0 ? `, ${counts.visible} waiting to be received` : ''}${counts.delayed > 0 ? `, ${counts.delayed} delayed` : ''}`;
  const where = onQueue >= total ? `on ${queue}, as its counts show` : `${onQueue} of them on ${queue}, ${total - onQueue} not on it yet (in the relay, the pipe's retries, or SNS's delivery)`;
  return `${head}: ${where}; ${queue} holds ${onQueue} message(s): ${state}${retries}`;
}

/** The run's events of `taken` found in the subscriber's dead-letter queues (exact event ids). */
async function deadLetteredRunEvents(clients: VerifyClients, subscriber: DeployedSubscriber, events: ReadonlyMap<string, RunEvent>): Promise<Set<string>> {
  return new Set((await readDeadLetters(clients, subscriber, events)).flatMap((finding) => (finding.eventId === undefined ? [] : [finding.eventId])));
}

/**
 * What one look found still moving, one phrase per thing: `waiting`, and apart (`otherTraffic`) the queues holding
 * messages of a subscriber whose inbox (or dead-letter queues) holds every run event it took: another run's or other
 * traffic, or a duplicate of a run event not yet applied. Both empty when quiet.
 */
interface StillMoving {
  readonly waiting: string[];
  readonly otherTraffic: string[];
  /** Subscribers whose inbox holds every run event they took while their probe does not see the effects yet, within the grace. */
  readonly grace: string[];
}

/**
 * How long the wait holds for effects a probe does not see yet though the inbox holds every run event's record
 * (review r13, R13-7: an effect written after the record, a probe reading an index that lags): the queue's visibility
 * timeout when known, else this many seconds.
 */
export const ACKNOWLEDGED_GRACE_SECONDS = 30;

/** What one look found still moving ({@link StillMoving}). */
async function stillMoving(
  clients: VerifyClients,
  flow: DeployedFlow,
  options: SettleOptions,
  previousDeadLetters: Map<string, number>,
  acknowledgedSince: Map<string, number>,
): Promise<StillMoving> {
  const waiting: string[] = [];
  const otherTraffic: string[] = [];
  const grace: string[] = [];
  const now = (options.now ?? Date.now)();
  const events = await options.readEvents();
  for (const relay of flow.flows) {
    const url = relay.relayDeadLetterQueueUrl;
    if (url === undefined) continue;
    const added = (await messagesOn(clients, url)) - (options.deadLetterBaseline.get(url) ?? 0);
    if (added > 0) {
      waiting.push(`the relay's dead-letter queue of outbox ${relay.outboxTable} (${added} batch(es) the pipe gave up on since the run began: their events never arrive, and may be the run's; dlq list --relay-dead-letter-queue ${url} gives their time range)`);
    }
  }
  // an ordered relay's own DLQs (review v11, V11-10): its fan-out or pipe gave up on a batch; named, as the flow's relay's
  for (const queue of flow.orderedRelayDeadLetterQueues ?? []) {
    const risen = (await messagesOn(clients, queue.url)) - (options.deadLetterBaseline.get(queue.url) ?? 0);
    if (risen > 0) {
      waiting.push(`ordered relay ${queue.relay}'s ${queue.which} (${risen} message(s) since the run began: their events never reach its FIFO topic, and may be the run's; ${queue.url})`);
    }
  }
  for (const subscriber of flow.subscribers) {
    // a subscriber that takes none of the run's events (its filter) has none of them on its queues: its own traffic
    // there does not hold the wait (the run's events are committed before any reaches a queue)
    const taken = takenEvents(subscriber, events);
    const counts = taken.size === 0 ? { visible: 0, inFlight: 0, delayed: 0 } : await countsOn(clients, subscriber.deployment.queueUrl);
    const onQueue = counts.visible + counts.inFlight + counts.delayed;
    const phrases: string[] = [];
    let holding = false;
    for (const url of deadLetterQueuesOf(subscriber)) {
      const count = await messagesOn(clients, url);
      holding ||= count > 0;
      const previous = previousDeadLetters.get(url);
      if (taken.size > 0 && previous !== count) {
        phrases.push(previous === undefined ? `${queueLabel(subscriber, url)} (${count} message(s) at the first look: looking again to see it unchanged)` : `${queueLabel(subscriber, url)} (its count went from ${previous} to ${count})`);
      }
      previousDeadLetters.set(url, count);
    }
    if (taken.size === 0) continue;
    const queuePhrase = onQueue > 0 ? `${queueLabel(subscriber, subscriber.deployment.queueUrl)} (${onQueue} message(s))` : undefined;
    const probe = options.probes[subscriber.name];
    const outcome = probe === undefined ? undefined : await probeEffects(clients, probe, subscriber, taken, events);
    const byProbe = outcome !== undefined && !('error' in outcome);
    // without a (working) probe: its inbox records; none kept (aggregate mode): not seen here, unproven in the verdict
    const applied = byProbe ? undefined : await appliedByInbox(clients, subscriber, taken);
    if (!byProbe && applied === undefined) {
      waiting.push(...(queuePhrase === undefined ? [] : [queuePhrase]), ...phrases);
      continue;
    }
    const openOf = (deadLettered: ReadonlySet<string>): { readonly named: readonly string[]; readonly unnamed: number } => {
      const left = new Set([...taken].filter((id) => !deadLettered.has(id)));
      return byProbe ? openEventsOf(outcome.tallies, left) : { named: [...left].filter((id) => !applied!.has(id)).sort(), unnamed: 0 };
    };
    let open = openOf(new Set());
    let deadLettered: ReadonlySet<string> = new Set();
    if (open.named.length + open.unnamed > 0 && holding) {
      try {
        deadLettered = await deadLetteredRunEvents(clients, subscriber, events);
        open = openOf(deadLettered);
      } catch (error) {
        if (!(error instanceof DeadLettersUnreadError)) throw error;
        waiting.push(...(queuePhrase === undefined ? [] : [queuePhrase]), ...phrases, `${subscriber.name}'s DLQ, to read whole (${error.message})`);
        continue;
      }
    }
    // events the probe does not see applied, with an empty queue, whose inbox records say the handler acknowledged
    // them (trial nu12, item 3): when that is every run event it took (or dead-lettered), nothing of the run is left to
    // arrive: the wait does not hold for them, and the checks name the missing effect (effect-count)
    let acknowledged = 0;
    if (byProbe && open.named.length + open.unnamed > 0 && onQueue === 0) {
      const inInbox = await appliedByInbox(clients, subscriber, taken);
      if (inInbox !== undefined) {
        if ([...taken].every((id) => inInbox.has(id) || deadLettered.has(id))) {
          // for a bounded grace (review r13, R13-7): the effect may land after the record
          const since = acknowledgedSince.get(subscriber.deployment.queueUrl) ?? now;
          acknowledgedSince.set(subscriber.deployment.queueUrl, since);
          const left = Math.ceil((options.queueSettings?.get(subscriber.deployment.queueUrl)?.visibilityTimeoutSeconds ?? ACKNOWLEDGED_GRACE_SECONDS) - (now - since) / 1000);
          if (left > 0) {
            grace.push(
              `${subscriber.name}: ${open.named.length + open.unnamed} of ${taken.size} event(s) neither applied nor dead-lettered yet (${eventList(open.named, open.unnamed)}): ` +
                `${open.named.filter((id) => inInbox.has(id)).length + open.unnamed} of them ${ACKNOWLEDGED_WITHOUT_EFFECT}; waiting up to ${left} s more for the effect (written after the record, or read from an index that lags)`,
            );
          }
          waiting.push(...phrases);
          continue;
        }
        acknowledgedSince.delete(subscriber.deployment.queueUrl);
        acknowledged = open.named.filter((id) => inInbox.has(id)).length;
      }
    }
    if (open.named.length + open.unnamed > 0) {
      // the open events, named, with where the queue's counts put them (it says the queue's messages itself)
      const seen = byProbe ? 'neither applied nor dead-lettered yet' : 'neither in its inbox nor dead-lettered yet';
      waiting.push(whereOpen(subscriber, open, taken.size, counts, options.queueSettings?.get(subscriber.deployment.queueUrl), seen, acknowledged), ...phrases);
    } else {
      // every run event it took applied: messages on its queue while its inbox (or DLQs) holds each of them are no run
      // event waiting for its first delivery (review r13, R13-3); they still hold the wait (a duplicate not yet applied
      // would be an effect applied twice), but apart: at the limit the checks run, and the verdict names them
      const inInbox = queuePhrase === undefined ? undefined : (applied ?? (await appliedByInbox(clients, subscriber, taken)));
      if (queuePhrase !== undefined && inInbox !== undefined && [...taken].every((id) => inInbox.has(id) || deadLettered.has(id))) otherTraffic.push(queuePhrase);
      else waiting.push(...(queuePhrase === undefined ? [] : [queuePhrase]));
      waiting.push(...phrases);
    }
  }
  return { waiting, otherTraffic, grace };
}

/** How the wait ended short of quiet, at its time limit, when all it still waited for was other traffic ({@link StillMoving}). */
export interface HeldByOtherTraffic {
  /** The queues, one phrase each (`<subscriber>'s queue (<n> message(s))`). */
  readonly otherTraffic: readonly string[];
}

/** The verdict's `unproven` line of a wait that ended {@link HeldByOtherTraffic} at `timeoutSeconds`. */
export function otherTrafficLine(otherTraffic: readonly string[], timeoutSeconds: number): string {
  return (
    `at the time limit (${timeoutSeconds} s), ${otherTraffic.join(', ')} still held messages after every run event its subscriber took was acknowledged (its inbox or ` +
    `dead-letter queues hold each): another run's or other traffic, or a duplicate of a run event not yet applied, whose effect, applied twice, was not counted yet; ` +
    `run verify again when no other traffic reaches that queue, or with a longer --timeout`
  );
}

/**
 * Resolves once the flow is quiet (see the module comment), to undefined; at the time limit, to
 * {@link HeldByOtherTraffic} when all it still waited for was other traffic on queues whose subscribers' inboxes hold
 * every run event they took, else rejects with {@link NotQuietError}.
 */
export async function waitUntilQuiet(clients: VerifyClients, flow: DeployedFlow, options: SettleOptions): Promise<HeldByOtherTraffic | undefined> {
  const now = options.now ?? Date.now;
  const pause = options.pause ?? ((seconds: number) => new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000)));
  const deadline = now() + options.timeoutSeconds * 1000;
  const deadLetters = new Map<string, number>();
  const acknowledgedSince = new Map<string, number>();
  let quietLooks = 0;
  let waiting: string[] = [];
  for (;;) {
    const moving = await stillMoving(clients, flow, options, deadLetters, acknowledgedSince);
    waiting = [...moving.waiting, ...moving.grace, ...moving.otherTraffic];
    quietLooks = waiting.length === 0 ? quietLooks + 1 : 0;
    if (quietLooks >= 2) return undefined;
    const left = Math.max(0, Math.round((deadline - now()) / 1000));
    options.onProgress(waiting.length === 0 ? `quiet once; looking again (${left}s left)` : `waiting for ${waiting.join('; ')} (${left}s left)`);
    if (now() >= deadline) {
      if (moving.waiting.length === 0 && moving.otherTraffic.length > 0) return { otherTraffic: moving.otherTraffic };
      // only effects in their grace: the checks name those not seen (effect-count)
      if (moving.waiting.length === 0 && moving.otherTraffic.length === 0) return undefined;
      throw new NotQuietError(options.timeoutSeconds, waiting);
    }
    await pause(options.pollSeconds);
  }
}
