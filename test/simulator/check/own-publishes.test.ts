/**
 * Only a flow's relay publishes to its event topics: an app function that publishes there with its own SNS client (its
 * change committed, its event published after) fails the run at that function, whatever a producer probe names.
 */
import { describe, expect, test } from 'vitest';
import { checkOwnPublishes, relayPublishersOf, type PublisherRole } from '../../../simulator/check/own-publishes';
import { fixFor } from '../../../simulator/check/violation-cause';
import type { FlowModel } from '../../../simulator/model/flow-model';
import type { AppPublish } from '../../../simulator/observation/observer';

// a standard flow (Pipe -> topic), an ordered flow (Pipe -> FIFO queue -> fan-out -> FIFO topic) and an alerts topic of
// the app, as a template writes them: the fan-out names its topic by `Ref` of the topic's logical id in its own stack
const resource = (key: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ key, stackName: key.split('/')[0], logicalId: key.split('/')[1], ...extra });
const modelWith = (fanOutTopic: unknown): FlowModel =>
  ({
    relays: [
      { key: 'Flow/Relay', targetTopic: 'Flow/Topic' },
      { key: 'Ordered/Relay', targetQueue: { queue: 'Ordered/RelayQueue' } },
    ],
    eventSourceMappings: [
      { key: 'Ordered/FanOutMapping', queue: 'Ordered/RelayQueue', function: 'Ordered/FanOut' },
      { key: 'Shop/LedgerMapping', queue: 'Shop/LedgerQueue', function: 'Shop/Ledger' },
    ],
    functions: [
      resource('Ordered/FanOut', { environment: { IEF_ORDERED_TOPIC_ARN: fanOutTopic } }),
      resource('Shop/Ledger', { environment: {} }),
      resource('Shop/Reserve', { environment: { TOPIC_ARN: { Ref: 'Topic' } } }),
    ],
    topics: [resource('Flow/Topic'), resource('Ordered/Topic', { topicName: 'events.fifo' }), resource('Shop/Alerts')],
  }) as unknown as FlowModel;
const model = modelWith({ Ref: 'Topic' });

const arnOf = (topic: string): string => `arn:aws:sns:eu-west-1:000000000000:${topic.replace('/', '-')}`;
const publish = (functionKey: string, topic: string, eventId: string | undefined, invocation = `${functionKey}#1`): AppPublish => ({
  functionKey,
  functionName: functionKey,
  invocation,
  topic,
  topicArn: arnOf(topic),
  ...(eventId === undefined ? {} : { eventId }),
});
const roleOf = ({ functionKey }: AppPublish): PublisherRole => (functionKey === 'Shop/Ledger' ? { subscriber: 'StockLedger' } : { producer: 'ReserveStock' });

describe('relayPublishersOf', () => {
  test("names the ordered path's fan-out as a relay function and both flows' topics as event topics, not the app's other topic", () => {
    const relay = relayPublishersOf(model);

    expect([...relay.relayFunctions]).toEqual(['Ordered/FanOut']);
    expect([...relay.eventTopics].sort()).toEqual(['Flow/Topic', 'Ordered/Topic']);
  });

  test('follows a `Fn::GetAtt [topic, TopicArn]` and a `Ref` of a topic with the same logical id in another stack to the topic of the right stack', () => {
    expect([...relayPublishersOf(modelWith({ 'Fn::GetAtt': ['Topic', 'TopicArn'] })).eventTopics].sort()).toEqual(['Flow/Topic', 'Ordered/Topic']);
    // `Topic` is also Flow's logical id: only the fan-out's own stack's is meant
    expect([...relayPublishersOf(modelWith({ Ref: 'Alerts' })).eventTopics].sort()).toEqual(['Flow/Topic']);
  });

  test('names no topic for a value that names none (an unknown logical id, an import)', () => {
    expect([...relayPublishersOf(modelWith({ Ref: 'Missing' })).eventTopics]).toEqual(['Flow/Topic']);
    expect([...relayPublishersOf(modelWith({ 'Fn::ImportValue': 'OrderedTopicArn' })).eventTopics]).toEqual(['Flow/Topic']);
  });
});

describe('checkOwnPublishes', () => {
  test("fails a producer that publishes to the flow's event topic itself, naming the function, the topic, the count, the events and the fix", () => {
    // GIVEN a producer that commits through the outbox, then publishes a copy of each event to the flow's topic itself
    const publishes = Array.from({ length: 7 }, (_, index) => publish('Shop/Reserve', 'Flow/Topic', `reserved-res-${index + 1}.standard`, `Shop/Reserve#${index + 1}`));

    const findings = checkOwnPublishes(publishes, relayPublishersOf(model), roleOf);

    expect(findings).toEqual([
      {
        kind: 'dual-write',
        detail: expect.stringContaining(
          `Shop/Reserve published 7 message(s) to the flow's event topic ${arnOf('Flow/Topic')} with its own SNS client (events reserved-res-1.standard, reserved-res-2.standard, reserved-res-3.standard, reserved-res-4.standard, reserved-res-5.standard and 2 more): no outbox committed them`,
        ),
        causes: [
          {
            kind: 'published-to-event-topic',
            producer: 'ReserveStock',
            eventIds: ['reserved-res-1.standard', 'reserved-res-2.standard', 'reserved-res-3.standard', 'reserved-res-4.standard', 'reserved-res-5.standard'],
            invocations: [],
            requests: [],
            fix: fixFor('published-to-event-topic'),
          },
        ],
      },
    ]);
    expect(fixFor('published-to-event-topic')).toMatch(/tx\.emit.*transactWrite.*never publish to the flow's event topic yourself/);
  });

  test("charges a consumer that publishes to the ordered topic at its subscriber, and neither the fan-out nor a publish to a topic no relay feeds", () => {
    const publishes = [
      publish('Ordered/FanOut', 'Ordered/Topic', 'reserved-res-1'),
      publish('Ordered/FanOut', 'Flow/Topic', 'reserved-res-1.standard'),
      publish('Shop/Reserve', 'Shop/Alerts', undefined),
      publish('Shop/Ledger', 'Ordered/Topic', 'stock-low-sku-1'),
      publish('Shop/Ledger', 'Ordered/Topic', 'stock-low-sku-1', 'Shop/Ledger#2'),
    ];

    const findings = checkOwnPublishes(publishes, relayPublishersOf(model), roleOf);

    expect(findings).toMatchObject([
      {
        kind: 'dual-write',
        subscriber: 'StockLedger',
        detail: expect.stringMatching(/^Shop\/Ledger published 2 message\(s\) to the flow's event topic \S+Ordered-Topic with its own SNS client \(events stock-low-sku-1\)/),
        causes: [{ kind: 'published-to-event-topic', subscriber: 'StockLedger', eventIds: ['stock-low-sku-1'] }],
      },
    ]);
  });

  test('says the outbox committed the events too when it did: each is then published twice, by the relay and by the function itself', () => {
    // GIVEN a producer that publishes the very events its outbox commits (same ids), and one it never commits
    const publishes = [publish('Shop/Reserve', 'Flow/Topic', 'reserved-res-1'), publish('Shop/Reserve', 'Flow/Topic', 'reserved-res-2', 'Shop/Reserve#2')];
    const committed = new Set(['reserved-res-1', 'reserved-res-2']);

    const [allCommitted] = checkOwnPublishes(publishes, relayPublishersOf(model), roleOf, (eventId) => committed.has(eventId));
    const [someCommitted] = checkOwnPublishes([...publishes, publish('Shop/Reserve', 'Flow/Topic', 'reserved-res-3', 'Shop/Reserve#3')], relayPublishersOf(model), roleOf, (eventId) => committed.has(eventId));

    expect(allCommitted?.detail).toContain('(events reserved-res-1, reserved-res-2): the outbox committed them too and Shop/Reserve also published them itself, so each reaches the topic twice');
    expect(allCommitted?.detail).not.toContain('no outbox committed');
    expect(someCommitted?.detail).toContain('the outbox committed 2 of them too and Shop/Reserve also published them itself, so each reaches the topic twice; no outbox committed the other 1');
  });

  test('counts a topic a relay function published to as an event topic, though its environment names none', () => {
    // GIVEN a fan-out told its topic otherwise (createOrderedFanOut's topicArn), and a consumer that publishes there too
    const publishes = [publish('Ordered/FanOut', 'Shop/Alerts', 'reserved-res-1'), publish('Shop/Ledger', 'Shop/Alerts', 'stock-low-sku-1')];

    const findings = checkOwnPublishes(publishes, relayPublishersOf(modelWith({ Ref: 'Missing' })), roleOf);

    expect(findings).toMatchObject([{ kind: 'dual-write', subscriber: 'StockLedger', causes: [{ kind: 'published-to-event-topic', eventIds: ['stock-low-sku-1'] }] }]);
  });

  test('passes a run whose only publishes are the relay\'s', () => {
    expect(checkOwnPublishes([publish('Ordered/FanOut', 'Ordered/Topic', 'reserved-res-1')], relayPublishersOf(model), roleOf)).toEqual([]);
  });
});
