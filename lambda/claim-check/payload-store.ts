/**
 * The S3 side of the claim-check: a conditional PutObject that never replaces the first object under a key, and a
 * GetObject that tells a missing object from a failure to read. The only file of the runtime that imports the S3 SDK.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { PayloadAccessDeniedError } from '../errors';

/** What the producer needs of S3: write an object once. */
export interface PayloadWriter {
  /**
   * Writes `body` under `key` unless an object is there already (`If-None-Match: *`). The key names the content's
   * SHA-256 (contract/claim-check.ts), so an object already there IS this content: that is success too.
   */
  putOnce(bucketName: string, key: string, body: Uint8Array, sha256Base64: string): Promise<'written' | 'already-there'>;
}

/** What a reader needs of S3: read an object, or learn it is not there. */
export interface PayloadReader {
  /**
   * The object's bytes, or `undefined` when there is no object under the key (`NoSuchKey`, or a `403` to a key that a
   * listing shows is not there). Other failures throw.
   */
  get(bucketName: string, key: string): Promise<Uint8Array | undefined>;
}

/** How many times a write refused with `409 ConditionalRequestConflict` (a concurrent write of the key) is tried. */
export const MAX_CONFLICT_ATTEMPTS = 3;

function httpStatusOf(error: unknown): number | undefined {
  const status = (error as { $metadata?: { httpStatusCode?: unknown } } | undefined)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

function nameOf(error: unknown): string | undefined {
  return error instanceof Error ? error.name : (error as { name?: string } | undefined)?.name;
}

/** A {@link PayloadWriter} and {@link PayloadReader} over an S3 client. */
export class S3PayloadStore implements PayloadWriter, PayloadReader {
  /** A store with a client from the Lambda environment (region and credentials). */
  public static fromEnvironment(config: S3ClientConfig = {}): S3PayloadStore {
    return new S3PayloadStore(new S3Client(config));
  }

  public constructor(private readonly client: S3Client) {}

  public async putOnce(bucketName: string, key: string, body: Uint8Array, sha256Base64: string): Promise<'written' | 'already-there'> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: bucketName,
            Key: key,
            Body: body,
            ContentType: 'application/json',
            ContentLength: body.byteLength,
            ChecksumSHA256: sha256Base64,
            IfNoneMatch: '*',
          }),
        );
        return 'written';
      } catch (error) {
        const status = httpStatusOf(error);
        if (status === 412 || nameOf(error) === 'PreconditionFailed') return 'already-there';
        if ((status === 409 || nameOf(error) === 'ConditionalRequestConflict') && attempt < MAX_CONFLICT_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /**
   * Reads the object. S3 answers a missing key with `403 AccessDenied` instead of `404 NoSuchKey` to a caller it does
   * not let `s3:ListBucket` (S3 API Reference, GetObject, "Permissions"); after a 403 this lists the one key
   * (ListObjectsV2, prefix the key, one result: the flow grants its subscribers `s3:ListBucket` on its prefix) to tell
   * a missing object (`undefined`, dead-lettered with its reason) from a refused read ({@link PayloadAccessDeniedError},
   * retried). The listing is one more request on the 403 path only.
   *
   * @throws PayloadAccessDeniedError after a 403, when the object is there or the listing is refused too
   * @throws the S3 client's error on any other failure (throttling, network, a 5xx)
   */
  public async get(bucketName: string, key: string): Promise<Uint8Array | undefined> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
      if (response.Body === undefined) return new Uint8Array();
      return await response.Body.transformToByteArray();
    } catch (error) {
      if (nameOf(error) === 'NoSuchKey' || httpStatusOf(error) === 404) return undefined;
      if (httpStatusOf(error) === 403 || nameOf(error) === 'AccessDenied') return this.afterAccessDenied(bucketName, key, error);
      throw error;
    }
  }

  /** After a 403 to GetObject: `undefined` when a listing of the key shows no object; else a PayloadAccessDeniedError. */
  private async afterAccessDenied(bucketName: string, key: string, denied: unknown): Promise<undefined> {
    const dataref = `s3://${bucketName}/${key}`;
    let listed: readonly { readonly Key?: string }[];
    try {
      listed = (await this.client.send(new ListObjectsV2Command({ Bucket: bucketName, Prefix: key, MaxKeys: 1 }))).Contents ?? [];
    } catch (listing) {
      if (httpStatusOf(listing) !== 403 && nameOf(listing) !== 'AccessDenied') throw listing;
      throw new PayloadAccessDeniedError(
        `S3 refused GetObject of ${dataref} (403 AccessDenied), and listing its key too: the object is missing, or this function may not read it; ` +
          "grant it s3:ListBucket on the bucket (S3 then answers a missing key with 404, which dead-letters the event with its reason), and check s3:GetObject on the key and kms:Decrypt on the bucket's key. " +
          "Retried; the queue's maxReceiveCount moves it to the dead-letter queue",
        dataref,
        { cause: denied },
      );
    }
    if (!listed.some((object) => object.Key === key)) return undefined;
    throw new PayloadAccessDeniedError(
      `S3 refused GetObject of ${dataref} (403 AccessDenied), but the object is there: this function may not read it (check s3:GetObject on the key and kms:Decrypt on the bucket's key). ` +
        "Retried; the queue's maxReceiveCount moves it to the dead-letter queue",
      dataref,
      { cause: denied },
    );
  }
}
