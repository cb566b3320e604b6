/**
 * The S3 client of `dlq show --fetch`, which reads an offloaded event's data from the flow's payload bucket. That
 * bucket is in the flow's Region; the operator's `--region` is the subscriber's (its queues and inbox), another Region
 * for a subscriber in another Region than its flow. S3 answers a request signed for the wrong Region with
 * `301 PermanentRedirect` and the bucket's Region (`x-amz-bucket-region`), which the AWS SDK follows only with
 * `followRegionRedirects`: so the client follows it, and the operator needs no option for the bucket's Region.
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';

/** An S3 client in `region` (the operator's `--region`) that follows S3's redirect to the bucket's Region; `config`: a test's endpoint and credentials. */
export function payloadS3Client(region: string | undefined, config: S3ClientConfig = {}): S3Client {
  return new S3Client({ ...(region === undefined ? {} : { region }), followRegionRedirects: true, ...config });
}
