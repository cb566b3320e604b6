/**
 * The claim-check settings a function reads from its environment (contract/claim-check.ts names the variables): where
 * offloaded event data goes and when an event is offloaded. Pure: no AWS SDK.
 */
import { CLAIM_CHECK_ENV, DEFAULT_PAYLOAD_KEY_PREFIX, PAYLOAD_KEY_PREFIX_PATTERN } from '../contract/claim-check';
import { ConfigurationError, type EnvironmentVariables } from '../config';

/** Where and when a producer offloads event data to S3, and where a reader expects it. */
export interface ClaimCheckConfig {
  /** The payload bucket. */
  readonly bucketName: string;
  /** The key prefix objects are written under, ending in `/`. */
  readonly keyPrefix: string;
  /**
   * Offload an event whose envelope, double-encoded, is larger than this many bytes; 0 offloads every event.
   * @default undefined - the producer's event size limit (`maxEventBytes`, else the SNS message limit)
   */
  readonly inlineThresholdBytes?: number;
}

/**
 * Reads the claim-check settings; undefined when `IEF_PAYLOAD_BUCKET_NAME` is unset (the flow does not offload).
 * @throws ConfigurationError on a prefix or threshold that is not valid
 */
export function loadClaimCheckConfig(env: EnvironmentVariables = process.env): ClaimCheckConfig | undefined {
  const bucketName = env[CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]?.trim();
  if (bucketName === undefined || bucketName === '') return undefined;
  const keyPrefix = env[CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]?.trim() || DEFAULT_PAYLOAD_KEY_PREFIX;
  if (!PAYLOAD_KEY_PREFIX_PATTERN.test(keyPrefix)) {
    throw new ConfigurationError(
      `environment variable ${CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX} must be 1 to 128 characters of A-Z a-z 0-9 ! - _ . * ' ( ) /, ending in '/' and not starting with '/', but '${keyPrefix}' was given`,
    );
  }
  const rawThreshold = env[CLAIM_CHECK_ENV.INLINE_THRESHOLD_BYTES]?.trim();
  if (rawThreshold === undefined || rawThreshold === '') return { bucketName, keyPrefix };
  const inlineThresholdBytes = Number(rawThreshold);
  if (!Number.isInteger(inlineThresholdBytes) || inlineThresholdBytes < 0) {
    throw new ConfigurationError(`environment variable ${CLAIM_CHECK_ENV.INLINE_THRESHOLD_BYTES} must be a whole number of bytes, 0 or more, but '${rawThreshold}' was given`);
  }
  return { bucketName, keyPrefix, inlineThresholdBytes };
}
