/**
 * The engine of lease and multi-step modes (lease mode is one step named `effect`): claim the message's processing
 * record, or decide what an existing one means, then run the steps in order under an owner-fenced lease.
 *
 * Writes per message on the happy path: 1 (the claim, which also starts the first step) + 1 per step (each records
 * the step's success and starts the next step, or completes the record).
 */
import { DEAD_LETTER_ATTRIBUTE } from '../consumer/dead-letter';
import type { MessageContext, MessageExecutor } from '../consumer/process-message';
import type { SQSRecord } from '../consumer/sqs';
import type { EventEnvelope } from '../envelope';
import { EventFlowError, LeaseLostError, MessageBlockedError, MessageInProgressError, PayloadMismatchError, PermanentError, RetryableError } from '../errors';
import type { Logger } from '../logger';
import { RECORD_STATUS, STEP_STATUS } from '../contract/wire-format';
import { classify, defaultErrorClassifier } from './error-classification';
import { mergeContext } from './processing-context';
import type { ProcessingRecordView } from './processing-record';
import type { HeldRecord } from './held-record';
import type { ProcessingRecordStore } from './record-store';
import { describeRecord } from './record-writes';
import type { ErrorClassifier, ExpiredLeasePolicy, StepContext, StepOutput } from './types';
import { redactedMessage, redactValues, withRuntimeMessage } from '../redact';

/** How often a holder tries to release its lease after a step failed without taking effect. */
export const MAX_RELEASE_ATTEMPTS = 3;

/** Backoff between release attempts: full jitter over an exponential ceiling, in milliseconds. */
const RELEASE_BACKOFF_BASE_MILLISECONDS = 50;
const RELEASE_BACKOFF_CAP_MILLISECONDS = 400;

const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** One step as the engine runs it. */
export interface EngineStep<TData> {
  readonly name: string;
  readonly run: (envelope: EventEnvelope<TData>, context: StepContext) => Promise<StepOutput> | StepOutput;
}

/** Options of {@link createStepExecutor}. */
export interface StepEngineOptions<TData> {
  readonly store: ProcessingRecordStore;
  readonly steps: readonly EngineStep<TData>[];
  readonly subscriberName: string;
  readonly onExpiredLease: ExpiredLeasePolicy;
  readonly classifyError: ErrorClassifier;
  readonly newOwnerToken: () => string;
  readonly now: () => Date;
  /** The idempotency key handed to step `step` of the record `recordKey`. */
  readonly idempotencyKey: (recordKey: string, step: string) => string;
  /** Keep a step's error message as it is in the reasons and errors made of it. @default false: redacted (lambda/redact.ts) */
  readonly logPayloadValues?: boolean;
}

/** A delivery that found its record blocked by another copy of the message: why nothing was done. */
interface AlreadyBlocked {
  readonly alreadyBlocked: string;
}

/**
 * What keeps a blocked message, said for the log, or undefined when nothing is known to: the record's copy of its
 * body, or a dead letter whose send was confirmed and recorded. Only then may another copy be acknowledged.
 */
function keeperOf(record: ProcessingRecordView): string | undefined {
  if (record.blocked?.body !== undefined) return 'the record keeps the message body';
  const deadLetter = record.blocked?.deadLetterSqsMessageId;
  if (deadLetter !== undefined) return `the dead letter of SQS message '${deadLetter}' holds the message (its send was confirmed)`;
  return undefined;
}

/** Whether an SQS message is a dead letter this runtime sent (it carries the reason), e.g. redriven from the DLQ. */
function isDeadLetter(record: SQSRecord): boolean {
  return record.messageAttributes?.[DEAD_LETTER_ATTRIBUTE.ERROR_NAME] !== undefined;
}

function isLeaseLost(error: unknown): boolean {
  return error instanceof LeaseLostError || (error instanceof Error && error.name === 'LeaseLostError');
}

/** The mode's {@link MessageExecutor}. */
export function createStepExecutor<TData>(options: StepEngineOptions<TData>): MessageExecutor<TData> {
  /** A step's error, as the reasons and errors made of it say it: its message redacted unless `logPayloadValues`. */
  const errorSummary = (error: unknown): string => {
    if (!(error instanceof Error)) return options.logPayloadValues === true ? String(error) : redactValues(String(error));
    return `${error.name}: ${options.logPayloadValues === true ? error.message : redactedMessage(error)}`;
  };
  const { store } = options;
  const stepOrder = options.steps.map((step) => step.name);
  const byName = new Map(options.steps.map((step) => [step.name, step]));

  /** Decides what an existing record means for this delivery: a duplicate, an error, or a takeover. */
  async function resolveExisting(
    envelope: EventEnvelope<TData>,
    context: MessageContext<TData>,
    existing: ProcessingRecordView | undefined,
    owner: string,
  ): Promise<HeldRecord | 'duplicate' | AlreadyBlocked> {
    if (existing === undefined) {
      throw new MessageInProgressError(`the record of event '${envelope.id}' changed while it was being claimed; retried later`, {
        eventId: envelope.id,
        leaseExpiresAtEpochMilliseconds: 0,
      });
    }
    if (existing.payloadFingerprint !== undefined && existing.payloadFingerprint !== context.fingerprint) {
      throw new PayloadMismatchError({
        eventId: envelope.id,
        storedFingerprint: existing.payloadFingerprint,
        receivedFingerprint: context.fingerprint,
        subscriber: options.subscriberName,
      });
    }
    if (existing.status === RECORD_STATUS.COMPLETED) return 'duplicate';
    if (existing.status === RECORD_STATUS.BLOCKED) {
      const step = existing.activeStep ?? '(unknown)';
      const since = `since ${existing.blocked?.at ?? '(unknown)'} at step '${step}'`;
      const keptBy = keeperOf(existing);
      if (keptBy !== undefined && !isDeadLetter(context.sqsRecord)) {
        // another copy (an SNS or relay duplicate, or this message again after its dead letter was sent): the message is
        // kept, and a second dead letter would only add to the operator's queue
        return {
          alreadyBlocked:
            `blocked for an operator ${since} by SQS message '${existing.blocked?.sqsMessageId ?? '(unknown)'}'; ${keptBy}; this copy is ` +
            'acknowledged without another dead letter or write. Resolve the record, then redrive that dead letter',
        };
      }
      // nothing is known to keep the message, so this copy may be the only one: the blocking delivery's dead-letter send
      // failed or never happened (and SQS may have moved it to the DLQ itself, without our reason; a redrive from there
      // gives it a new message id), a dead letter redriven before the block was resolved, or a record of an older writer
      throw new MessageBlockedError(
        `event '${envelope.id}' is blocked for an operator ${since}: ${existing.blocked?.reason ?? ''} ` +
          '(resolve the record before redriving its dead letter, or this happens again)',
        { eventId: envelope.id, step, recordVersion: existing.version },
      );
    }
    // live until its expiry plus the clock-skew allowance (the holder's clock may be behind ours); the takeover and the
    // block below are conditioned on the same in DynamoDB
    if (store.isLeaseLive(existing)) {
      throw new MessageInProgressError(
        `event '${envelope.id}' is being processed by another delivery (lease until ${new Date(existing.leaseExpiresAtEpochMilliseconds).toISOString()}, ` +
          `plus ${store.clockSkewAllowanceSeconds} s allowed for clock skew); retried later`,
        { eventId: envelope.id, leaseExpiresAtEpochMilliseconds: existing.leaseExpiresAtEpochMilliseconds },
      );
    }
    if (existing.activeStep !== undefined && options.onExpiredLease === 'block') {
      const step = existing.activeStep;
      const reason =
        `step '${step}' was PROCESSING under owner '${existing.owner ?? '(none)'}', whose lease expired at ` +
        `${new Date(existing.leaseExpiresAtEpochMilliseconds).toISOString()}: that delivery crashed or stalled, so the step may or may not ` +
        'have taken effect; it is not run again until an operator resolves it';
      if (!(await context.retryOnContention(() => store.blockExpired(existing, owner, reason, context.sqsRecord))).value) {
        throw new MessageInProgressError(`event '${envelope.id}' changed while it was being blocked; retried later`, {
          eventId: envelope.id,
          leaseExpiresAtEpochMilliseconds: 0,
        });
      }
      context.logger.warn('lease expired mid-step; blocked', { step, previousOwner: existing.owner, version: existing.version + 1 });
      throw new MessageBlockedError(reason, { eventId: envelope.id, step, recordVersion: existing.version + 1 });
    }
    const { value: held } = await context.retryOnContention(() => store.takeOver(existing, owner, existing.activeStep !== undefined));
    context.logger.info('took over', {
      previousOwner: existing.owner,
      step: held.activeStep,
      rerun: existing.activeStep !== undefined,
      version: held.version,
    });
    return held;
  }

  /** Blocks the held record after step `step` ended with an unknown outcome; always throws. */
  async function block(held: HeldRecord, step: string, reason: string, cause: unknown, context: MessageContext<TData>, log: Logger): Promise<never> {
    let recordVersion: number;
    try {
      recordVersion = (await context.retryOnContention(() => store.blockHeld(held, reason, context.sqsRecord))).value;
    } catch (blockError) {
      if (isLeaseLost(blockError)) {
        log.error('step effect may have run under a lost lease', { step, error: blockError, stepError: cause });
        throw blockError;
      }
      throw new EventFlowError(
        `could not block event '${held.eventId}' after step '${step}' (${errorSummary(blockError)}); the step stays PROCESSING, ` +
          'so a later delivery blocks it once the lease expires',
        { cause: blockError },
      );
    }
    throw new MessageBlockedError(reason, { eventId: held.eventId, step, recordVersion }, { cause });
  }

  /**
   * Releases the lease after step `step` failed without taking effect, retrying a failed write (throttling, a network
   * error) up to {@link MAX_RELEASE_ATTEMPTS} times with jittered backoff: a release that never lands leaves the step
   * PROCESSING, which the next delivery can not tell from a crash mid-step. Never throws but for a lost lease.
   */
  async function releaseWithRetries(held: HeldRecord, step: string, log: Logger): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await store.release(held, step);
        return;
      } catch (releaseError) {
        // the step did not take effect, so losing the lease here endangers nothing
        if (isLeaseLost(releaseError)) throw releaseError;
        if (attempt >= MAX_RELEASE_ATTEMPTS) {
          const lease = `once its lease expires (${new Date(held.leaseExpiresAtEpochMilliseconds).toISOString()}, plus ${store.clockSkewAllowanceSeconds} s allowed for clock skew)`;
          const next =
            options.onExpiredLease === 'block'
              ? `the next delivery blocks the message for an operator: resolve it TRY_AGAIN`
              : `the next delivery takes it over and runs the step again (onExpiredLease 'retry')`;
          log.error(`lease release failed after ${attempt} attempts; the step stays PROCESSING`, {
            step,
            error: releaseError,
            detail: `the step did not take effect, but ${lease} ${next}`,
          });
          return;
        }
        log.warn('lease release failed; retrying', { step, attempt, error: releaseError });
        await sleep(Math.random() * Math.min(RELEASE_BACKOFF_CAP_MILLISECONDS, RELEASE_BACKOFF_BASE_MILLISECONDS * 2 ** (attempt - 1)));
      }
    }
  }

  /** Handles a step's throw: release and rethrow, or block; always throws. */
  async function fail(held: HeldRecord, step: string, error: unknown, context: MessageContext<TData>, log: Logger): Promise<never> {
    const kind = classify(options.classifyError, error);
    if (kind === 'unknown') {
      const reason =
        `step '${step}' failed with an unknown outcome (${errorSummary(error)}); it may or may not have taken effect, ` +
        'so it is not run again until an operator resolves it';
      return block(held, step, reason, error, context, log);
    }
    await releaseWithRetries(held, step, log);
    // the shared pipeline dead-letters the PermanentError family and retries the rest: make the error say what the classifier said
    const permanent = defaultErrorClassifier(error) === 'permanent';
    // the step's error in these messages is already redacted (errorSummary): kept as they are from here on
    if (kind === 'permanent' && !permanent) throw withRuntimeMessage(new PermanentError(`step '${step}' failed permanently: ${errorSummary(error)}`, { cause: error }));
    if (kind === 'retry' && permanent) throw withRuntimeMessage(new RetryableError(`step '${step}' failed and is retried: ${errorSummary(error)}`, { cause: error }));
    throw error;
  }

  /** Runs the held record's steps from its active step on; returns how many ran. */
  async function runSteps(context: MessageContext<TData>, start: HeldRecord): Promise<number> {
    let held = start;
    let ran = 0;
    while (held.activeStep !== undefined) {
      const step = held.activeStep;
      const definition = byName.get(step);
      const log = context.logger.child({ step });
      if (definition === undefined) {
        // the record keeps the step list it was claimed with; a deploy removed (or renamed) this step since
        const reason =
          `step '${step}' of this message's step list (${held.stepOrder.join(', ')}) is not a step of the deployed handler ` +
          `(${stepOrder.join(', ')}); it has not run. Resolve it SUCCESS to skip it, or deploy a handler that has it and resolve it TRY_AGAIN`;
        return block(held, step, reason, undefined, context, log);
      }
      const stepContext: StepContext = {
        sqsRecord: context.sqsRecord,
        lambdaContext: context.lambdaContext,
        logger: log,
        idempotencyKey: options.idempotencyKey(held.key, step),
        leaseExpiresAtEpochMilliseconds: held.leaseExpiresAtEpochMilliseconds,
        attempt: held.steps[step]?.attempts ?? 1,
        step,
        stepContext: Object.freeze({ ...held.context }),
      };
      let output: StepOutput;
      try {
        // a fresh event for each step: what one step changes in place must not reach the next (a redelivery that resumes
        // at the next step would not see it either)
        output = await definition.run(context.freshEnvelope(), stepContext);
      } catch (error) {
        return fail(held, step, error, context, log);
      }
      ran += 1;
      let merged: Record<string, unknown>;
      try {
        merged = mergeContext(held.context, output, `the output of step '${step}'`);
      } catch (error) {
        // the step took effect, so it must not run again: block it for an operator, who can store a smaller context
        const reason = `step '${step}' succeeded, but its output can not be stored (${errorSummary(error)}); an operator must resolve it`;
        return block(held, step, reason, error, context, log);
      }
      const current = held;
      const next = current.stepOrder.find((name) => name !== step && current.steps[name]?.status !== STEP_STATUS.SUCCESS);
      try {
        // refused for contention alone (throttling, a transaction on the record): nothing was written, and the write is
        // fenced by owner and version, so it is sent again while time allows (the step is not run again)
        const from = held;
        held = (await context.retryOnContention(() => store.advance(from, step, merged, next))).value;
      } catch (error) {
        if (isLeaseLost(error)) log.error('step effect may have run under a lost lease', { step, error });
        throw error;
      }
    }
    return ran;
  }

  return async (envelope, context) => {
    const owner = options.newOwnerToken();
    // a claim refused for contention alone wrote nothing: claimed again while time allows
    const { value: claim } = await context.retryOnContention(() => store.claim(envelope, context.fingerprint, owner, stepOrder));
    let held: HeldRecord;
    if (claim.claimed) {
      held = claim.held;
    } else {
      const resolved = await resolveExisting(envelope, context, claim.existing, owner);
      if (resolved === 'duplicate') return { outcome: 'duplicate', fields: { detail: describeRecord(claim.existing) } };
      if ('alreadyBlocked' in resolved) return { outcome: 'already-blocked', fields: { detail: resolved.alreadyBlocked } };
      held = resolved;
    }
    const stepsRun = await runSteps(context, held);
    return { outcome: 'processed', fields: { stepsRun } };
  };
}
