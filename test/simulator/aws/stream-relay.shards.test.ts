import {
  DescribeStreamCommand,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DynamoDBStreamsClient,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, test } from 'vitest';
import { SimulatedRelay } from '../../../simulator/aws/stream-relay';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { RelayModel } from '../../../simulator/model/flow-model';

/** Shard splits and iterator expiry do not happen on demand in DynamoDB Local, so this stream is in memory. */
const STREAM_ARN = 'arn:aws:dynamodb:eu-west-1:111111111111:table/Outbox/stream/2024-01-01T00:00:00.000';

interface FakeShard {
  readonly parent?: string;
  readonly records: _Record[];
  closed: boolean;
}

/** A DynamoDB Streams API over in-memory shards; iterators are `<shard>|<index of the next record>`. */
class FakeStreams {
  public readonly shards = new Map<string, FakeShard>();
  public readonly requests: string[] = [];
  /** Iterators whose next GetRecords fails with ExpiredIteratorException (once). */
  public readonly expired = new Set<string>();
  /** DescribeStream pages hold this many shards. */
  public pageSize = 100;
  private sequence = 0;

  public addShard(shardId: string, parent?: string): void {
    this.shards.set(shardId, { ...(parent !== undefined && { parent }), records: [], closed: false });
  }

  public write(shardId: string, id: string): void {
    const sequenceNumber = String(++this.sequence).padStart(21, '0');
    this.shard(shardId).records.push({
      eventID: `record-${id}`,
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'ddblocal',
      dynamodb: { Keys: { pk: { S: id } }, NewImage: { pk: { S: id } }, SequenceNumber: sequenceNumber, SizeBytes: 10, StreamViewType: 'NEW_IMAGE' },
    });
  }

  public async send(command: unknown): Promise<unknown> {
    if (command instanceof DescribeStreamCommand) {
      this.requests.push(`DescribeStream ${command.input.ExclusiveStartShardId ?? '-'}`);
      const all = [...this.shards.entries()];
      const start = command.input.ExclusiveStartShardId === undefined ? 0 : all.findIndex(([id]) => id === command.input.ExclusiveStartShardId) + 1;
      const page = all.slice(start, start + this.pageSize);
      const more = start + this.pageSize < all.length;
      return {
        StreamDescription: {
          Shards: page.map(([ShardId, shard]) => ({
            ShardId,
            ...(shard.parent !== undefined && { ParentShardId: shard.parent }),
            SequenceNumberRange: {
              StartingSequenceNumber: shard.records[0]?.dynamodb?.SequenceNumber ?? '0',
              ...(shard.closed && { EndingSequenceNumber: shard.records.at(-1)?.dynamodb?.SequenceNumber ?? '0' }),
            },
          })),
          ...(more && { LastEvaluatedShardId: page.at(-1)?.[0] }),
        },
      };
    }
    if (command instanceof GetShardIteratorCommand) {
      const { ShardId, ShardIteratorType, SequenceNumber } = command.input;
      this.requests.push(`GetShardIterator ${ShardId} ${ShardIteratorType}${SequenceNumber === undefined ? '' : ` ${SequenceNumber}`}`);
      const records = this.shard(String(ShardId)).records;
      const position =
        ShardIteratorType === 'TRIM_HORIZON'
          ? 0
          : ShardIteratorType === 'LATEST'
            ? records.length
            : records.findIndex((record) => record.dynamodb?.SequenceNumber === SequenceNumber) + 1;
      return { ShardIterator: `${ShardId}|${position}` };
    }
    if (command instanceof GetRecordsCommand) {
      const iterator = String(command.input.ShardIterator);
      if (this.expired.delete(iterator)) throw new ExpiredIteratorException({ message: 'Iterator expired', $metadata: {} });
      const [shardId = '', position = '0'] = iterator.split('|');
      const shard = this.shard(shardId);
      const start = Number(position);
      const records = shard.records.slice(start, start + (command.input.Limit ?? 1000));
      const next = start + records.length;
      this.requests.push(`GetRecords ${shardId} from ${start}: ${records.length}`);
      return { Records: records, ...(!(shard.closed && next >= shard.records.length) && { NextShardIterator: `${shardId}|${next}` }) };
    }
    throw new Error(`unexpected command ${String(command)}`);
  }

  private shard(shardId: string): FakeShard {
    const shard = this.shards.get(shardId);
    if (shard === undefined) throw new Error(`no shard ${shardId}`);
    return shard;
  }
}

const MODEL: RelayModel = {
  key: 'Stack/Relay',
  stackName: 'Stack',
  logicalId: 'Relay',
  sourceTable: 'Stack/Outbox',
  targetTopic: 'Stack/Topic',
  batchSize: 2,
  startingPosition: 'TRIM_HORIZON',
  maximumRetryAttempts: -1,
  maximumRecordAgeSeconds: -1,
  bisectOnFailure: false,
  filterPatterns: [],
};

function relayOn(streams: FakeStreams, model: Partial<RelayModel> = {}) {
  const published: string[] = [];
  const relay = new SimulatedRelay({
    model: { ...MODEL, ...model },
    streamArn: STREAM_ARN,
    streams: streams as unknown as DynamoDBStreamsClient,
    target: { publish: (message) => (published.push(message), { messageId: String(published.length) }) },
    faults: new FaultPlan('seed', NO_FAULTS),
    region: 'eu-west-1',
    filters: [],
    render: (event) => String((event as { dynamodb: { Keys: { pk: { S: string } } } }).dynamodb.Keys.pk.S),
  });
  return { relay, published };
}

describe('SimulatedRelay shard handling', () => {
  test('reads a parent shard to its end before its child, whatever order DescribeStream lists them in', async () => {
    const streams = new FakeStreams();
    streams.addShard('child', 'parent');
    streams.addShard('parent');
    for (const id of ['p1', 'p2', 'p3']) streams.write('parent', id);
    streams.shards.get('parent')!.closed = true;
    for (const id of ['c1', 'c2']) streams.write('child', id);
    const { relay, published } = relayOn(streams);

    expect(await relay.poll()).toBe(5);
    expect(published).toEqual(['p1', 'p2', 'p3', 'c1', 'c2']);
  });

  test('finds shards created after the first poll and reads them from their start', async () => {
    const streams = new FakeStreams();
    streams.addShard('first');
    streams.write('first', 'a');
    const { relay, published } = relayOn(streams, { startingPosition: 'LATEST' });
    expect(await relay.poll()).toBe(0);
    streams.write('first', 'b');
    streams.shards.get('first')!.closed = true;
    streams.addShard('second', 'first');
    streams.write('second', 'c');

    expect(await relay.poll()).toBe(2);
    expect(published).toEqual(['b', 'c']);
    expect(streams.requests).toContain('GetShardIterator second TRIM_HORIZON');
  });

  test('LATEST skips shards that were already closed at the first poll', async () => {
    const streams = new FakeStreams();
    streams.addShard('old');
    streams.write('old', 'x');
    streams.shards.get('old')!.closed = true;
    streams.addShard('open', 'old');
    streams.write('open', 'y');
    const { relay, published } = relayOn(streams, { startingPosition: 'LATEST' });

    expect(await relay.poll()).toBe(0);
    streams.write('open', 'z');
    expect(await relay.poll()).toBe(1);
    expect(published).toEqual(['z']);
    expect(streams.requests.filter((request) => request.startsWith('GetShardIterator old'))).toEqual([]);
  });

  test('follows DescribeStream pages', async () => {
    const streams = new FakeStreams();
    streams.pageSize = 1;
    for (const shard of ['s1', 's2', 's3']) {
      streams.addShard(shard);
      streams.write(shard, shard);
    }
    const { relay, published } = relayOn(streams);
    await relay.poll();
    expect(published.sort()).toEqual(['s1', 's2', 's3']);
    expect(streams.requests.filter((request) => request.startsWith('DescribeStream'))).toEqual(['DescribeStream -', 'DescribeStream s1', 'DescribeStream s2']);
  });

  test('an expired iterator is renewed after the last record read, so nothing is lost or repeated', async () => {
    const streams = new FakeStreams();
    streams.addShard('shard');
    for (const id of ['a', 'b', 'c']) streams.write('shard', id);
    const { relay, published } = relayOn(streams, { batchSize: 2 });
    expect(await relay.poll()).toBe(3);
    streams.write('shard', 'd');
    streams.expired.add('shard|3');

    expect(await relay.poll()).toBe(1);
    expect(published).toEqual(['a', 'b', 'c', 'd']);
    expect(streams.requests).toContain('GetShardIterator shard AFTER_SEQUENCE_NUMBER 000000000000000000003');
  });

  test('reads in pages of BatchSize records (GetRecords Limit), in order', async () => {
    const streams = new FakeStreams();
    streams.addShard('shard');
    for (const id of ['1', '2', '3', '4', '5']) streams.write('shard', id);
    const { relay, published } = relayOn(streams, { batchSize: 2 });
    await relay.poll();
    expect(published).toEqual(['1', '2', '3', '4', '5']);
    expect(streams.requests.filter((request) => request.startsWith('GetRecords'))).toEqual([
      'GetRecords shard from 0: 2',
      'GetRecords shard from 2: 2',
      'GetRecords shard from 4: 1',
      'GetRecords shard from 5: 0',
    ]);
  });

  test('refuses a starting position a DynamoDB stream does not have, naming the relay', () => {
    expect(() => relayOn(new FakeStreams(), { startingPosition: 'AT_TIMESTAMP' })).toThrow(
      "relay Stack/Relay: StartingPosition must be TRIM_HORIZON or LATEST for a DynamoDB stream, got 'AT_TIMESTAMP'",
    );
  });

  test('a failing Streams request rejects the poll, naming the relay, the request and the stream', async () => {
    const streams = new FakeStreams();
    const { relay } = relayOn(streams);
    streams.send = async () => {
      throw new Error('connection refused');
    };
    await expect(relay.poll()).rejects.toThrow(`relay Stack/Relay: DescribeStream on stream ${STREAM_ARN} failed: connection refused`);
  });
});
