/**
 * The ordered path as the constructs synthesize it: the check names the FIFO topic the fan-out publishes to an event
 * topic of the flow (the fan-out's `IEF_ORDERED_TOPIC_ARN` is a `Ref` of the topic's logical id), and the fan-out a relay function.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterEach, expect, test } from 'vitest';
import { OrderedRelay, OrderedSubscriber } from '../../../lib/ordered';
import { OutboxTable } from '../../../lib/outbox';
import { relayPublishersOf } from '../../../simulator/check/own-publishes';
import { readAssembly } from '../../../simulator/model/read-assembly';

const created: string[] = [];
afterEach(() => {
  for (const directory of created.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

test("names the ordered relay's FIFO topic an event topic and its fan-out a relay function", () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-own-publishes-'));
  created.push(outdir);
  const app = new App({ outdir });
  const stack = new Stack(app, 'Shop');
  const outboxTable = new OutboxTable(stack, 'Outbox');
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable });
  new OrderedSubscriber(stack, 'Shipping', { relay, subscriberName: 'Shipping', entry: path.join(__dirname, '..', '..', 'fixtures', 'ordered-consumer-handler.ts') });
  app.synth();

  const model = readAssembly(outdir);
  const published = relayPublishersOf(model);

  const fifoTopics = model.topics.filter((topic) => topic.fifo).map((topic) => topic.key);
  expect(fifoTopics).toHaveLength(1);
  expect([...published.eventTopics]).toEqual(fifoTopics);
  expect([...published.relayFunctions]).toEqual(model.functions.filter((fn) => fn.environment.IEF_ORDERED_TOPIC_ARN !== undefined).map((fn) => fn.key));
});
