/**
 * `simulate --serve`'s banner names the account and Region of each served stack (issue 43, nu43 finding 2: the
 * docs' `verify --account <app account>` needs it, and the banner named none).
 */
import { describe, expect, test } from 'vitest';
import { servingText } from '../../simulator/cli/simulate-serve';
import type { RunServices } from '../../simulator/run/run-services';

function services(stacks: RunServices['stacks']): RunServices {
  return {
    dynamoDbEndpoint: 'http://127.0.0.1:8000',
    sqsEndpoint: 'http://127.0.0.1:9324',
    region: 'us-east-1',
    relays: [],
    subscribers: [],
    watchesApp: false,
    ...(stacks === undefined ? {} : { stacks }),
  } as unknown as RunServices;
}

describe('simulate --serve, the accounts of its stacks', () => {
  test('the banner names each stack with its account and Region, and the --account verify takes', () => {
    const text = servingText(services([{ stackName: 'Shop', account: '111111111111', region: 'us-east-1' }, { stackName: 'Billing', account: '222222222222', region: 'eu-west-1' }]), 0, 'http://127.0.0.1:4566');
    expect(text).toContain('Shop 111111111111/us-east-1');
    expect(text).toContain('Billing 222222222222/eu-west-1');
    expect(text).toContain('--account 111111111111 --account 222222222222');
  });
});
