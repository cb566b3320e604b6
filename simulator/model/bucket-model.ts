/** The bucket of the flow model (a file of its own: the model, its reader and the S3 endpoint all use it). */
import type { ModelledResource } from './modelled-resource';

/** `AWS::S3::Bucket` */
export interface BucketModel extends ModelledResource {
  /** `BucketName`, when the template sets one. @default a name the simulator makes from the stack and logical id */
  readonly bucketName?: string;
  /** `VersioningConfiguration.Status` is `Enabled`. */
  readonly versioned: boolean;
  /** `BucketEncryption`'s SSE-KMS rule has `BucketKeyEnabled`: KMS sees the bucket's ARN as encryption context. @default false */
  readonly bucketKeyEnabled?: boolean;
}
