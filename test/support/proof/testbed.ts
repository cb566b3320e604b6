/**
 * What an integration or proof test file works against: the shared DynamoDB Local, through a direct client and through
 * a fault proxy of its own (lost responses, throttling, request counts). Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { localClient } from '../dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../fault-proxy';
import { createLeaseInbox, type InboxSettings } from './tables';

/** A direct client and a running fault proxy; stop the proxy when the file (or test) is done. */
export interface Testbed {
  /** Talks to DynamoDB Local directly. */
  readonly client: DynamoDBClient;
  /** In front of DynamoDB Local: point a client's `endpoint` at `proxy.endpoint`. */
  readonly proxy: FaultProxy;
}

/** Starts a {@link Testbed}. */
export async function startTestbed(): Promise<Testbed> {
  return { client: localClient(), proxy: await startFaultProxy(inject('dynamoDbEndpoint')) };
}

/** Starts a {@link Testbed} with a new lease-mode inbox table, and returns the lease or multi-step consumer config for it. */
export async function startLeaseTestbed(settings: InboxSettings<LeaseConsumerConfig>, prefix?: string): Promise<Testbed & { readonly config: LeaseConsumerConfig }> {
  const testbed = await startTestbed();
  return { ...testbed, config: await createLeaseInbox(testbed.client, settings, prefix) };
}
