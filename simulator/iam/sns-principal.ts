/**
 * The service principal SNS delivers to a queue as. "When one of the Regions is an opt-in Region, you must specify a
 * different Amazon SNS service principal in the subscribed resource's policy": a topic in an opt-in Region delivering
 * to a queue of another Region does so as `sns.<opt-in-region>.amazonaws.com`, and a queue policy (or key policy) that
 * names only `sns.amazonaws.com` lets nothing through (SNS developer guide, "Sending Amazon SNS messages to an Amazon
 * SQS queue or AWS Lambda function in a different Region", sns-cross-region-delivery.html, its example: a queue in
 * us-east-1 of a topic in ap-east-1 names `sns.ap-east-1.amazonaws.com`; aws-cdk issue #32526). Within one Region,
 * and between Regions enabled by default, it is `sns.amazonaws.com`.
 *
 * Not modelled (docs/CROSS-ACCOUNT.md, limits): delivery from a Region enabled by default to an opt-in Region, and
 * between two opt-in Regions, which the same guide's Lambda page says SNS does not support.
 */

/**
 * The opt-in Regions: those launched after 20 March 2019, disabled by default (AWS Account Management guide, "Enable or
 * disable AWS Regions in your account"; the SNS guide's table of opt-in Regions, and aws-cdk-lib's region-info
 * `isOptInRegion` for the newest). A copy, as the simulator package does not depend on aws-cdk-lib: it is kept in step
 * with region-info (what the constructs decide by) by test/simulator/iam/review-rv9-opt-in-regions.test.ts, which
 * fails naming a Region region-info takes for opt-in and this list lacks (rv9 R-1).
 */
export const OPT_IN_REGIONS: ReadonlySet<string> = new Set([
  'af-south-1',
  'ap-east-1',
  'ap-east-2',
  'ap-south-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ca-west-1',
  'eu-central-2',
  'eu-south-1',
  'eu-south-2',
  'il-central-1',
  'me-central-1',
  'me-south-1',
  'me-west-1',
  'mx-central-1',
]);

/** The principal SNS delivers as from a topic in `topicRegion` to a queue in `queueRegion`. */
export function snsDeliveryPrincipal(topicRegion: string, queueRegion: string): string {
  return topicRegion !== queueRegion && OPT_IN_REGIONS.has(topicRegion) ? `sns.${topicRegion}.amazonaws.com` : 'sns.amazonaws.com';
}
