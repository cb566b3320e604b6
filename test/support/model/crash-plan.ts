/**
 * Where an invocation of a model's consumer dies: before or after its n-th DynamoDB request (nothing of it runs
 * after). Shared by the model of the runtime (world.ts) and the model of an event's whole life (system-world.ts).
 * Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SimulatedCrash } from '../proof/crash-injector';

/** An invocation's plan and how far it got. */
export interface CrashPlan {
  readonly crash?: { readonly request: number; readonly when: 'before' | 'after' } | undefined;
  requests: number;
  dead: boolean;
}

/**
 * Makes `client`'s requests follow the plan of the invocation `planOf` returns (none: the request goes through):
 * `beforeEach` runs first (an await point a scheduler may decide), then a dead invocation's request fails, and the
 * planned request dies before it is sent or after its answer came.
 */
export function dieAsPlanned<P extends CrashPlan>(client: DynamoDBClient, planOf: () => P | undefined, beforeEach?: (plan: P, commandName: string) => Promise<void>): DynamoDBClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const plan = planOf();
      if (plan === undefined) return next(args);
      await beforeEach?.(plan, String(context.commandName));
      if (plan.dead) throw new SimulatedCrash();
      plan.requests += 1;
      const dies = plan.crash?.request === plan.requests;
      if (dies && plan.crash?.when === 'before') {
        plan.dead = true;
        throw new SimulatedCrash();
      }
      const output = await next(args);
      if (dies) {
        plan.dead = true;
        throw new SimulatedCrash();
      }
      return output;
    },
    { step: 'initialize', name: 'modelCrash' },
  );
  return client;
}
