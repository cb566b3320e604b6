import { Annotations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { RECOMMENDED_MIN_RECEIVE_COUNT } from '../../../lambda/contract/receive-count';

/** The least `maxReceiveCount` AWS recommends for a queue a Lambda function reads (../../../lambda/contract/receive-count.ts). */
export { RECOMMENDED_MIN_RECEIVE_COUNT };

/** The id of the synth warning {@link warnOfFewReceives} adds. */
export const FEW_RECEIVES_WARNING_ID = 'idempotent-event-flow:fewReceives';

/** The warning's text for a queue with `maxReceiveCount`. */
export function fewReceivesWarning(maxReceiveCount: number): string {
  return (
    `maxReceiveCount ${maxReceiveCount} is below ${RECOMMENDED_MIN_RECEIVE_COUNT}, the least AWS recommends for a queue a Lambda function reads: ` +
    `a valid message whose ${maxReceiveCount === 1 ? 'receive meets' : `${maxReceiveCount} receives each meet`} a transient failure (a throttled request, ` +
    'an invocation that crashed or timed out, which fails its whole batch) is moved to the dead-letter queue. ' +
    `Set maxReceiveCount to ${RECOMMENDED_MIN_RECEIVE_COUNT} or more.`
  );
}

/** Warns at synth when a queue a Lambda function reads has a `maxReceiveCount` below {@link RECOMMENDED_MIN_RECEIVE_COUNT}. */
export function warnOfFewReceives(scope: IConstruct, maxReceiveCount: number): void {
  if (maxReceiveCount < RECOMMENDED_MIN_RECEIVE_COUNT) Annotations.of(scope).addWarningV2(FEW_RECEIVES_WARNING_ID, fewReceivesWarning(maxReceiveCount));
}
