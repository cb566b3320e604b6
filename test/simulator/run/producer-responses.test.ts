/**
 * A producer behind an API answers a failed command with an error response, not a throw: a 5xx response (by default)
 * or one the scenario's `failedResponse` names fails the attempt, so it is retried and, failing every attempt, counted
 * as failed (producer-failed) instead of as a success.
 */
import { describe, expect, test } from 'vitest';
import type { FunctionRunner } from '../../../simulator/lambda/function-runner';
import { ProducerDriver } from '../../../simulator/run/producer-driver';

/** A runner whose invocations return `responses` in turn. */
function answering(...responses: unknown[]): FunctionRunner {
  let next = 0;
  return { invoke: async () => ({ kind: 'returned', response: responses[Math.min(next++, responses.length - 1)] }) } as unknown as FunctionRunner;
}

describe('ProducerDriver and API responses', () => {
  test('a 5xx response fails the attempt: retried, and failed after every attempt, with the response named', async () => {
    const driver = new ProducerDriver(answering({ statusCode: 503, body: 'busy' }), [{ orderId: 'O1' }]);

    await driver.next(1);

    expect(driver.figures).toMatchObject({ succeeded: 0, retried: 2, failed: [{ index: 0, reason: expect.stringContaining('a failed response: {"statusCode":503,"body":"busy"}') }] });
  });

  test('a 5xx then a 2xx is a retried success; a 409 is a success unless the scenario says it fails a command', async () => {
    const retried = new ProducerDriver(answering({ statusCode: 500 }, { statusCode: 201 }), [{}]);
    await retried.next(1);
    expect(retried.figures).toMatchObject({ succeeded: 1, retried: 1, failed: [] });

    const conflict = new ProducerDriver(answering({ statusCode: 409 }), [{}]);
    await conflict.next(1);
    expect(conflict.figures).toMatchObject({ succeeded: 1, failed: [] });

    const strict = new ProducerDriver(answering({ statusCode: 409 }), [{}], undefined, undefined, (response) => (response as { statusCode?: number }).statusCode !== 201);
    await strict.next(1);
    expect(strict.figures).toMatchObject({ succeeded: 0, failed: [{ reason: expect.stringContaining('{"statusCode":409}') }] });
  });
});
