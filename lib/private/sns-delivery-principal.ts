/**
 * The service principal SNS delivers as, for a subscriber's queue policy and queue key. "When one of the Regions is an
 * opt-in Region, you must specify a different Amazon SNS service principal in the subscribed resource's policy": a
 * topic in an opt-in Region delivers to a queue of another Region as `sns.<opt-in-region>.amazonaws.com`, and a policy
 * naming only `sns.amazonaws.com` lets nothing through (SNS developer guide, "Sending Amazon SNS messages to an Amazon
 * SQS queue or AWS Lambda function in a different Region"; aws-cdk issue #32526). Opt-in Regions: aws-cdk-lib's
 * region-info (`RegionInfo.isOptInRegion`, the Regions launched after 20 March 2019).
 */
import { Token } from 'aws-cdk-lib';
import { RegionInfo } from 'aws-cdk-lib/region-info';

/**
 * `sns.<topic Region>.amazonaws.com` when the topic's Region is an opt-in Region and the queue's is another; else
 * `sns.amazonaws.com` (the same Region, Regions enabled by default, or a Region known only at deploy time).
 */
export function snsDeliveryPrincipal(topicRegion: string | undefined, queueRegion: string): string {
  if (topicRegion === undefined || Token.isUnresolved(topicRegion) || Token.isUnresolved(queueRegion) || topicRegion === queueRegion) return 'sns.amazonaws.com';
  return RegionInfo.get(topicRegion).isOptInRegion ? `sns.${topicRegion}.amazonaws.com` : 'sns.amazonaws.com';
}
