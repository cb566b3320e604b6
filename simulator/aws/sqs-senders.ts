/**
 * Which execution environment, and which of its invocations, sent an SQS request. Each environment's
 * `AWS_ENDPOINT_URL_SQS` is the simulator's SQS endpoint followed by a path of its own (`/sender/<n>`); the SDK keeps
 * an endpoint's path (a queue URL on the endpoint's origin does not replace it), so the request's path names the
 * environment, and the environment runs one invocation at a time.
 */
import type { ResourceKey } from '../model/flow-model';
import type { RequestScheduling } from '../schedule/schedule-types';

/** The path every sender's endpoint URL starts with. */
export const SENDER_PATH_PREFIX = '/sender/';

/** The invocation an environment is running. */
export interface SenderInvocation {
  /** Unique in the run. */
  readonly invocation: string;
  /** The key the runner was given for it (an event source mapping's `<mapping>|<message id>|<receive count>`), which fault decisions are keyed by. @default not known */
  readonly invocationKey?: string;
  /** The ids of the events the invocation handles (its SQS records' envelopes). */
  readonly eventIds: readonly string[];
}

/** Who sent a request. */
export interface SqsSender {
  readonly functionKey: ResourceKey;
  /** The function as the report names it. */
  readonly functionName: string;
  /** What it was running; undefined between invocations (a send at init). */
  readonly invocation?: SenderInvocation;
  /** The run's scheduler holds each of the environment's SQS requests, as it holds its DynamoDB requests. @default not held */
  readonly scheduling?: RequestScheduling;
}

/** One environment's registration: its endpoint path, and the invocation it runs. */
export interface SenderRegistration {
  /** Appended to the SQS endpoint to make the environment's `AWS_ENDPOINT_URL_SQS`. */
  readonly path: string;
  begin(invocation: SenderInvocation): void;
  end(): void;
}

/** The senders of one run. */
export class SqsSenders {
  private issued = 0;
  private readonly senders = new Map<string, { functionKey: ResourceKey; functionName: string; invocation?: SenderInvocation; scheduling?: RequestScheduling }>();

  /**
   * Registers a new environment of the function; `scheduling` (the environment's, under a seeded scheduler) holds its
   * SQS requests until the scheduler lets them go, so that two sends of one invocation reach the queues in the seed's
   * order, not in the order their connections happened to deliver them.
   */
  public register(functionKey: ResourceKey, functionName: string, scheduling?: RequestScheduling): SenderRegistration {
    this.issued += 1;
    const id = String(this.issued);
    const sender: { functionKey: ResourceKey; functionName: string; invocation?: SenderInvocation; scheduling?: RequestScheduling } = {
      functionKey,
      functionName,
      ...(scheduling === undefined ? {} : { scheduling }),
    };
    this.senders.set(id, sender);
    return {
      path: `${SENDER_PATH_PREFIX}${id}`,
      begin: (invocation) => {
        sender.invocation = invocation;
      },
      end: () => {
        delete sender.invocation;
      },
    };
  }

  /** The sender a request path names (`/sender/<n>` or `/sender/<n>/`), or undefined. */
  public identify(requestPath: string | undefined): SqsSender | undefined {
    const match = /^\/sender\/(\d+)\/?(?:\?.*)?$/.exec(requestPath ?? '');
    const sender = match === null ? undefined : this.senders.get(match[1]!);
    return sender === undefined ? undefined : { ...sender };
  }
}
