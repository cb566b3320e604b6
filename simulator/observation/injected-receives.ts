/**
 * Which failed receives of a subscriber's messages failed at a fault the run injected, and which at anything else (the
 * app's own error, a time-out, a failure the run cannot tie to a fault). A dead letter SQS moved after
 * `maxReceiveCount` receives that all failed at injected faults is what transient failures do in AWS to a queue that
 * retries too few times (check/few-receives.ts).
 *
 * A receive failed at an injected fault when its invocation:
 * - crashed: the process dies only at an injected `crash-before` or `crash-after` (the simulator's proxy), and a crash
 *   fails the whole batch;
 * - returned with the record reported failed, its runtime outcome line naming contention (DynamoDB's throttling, a
 *   transaction conflict, the aggregate's contended write) or a record not started for lack of time, in an invocation
 *   the run injected a throttle or a conflict into (random or steered): DynamoDB Local itself never throttles;
 * - returned with the record `skipped` behind its FIFO group's failure, when every failed record of the batch failed at
 *   an injected fault (the group's failure among them).
 * Anything else counts as the app's: a record whose outcome line is hidden (a log level above it) or names another
 * error, an invocation that threw or timed out. So the answer errs towards "not only injected".
 *
 * Faults are tied to invocations by the invocation key the function runner was given
 * (`<mapping>|<first message id>|<its receive count>`), which the mapping's report rebuilds; deterministic, as the keys
 * and the fault decisions are.
 */
import type { FaultKind } from '../faults/fault-plan';
import type { ResourceKey } from '../model/flow-model';
import type { InvocationOutcome, MessageOrigin } from './observer';
import { loggedRecordOutcomes, type LoggedRecordOutcome } from './record-outcomes';

/** The injected faults after which a record may fail for contention. */
const CONTENTION_FAULTS: ReadonlySet<FaultKind> = new Set(['throttle', 'transaction-conflict']);

/**
 * Error names of a request refused for contention as the runtime logs them once its retries are spent: DynamoDB's
 * throttling errors and a single write's conflict (as the SDK names them), and the aggregate consumer's contended write
 * (lambda/errors.ts `ConcurrentModificationError`).
 */
const CONTENTION_ERRORS: ReadonlySet<string> = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded', 'TransactionConflictException', 'ConcurrentModificationError']);

/** Cancellation reason codes of contention (a cancelled transaction whose every failed action has one of these). */
const CONTENTION_CODES: ReadonlySet<string> = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/** The detail of the runtime's line for a record it did not start, the invocation's time being too short (lambda/consumer/create-consumer.ts). */
const NOT_STARTED = 'not started: too little of the invocation';

/**
 * Whether a logged error (`name: message`) is contention: a contention error, or a cancelled transaction
 * (`TransactionCancelledError`, the runtime's, lists `action N (...): <code>`; `TransactionCanceledException`, the
 * SDK's, `[<code>, ...]`) whose failed actions all have contention codes.
 */
export function isContention(detail: string): boolean {
  const name = detail.slice(0, detail.indexOf(':'));
  if (CONTENTION_ERRORS.has(name)) return true;
  let codes: string[] = [];
  if (name === 'TransactionCancelledError') codes = [...detail.matchAll(/\): (\w+)(?=;|$)/g)].map((match) => match[1]!);
  else if (name === 'TransactionCanceledException') codes = (/\[([^\]]*)\]/.exec(detail)?.[1] ?? '').split(',').map((code) => code.trim()).filter((code) => code !== 'None' && code !== '');
  return codes.length > 0 && codes.every((code) => CONTENTION_CODES.has(code));
}

/** An invocation as the mapping reports it (observer.ts `onInvocation`). */
export interface ReportedInvocation {
  readonly messages: readonly { readonly messageId: string; readonly receiveCount: number; readonly origin?: MessageOrigin }[];
  readonly outcome: InvocationOutcome;
  readonly failedMessageIds: readonly string[];
  readonly output?: readonly string[];
}

/** Failed receives of one event's messages at one subscription. */
interface FailedReceives {
  injected: number;
  other: number;
}

/** The failed receives of each subscription's events, each told injected or not (see the module comment). */
export class InjectedReceiveFailures {
  /** Invocation key → the kinds of fault injected into its requests. */
  private readonly faultsOf = new Map<string, Set<FaultKind>>();
  /** `<subscription>|<event id>` → its messages' failed receives. */
  private readonly failures = new Map<string, FailedReceives>();

  /** A fault was injected into a request of the invocation `invocationKey`. */
  public onFault(invocationKey: string, kind: FaultKind): void {
    const kinds = this.faultsOf.get(invocationKey) ?? new Set<FaultKind>();
    this.faultsOf.set(invocationKey, kinds.add(kind));
  }

  /** An invocation of the event source mapping `mapping` ended: its failed receives are told injected or not. */
  public onInvocation(mapping: ResourceKey, invocation: ReportedInvocation): void {
    const [first] = invocation.messages;
    if (first === undefined) return;
    const faults = this.faultsOf.get(`${mapping}|${first.messageId}|${first.receiveCount}`) ?? new Set<FaultKind>();
    const { outcome } = invocation;
    const failedIds = outcome.kind === 'returned' ? new Set(invocation.failedMessageIds) : undefined;
    const failed = invocation.messages.filter((message) => failedIds === undefined || failedIds.has(message.messageId));
    const logged = outcome.kind === 'returned' ? loggedRecordOutcomes(invocation.output ?? []) : new Map<string, LoggedRecordOutcome>();
    const contention = [...faults].some((kind) => CONTENTION_FAULTS.has(kind));
    const verdicts = failed.map((message) => {
      if (outcome.kind === 'crashed') return 'injected';
      if (outcome.kind !== 'returned') return 'other';
      const line = logged.get(message.messageId);
      if (line?.outcome === 'skipped') return 'skipped';
      const detail = line?.detail ?? '';
      return line?.outcome === 'failed' && contention && (isContention(detail) || detail.startsWith(NOT_STARTED)) ? 'injected' : 'other';
    });
    // a record skipped behind its group's failure failed at an injected fault when every failure of the batch did
    const failures = verdicts.filter((verdict) => verdict !== 'skipped');
    const skippedInjected = failures.length > 0 && failures.every((verdict) => verdict === 'injected');
    failed.forEach((message, index) => {
      const { subscription, eventId } = message.origin ?? {};
      if (subscription === undefined || eventId === undefined) return;
      const key = `${subscription}|${eventId}`;
      const receives = this.failures.get(key) ?? { injected: 0, other: 0 };
      const verdict = verdicts[index];
      if (verdict === 'injected' || (verdict === 'skipped' && skippedInjected)) receives.injected += 1;
      else receives.other += 1;
      this.failures.set(key, receives);
    });
  }

  /** Whether the event's messages at the subscription failed receives, and every one of them at a fault the run injected. */
  public onlyInjected(subscription: ResourceKey, eventId: string): boolean {
    const receives = this.failures.get(`${subscription}|${eventId}`);
    return receives !== undefined && receives.injected > 0 && receives.other === 0;
  }
}
