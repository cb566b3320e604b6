/**
 * The least `maxReceiveCount` AWS recommends for a queue a Lambda function reads, so that transient failures (a
 * throttled request, an invocation that crashed or timed out, which fails its whole batch) are retried several times
 * before SQS sets a message aside (AWS Lambda operator guide, "Understanding SQS retries":
 * https://docs.aws.amazon.com/lambda/latest/operatorguide/sqs-retries.html). The constructs warn at synth below it
 * (lib/); the simulator names it as the cause of a dead letter transient faults alone made (simulator/check/few-receives.ts).
 */
export const RECOMMENDED_MIN_RECEIVE_COUNT = 5;

/** Where AWS recommends {@link RECOMMENDED_MIN_RECEIVE_COUNT}. */
export const RECEIVE_COUNT_SOURCE = 'https://docs.aws.amazon.com/lambda/latest/operatorguide/sqs-retries.html';
