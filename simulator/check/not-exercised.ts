/**
 * A run in which a subscriber received no event checked nothing of exactly-once for it: no check fails, and an OK would
 * claim what nobody exercised (e.g. `--relay-failure-rate 1`: every event on the relay's dead-letter queue, every
 * invariant holds, no consumer ran). Such a subscriber is "not exercised", and the run's verdict is NOT PROVEN (the CLI's
 * own exit code) instead of OK; a violation still wins. Not a violation: nothing the run did is wrong.
 *
 * A subscriber with a consumer is not exercised when no message was handed to it and either
 * - some committed event its subscription's filter policy takes (evaluated on the message the relay publishes, relayed
 *   or not) never reached it: the relay gave up on it, or SNS delivered none to its queue; or
 * - no subscriber received any event though events were committed: the run checked nothing at all (then a subscriber
 *   whose filter took none of them is named too: filtered out).
 * A subscriber whose filter took none of the events while others were exercised is only said in the report (`no event
 * reached ...`), as before: the scenario did not mean to reach it.
 */

/** What {@link notExercised} reads of one subscriber. */
export interface ExerciseFigures {
  readonly name: string;
  /** Whether the app has a consumer for it (an event source mapping the run runs). */
  readonly consumed: boolean;
  /** Messages handed to its consumer, every receive counted. */
  readonly deliveries: number;
  /** Committed events its subscription's filter policy takes, relayed or not. */
  readonly taken: number;
  /** Of those, the events the relay gave up on (dead-lettered or lost) before they reached its topic. */
  readonly givenUpByRelay: number;
}

/** A subscriber the run did not exercise, and why. */
export interface NotExercised {
  readonly subscriber: string;
  readonly reason: string;
}

/** The subscribers a run did not exercise (see the module comment); empty when every one that could be was. */
export function notExercised(subscribers: readonly ExerciseFigures[], committedEvents: number): NotExercised[] {
  if (committedEvents === 0) return [];
  const nothingReceived = subscribers.every((subscriber) => subscriber.deliveries === 0);
  return subscribers.flatMap(({ name, consumed, deliveries, taken, givenUpByRelay }) => {
    if (!consumed || deliveries > 0) return [];
    if (taken === 0) {
      return nothingReceived ? [{ subscriber: name, reason: `filtered out: none of the ${committedEvents} committed event(s) matched its filter policy` }] : [];
    }
    if (givenUpByRelay >= taken) {
      return [{ subscriber: name, reason: `the relay gave up on all ${taken} committed event(s) its filter takes before they reached its topic` }];
    }
    return [
      {
        subscriber: name,
        reason:
          `its filter takes ${taken} committed event(s)` +
          (givenUpByRelay > 0 ? `, the relay gave up on ${givenUpByRelay} of them,` : '') +
          ' and SNS delivered none to its queue (see the sns line: on the subscription\'s dead-letter queue, or undeliverable)',
      },
    ];
  });
}
