/**
 * An aggregate consumer's event applied again after its aggregate's processed list forgot it: more newer events of the
 * aggregate were applied between its first application and the redelivery than the list keeps (`maxProcessedMessages`,
 * read from the lists the runtime wrote). The documented bound of aggregate mode, named as such, with the upstream that
 * flooded the list when one did; never a plain `applied-again` blamed on a correct consumer.
 */
import { describe, expect, test } from 'vitest';
import { floodUpstream, upstreamOf, type UpstreamFacts } from '../../../simulator/check/effect-causes';
import { effectsRule } from '../../../simulator/check/rules/effects';
import type { ObservableRunFacts } from '../../../simulator/check/run-check';
import { subscriberFacts } from '../../../simulator/check/subscriber-facts';
import { fixFor, type CauseKind, type ViolationCause } from '../../../simulator/check/violation-cause';
import { settingText } from '../../../simulator/report/summary';
import { attributedRun as run } from './attribution-run';
import { receiveAll, subscriberKit } from './check-kit';

/** Loyalty's commit of its aggregate CUSTOMER#c on table Ledger: the processed list as the runtime wrote it, newest last. */
function commitOf(...listed: string[]) {
  return {
    body: { TableName: 'Ledger', Item: { pk: { S: 'CUSTOMER#c' }, points: { N: String(10 * listed.length) }, processedMessages: { L: listed.map((eventId) => ({ S: `${eventId} 0123456789abcdef` })) } } },
    operation: 'PutItem',
    applied: true,
  };
}

/**
 * e-1 applied (invocation #1), then e-2..e-4 (#2..#4) with a list of 3 (maxProcessedMessages 3 in the handler's code):
 * e-4's commit drops e-1; e-1's redelivery (#5, receive 2) is not recognised and is applied again.
 */
function overrun() {
  const flow = run({ subscriber: 'Loyalty', mode: 'aggregate' });
  flow.invoke([['e-1', 1]], [commitOf('e-1')]);
  flow.invoke([['e-2', 1]], [commitOf('e-1', 'e-2')]);
  flow.invoke([['e-3', 1]], [commitOf('e-1', 'e-2', 'e-3')]);
  flow.invoke([['e-4', 1]], [commitOf('e-2', 'e-3', 'e-4')]);
  flow.later(300);
  flow.invoke([['e-1', 2]], [commitOf('e-3', 'e-4', 'e-1')]);
  return flow;
}

describe('processed-list-overrun', () => {
  test('an aggregate event applied again after more newer events of its aggregate than its processed list keeps: the setting read from the lists the runtime wrote, the newer events counted, the aggregate named', () => {
    const flow = overrun();

    const causes = flow.attribution.causes('Fn', ['e-1']);
    expect(causes).toHaveLength(1);
    expect(causes[0]).toMatchObject({
      kind: 'processed-list-overrun',
      subscriber: 'Loyalty',
      eventIds: ['e-1'],
      invocations: [
        { number: 1, receive: 1, atSeconds: 0, role: 'applied' },
        { number: 5, receive: 2, atSeconds: 300, role: 'applied-again' },
      ],
      setting: { name: 'maxProcessedMessages', value: 3, newerApplied: 3 },
      aggregate: { table: 'Ledger', key: { pk: 'CUSTOMER#c' } },
      fix: fixFor('processed-list-overrun'),
    });
    expect(fixFor('processed-list-overrun')).toContain('raise maxProcessedMessages');
    expect(flow.attribution.cause('Fn', ['e-1'])).toBe(
      'event e-1: applied by invocation #1 (receive 1, at +0 s); applied again by invocation #5 (receive 2, at +300 s): ' +
        'aggregate Ledger {"pk":"CUSTOMER#c"} had forgotten it: 3 newer events of the aggregate were applied after invocation #1 (receive 1, at +0 s) applied it, ' +
        'and its processed list keeps the newest 3 (maxProcessedMessages 3, read from the lists the runtime wrote), so the redelivery was not recognised (the bound aggregate mode documents)',
    );
    // the events that pushed it out, for the upstream that sent them (see floodUpstream)
    expect(flow.attribution.appliedBetween('Fn', 'e-1')).toEqual(['e-2', 'e-3', 'e-4']);
    // the text report's cause line
    expect(settingText(causes[0]!.setting!)).toBe('maxProcessedMessages 3, 3 newer events of the aggregate applied before the redelivery');
  });

  test('a commit applied again whose list still had room (fewer newer events than the list keeps): not an overrun, the plain applied-again', () => {
    // GIVEN lists of up to 3, and e-1 no longer listed after ONE newer event: no bound of the runtime drops it so
    const flow = run({ subscriber: 'Loyalty', mode: 'aggregate' });
    flow.invoke([['x-1', 1]], [commitOf('x-1')]);
    flow.invoke([['x-2', 1]], [commitOf('x-1', 'x-2')]);
    flow.invoke([['e-1', 1]], [commitOf('x-1', 'x-2', 'e-1')]);
    flow.invoke([['e-2', 1]], [commitOf('e-2')]);
    flow.invoke([['e-1', 2]], [commitOf('e-2', 'e-1')]);

    const causes = flow.attribution.causes('Fn', ['e-1']);
    expect(causes.map((cause) => cause.kind)).toEqual(['applied-again']);
    expect(causes[0]!.setting).toBeUndefined();
    expect(flow.attribution.appliedBetween('Fn', 'e-1')).toEqual([]);
  });
});

describe('floodUpstream: the upstream of the newer events that pushed an event out of its aggregate\'s processed list', () => {
  function cause(kind: CauseKind, who: { subscriber?: string; producer?: string }, eventIds: string[]): ViolationCause {
    return { kind, ...who, eventIds, invocations: [], requests: [], fix: fixFor(kind) };
  }
  /** Billing published i-2..i-4 with an outbox write of its own (each redelivery to it published them again). */
  const facts: UpstreamFacts = {
    repeatedCommands: [],
    outboxWriters: [{ cause: cause('outbox-write-outside-transaction', { subscriber: 'Billing' }, []), eventIds: new Set(['i-2', 'i-3', 'i-4']) }],
    emittedFor: () => [],
  };
  const overran = cause('processed-list-overrun', { subscriber: 'Loyalty' }, ['i-1']);

  test('the newer events another subscriber published with an outbox write of its own: that subscriber and its fix, after the overrun', () => {
    const flood = floodUpstream([overran], () => ['i-2', 'i-3', 'i-4'], (eventIds, reading) => upstreamOf(facts, 'Loyalty', eventIds, reading));
    expect(flood?.causes).toEqual([{ ...facts.outboxWriters[0]!.cause, eventIds: ['i-2', 'i-3', 'i-4'] }]);
    expect(flood?.text).toBe(
      'upstream of Loyalty: the subscriber Billing published the newer events that pushed event i-1 out of its aggregate\'s processed list (i-2, i-3, i-4) with an outbox write of its own, outside its transaction, ' +
        `so each redelivery to it published them again under new ids: ${fixFor('outbox-write-outside-transaction')}`,
    );
  });

  test('hundreds of newer events: the first five named, and how many more', () => {
    const many = Array.from({ length: 120 }, (_, index) => `i-${index + 2}`);
    const flooded: UpstreamFacts = { ...facts, outboxWriters: [{ ...facts.outboxWriters[0]!, eventIds: new Set(many) }] };
    const flood = floodUpstream([overran], () => many, (eventIds, reading) => upstreamOf(flooded, 'Loyalty', eventIds, reading));
    expect(flood?.text).toContain('(i-2, i-3, i-4, i-5, i-6 and 115 more)');
    // and as many events pushed out: the first five named, and how many more
    const forgotten = Array.from({ length: 8 }, (_, index) => ({ ...overran, eventIds: [`f-${index}`] }));
    const both = floodUpstream(forgotten, () => many, (eventIds, reading) => upstreamOf(flooded, 'Loyalty', eventIds, reading));
    expect(both?.text).toContain("pushed events f-0, f-1, f-2, f-3, f-4 and 3 more out of its aggregate's processed list (i-2, i-3, i-4, i-5, i-6 and 115 more)");
    expect(flood?.causes[0]?.eventIds).toEqual(many);
  });

  test('newer events the app sent as it should (nothing upstream), or no overrun told: none', () => {
    expect(floodUpstream([overran], () => ['n-2', 'n-3'], (eventIds, reading) => upstreamOf(facts, 'Loyalty', eventIds, reading))).toBeUndefined();
    expect(floodUpstream([cause('applied-again', { subscriber: 'Loyalty' }, ['i-1'])], () => ['i-2'], (eventIds, reading) => upstreamOf(facts, 'Loyalty', eventIds, reading))).toBeUndefined();
  });
});

describe('the effect-count rule: a count one too many at an aggregate whose list a flood from upstream overran', () => {
  test('names the overrun at the subscriber, then the upstream that sent the newer events (though the consumer\'s own story accounts for the count)', () => {
    // GIVEN Billing (the kit's subscriber) applied i-1 twice, its aggregate's list overrun by i-2, i-3, which Invoicer published with an outbox write of its own
    const kit = subscriberKit();
    kit.deliver('i-1');
    for (const message of receiveAll(kit.queue)) kit.queue.delete(message.receiptHandle);
    const overran: ViolationCause = {
      kind: 'processed-list-overrun',
      subscriber: 'Billing',
      eventIds: ['i-1'],
      invocations: [
        { number: 1, receive: 1, atSeconds: 0, role: 'applied' },
        { number: 4, receive: 2, atSeconds: 300, role: 'applied-again' },
      ],
      requests: [],
      setting: { name: 'maxProcessedMessages', value: 2, newerApplied: 2 },
      aggregate: { table: 'Ledger', key: { pk: 'CUSTOMER#c' } },
      fix: fixFor('processed-list-overrun'),
    };
    const subscriber = subscriberFacts({
      view: kit.subscriber,
      deadLetters: [],
      matched: new Set(['i-1']),
      applied: new Set(['i-1']),
      operator: 'none',
      effectProbe: { tallies: [{ subject: 'points of c', eventIds: ['i-1'], applied: 2 }] },
      causes: {
        applyCause: () => 'event i-1: applied again by invocation #4 (receive 2, at +300 s): aggregate Ledger {"pk":"CUSTOMER#c"} had forgotten it',
        applyCauses: () => [overran],
        shortCause: () => undefined,
        shortCauses: () => [],
        appliedBetween: (eventId) => (eventId === 'i-1' ? ['i-2', 'i-3'] : []),
        ownClientCause: () => undefined,
      },
    });
    const upstream: UpstreamFacts = {
      repeatedCommands: [],
      outboxWriters: [{ cause: { kind: 'outbox-write-outside-transaction', subscriber: 'Invoicer', eventIds: [], invocations: [], requests: [], fix: fixFor('outbox-write-outside-transaction') }, eventIds: new Set(['i-2', 'i-3']) }],
      emittedFor: () => [],
    };
    const facts: ObservableRunFacts = {
      ledger: kit.ledger,
      subscribers: [subscriber],
      committed: { eventsById: new Map() },
      isMalformed: () => false,
      upstreamOf: (name, eventIds, reading) => upstreamOf(upstream, name, eventIds, reading),
    };

    // WHEN the rule checks the count
    const [violation, ...others] = effectsRule.check(subscriber, facts);

    // THEN one effect-count violation: the overrun first, then Invoicer's outbox write, named in the detail as the flood
    expect(others).toEqual([]);
    expect(violation?.kind).toBe('effect-count');
    expect(violation?.causes?.map((cause) => [cause.kind, cause.subscriber])).toEqual([
      ['processed-list-overrun', 'Billing'],
      ['outbox-write-outside-transaction', 'Invoicer'],
    ]);
    expect(violation?.causes?.[1]?.eventIds).toEqual(['i-2', 'i-3']);
    expect(violation?.detail).toContain("upstream of Billing: the subscriber Invoicer published the newer events that pushed event i-1 out of its aggregate's processed list (i-2, i-3) with an outbox write of its own");
  });
});
