/**
 * A per-invocation crash injector for the proof tests. Not a test file.
 *
 * `crashingClient` wraps a DocumentClient so that, at a chosen commit request of one Lambda invocation, the process
 * "dies": either just before the request is sent (`before-commit`: nothing applied) or just after DynamoDB applied it
 * (`after-commit`: applied, but never acknowledged). From then on every request of that invocation fails too, as
 * nothing runs after a crash, and the harness turns the invocation into a thrown error so that SQS (the at-least-once
 * harness) puts the whole batch back on the queue, as it does after a Lambda crash or timeout.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Where in an invocation the crash happens. */
export type CrashPoint = 'before-commit' | 'after-commit';

/** A crash plan for one invocation: the `nthCommit`-th commit request (1-based) crashes at `point`. */
export interface CrashPlan {
  readonly point: CrashPoint;
  readonly nthCommit: number;
}

/** Commands that commit a message's effect (the others only read). */
const COMMIT_COMMANDS: ReadonlySet<string> = new Set(['TransactWriteCommand', 'PutCommand', 'UpdateCommand', 'DeleteCommand']);

/** Raised in place of the process dying. */
export class SimulatedCrash extends Error {
  public constructor(point: CrashPoint | 'after-crash') {
    super(`simulated Lambda crash (${point})`);
    this.name = 'SimulatedCrash';
  }
}

/** One invocation's client and whether it crashed. */
export interface CrashingInvocation {
  readonly client: DynamoDBDocumentClient;
  /** True once the planned crash happened. */
  crashed(): boolean;
}

/** A DocumentClient over `base` that crashes as `plan` says (never, without a plan). */
export function crashingClient(base: DynamoDBClient, plan: CrashPlan | undefined): CrashingInvocation {
  const client = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  let commits = 0;
  let crashed = false;
  (client as { send: unknown }).send = async (command: { constructor: { name: string } }) => {
    if (crashed) throw new SimulatedCrash('after-crash');
    const isCommit = COMMIT_COMMANDS.has(command.constructor.name);
    if (isCommit) commits += 1;
    const crashesHere = plan !== undefined && isCommit && commits === plan.nthCommit;
    if (crashesHere && plan.point === 'before-commit') {
      crashed = true;
      throw new SimulatedCrash('before-commit');
    }
    if (!crashesHere) return send(command);
    // after-commit: DynamoDB gets the request; whatever it answers, the process dies before reading it
    await send(command).catch(() => undefined);
    crashed = true;
    throw new SimulatedCrash('after-commit');
  };
  return { client, crashed: () => crashed };
}
