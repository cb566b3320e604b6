/**
 * Rule: each subscriber takes every event of the types the scenario says it consumes (`consumes`, by subscriber name).
 * `expectConsumed` asks only that some subscription take a type; a subscriber whose filter policy drops a type it needs
 * (e.g. Settlement's filter naming `PaymentTaken` and not `PaymentRefunded`) passes it while another subscriber takes
 * that type. Every committed event of a type a subscriber consumes that reached its topic (the relay did not give up on
 * it) and that its filter policy did not take fails the run (`untaken-event`, at that subscriber), naming the type, the
 * events and the filter policy to change, unless the policy takes the type (../policy-takes-type.ts): then its other
 * conditions (on the event's content, e.g. only orders of 100 or more) refused those events, by the app's design.
 */
import type { RunWideCheck } from '../run-check';
import type { Finding } from '../invariants';
import { policyTakesType } from '../policy-takes-type';
import { fixFor } from '../violation-cause';

/** How many event ids a violation names. */
const IDS_SHOWN = 5;

export const subscriberConsumesRule: RunWideCheck = {
  name: 'subscriber-consumes',
  checks: 'the filter policy of each subscriber the scenario names in consumes takes the types named for it (every committed event of such a type reached it, but those its content conditions refused)',
  scope: 'run',
  check: (facts) => {
    const givenUp = new Set(facts.ledger.relayGaveUp.flatMap((entry) => entry.eventIds));
    const findings: Finding[] = [];
    for (const [name, types] of Object.entries(facts.consumes ?? {})) {
      const subscriber = facts.subscribers.find((candidate) => candidate.view.name === name);
      if (subscriber === undefined) continue; // a name no subscriber has is the CLI's usage error (simulate-command.ts)
      const subscription = subscriber.view.subscription;
      const reaching = facts.model.relays.filter((relay) => relay.targetTopic === subscription.topic).flatMap((relay) => facts.committed.eventIdsByRelay.get(relay.key) ?? []);
      for (const type of types) {
        // the policy takes the type: the events it refused, its content conditions refused (the subscriber's design)
        if (policyTakesType(subscription.filterPolicy, subscription.filterPolicyScope, type)) continue;
        const dropped = [...new Set(reaching)].filter((id) => !givenUp.has(id) && !subscriber.matched.has(id) && facts.committed.eventsById.get(id)?.type === type).sort();
        if (dropped.length === 0) continue;
        const policy = subscription.filterPolicy === undefined ? 'none' : `${JSON.stringify(subscription.filterPolicy)} on the message ${subscription.filterPolicyScope === 'MessageBody' ? 'body' : 'attributes'}`;
        findings.push({
          kind: 'untaken-event',
          subscriber: name,
          detail:
            `${dropped.length} committed ${type} event(s) reached the topic and ${name}'s filter policy did not take them ` +
            `(${dropped.slice(0, IDS_SHOWN).join(', ')}${dropped.length > IDS_SHOWN ? ', ...' : ''}), though the scenario says ${name} consumes ${type} (consumes); ` +
            `its filter policy: ${policy}. Add ${type} to ${name}'s filter policy, or remove ${type} from consumes.${name} if ${name} does not need it`,
          causes: [
            {
              kind: 'filter-drops-consumed-type',
              subscriber: name,
              eventIds: dropped,
              invocations: [],
              requests: [],
              ...(subscription.filterPolicy === undefined
                ? {}
                : { setting: { name: 'filterPolicy', value: subscription.filterPolicy, scope: subscription.filterPolicyScope === 'MessageBody' ? ('MessageBody' as const) : ('MessageAttributes' as const), type } }),
              fix: fixFor('filter-drops-consumed-type'),
            },
          ],
        });
      }
    }
    return findings;
  },
};
