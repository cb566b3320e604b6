import { CfnOutput, Stack } from 'aws-cdk-lib';
import type { Subscriber } from '../subscriber';

/**
 * The `<subscriber>/Operator` stack output: what operators of the subscriber need (the names the CLI takes), as one JSON
 * object. Created in the subscriber's own stack, wherever its flow is; its content is defined here only.
 */
export function addSubscriberOperatorOutput(subscriber: Subscriber): CfnOutput {
  return new CfnOutput(subscriber, 'Operator', {
    description:
      `What operators of subscriber ${subscriber.subscriberName} need, e.g. for idempotent-event-flow blocked list ` +
      `--table <inboxTable> --subscriber ${subscriber.subscriberName}`,
    value: Stack.of(subscriber).toJsonString({
      subscriberName: subscriber.subscriberName,
      processingMode: subscriber.processingMode,
      inboxTable: subscriber.inboxTable?.tableName,
      queueUrl: subscriber.queue.queueUrl,
      deadLetterQueueUrl: subscriber.deadLetterQueue.queueUrl,
      subscriptionDeadLetterQueueUrl: subscriber.subscriptionDeadLetterQueue.queueUrl,
      consumerFunctionName: subscriber.consumerFunction.lambdaFunction.functionName,
    }),
  });
}
