/**
 * The claim-check's part of the model of an event's whole life (issue 42, docs/LARGE-EVENTS.md): a local S3 (s3rver
 * behind the simulator's S3 endpoint) holds the payload bucket; the world's producer offloads an event over the inline
 * limit there and its consumer reads it back. This file keeps what the claim-check adds to the world: the events
 * offloaded, the objects the model altered or deleted after commit, the runtime's dead letters with their reasons, and
 * the rules an offloaded event must keep: a retried producer writes one object; data altered after commit never
 * reaches a handler; once the operator is done, each offloaded event is applied exactly once or dead-lettered with the
 * reason its object cannot be read (by the consumer, or, when its dead-letter send failed, moved by SQS and named by
 * the operator's refused redrive and `dlq show --fetch`). Not a test file.
 */
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { ClaimCheckConfig } from '../../../lambda/claim-check/claim-check-config';
import { sha256Hex } from '../../../lambda/claim-check/offload';
import { S3PayloadStore, type PayloadWriter } from '../../../lambda/claim-check/payload-store';
import { CLAIM_CHECK_ENV, parseDataRef } from '../../../lambda/contract/claim-check';
import type { DeadLetter } from '../../../lambda/consumer/dead-letter';
import { startLocalS3, type LocalS3 } from '../s3-local';

/**
 * How a model command commits an event over the inline limit, and what happens to its object after the commit.
 * - `intact`: nothing; it must be applied exactly once.
 * - `altered-after-commit`: the object is overwritten with other bytes of the same size (an administrator's raw write).
 * - `missing-after-commit`: the object is deleted (expired early, deleted by hand).
 * - `retried-after-lost-response`: the producer's first PutObject lands but its response is lost; the producer's retry
 *   (same event id) must write no second object and commit once.
 */
export type OffloadCase = 'intact' | 'altered-after-commit' | 'missing-after-commit' | 'retried-after-lost-response';

/** What the model does to an offloaded event's object after its commit. */
export type ObjectDamage = 'altered' | 'missing';

/** The key prefix of the model's payload objects. */
const PREFIX = 'event-data/';
/** Small enough that the model's large events (an attachment of 2,000 characters) are offloaded, and its small ones not. */
export const MODEL_INLINE_THRESHOLD = 1024;

/** The reason a consumer's dead letter must give for each damage (lambda/claim-check/resolve-payload.ts's messages). */
const REASONS: Record<ObjectDamage, RegExp> = {
  altered: /^offloaded data altered after the event was written/,
  missing: /^offloaded data missing, no retry can bring it back/,
};

interface Damaged {
  /** What befell the object, in order (altered, then deleted). */
  readonly damages: readonly ObjectDamage[];
  /** How often the event was applied when its object was damaged: no application may follow. */
  readonly appliedBefore: number;
}

/** The offloaded events of one run and the payload bucket they live in. */
export class OffloadedEvents {
  /** The offloaded events, in the order they were committed. */
  public readonly ids: string[] = [];
  private readonly damaged = new Map<string, Damaged>();
  private readonly letters: DeadLetter[] = [];
  /** Damaged events a consumer received, after the damage, in an invocation that lived and could send dead letters. */
  private readonly couldDeadLetter = new Set<string>();
  private readonly savedEnvironment: Record<string, string | undefined> = {};

  private constructor(
    private readonly s3: LocalS3,
    /** The producer's claim-check settings, as the flow sets them. */
    public readonly config: ClaimCheckConfig,
    /** The consumer's reader and the producer's writer. */
    public readonly store: S3PayloadStore,
  ) {}

  /** Starts the local S3 and the bucket. */
  public static async start(): Promise<OffloadedEvents> {
    const s3 = await startLocalS3();
    const bucketName = await s3.createBucket('life-payloads');
    return new OffloadedEvents(s3, { bucketName, keyPrefix: PREFIX, inlineThresholdBytes: MODEL_INLINE_THRESHOLD }, new S3PayloadStore(s3.client));
  }

  /**
   * Sets the consumer's payload bucket in the environment, as the constructs do (a consumer reads it when it is
   * built, and follows no reference outside it), until {@link stop}.
   */
  public configureConsumers(): void {
    const values = { [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]: this.config.bucketName, [CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]: this.config.keyPrefix };
    for (const [name, value] of Object.entries(values)) {
      this.savedEnvironment[name] = process.env[name];
      process.env[name] = value;
    }
  }

  public async stop(): Promise<void> {
    for (const [name, value] of Object.entries(this.savedEnvironment)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await this.s3.stop();
  }

  /** A writer whose first PutObject lands in S3 but whose response is lost (the SDK call throws after S3 stored it). */
  public losingFirstResponse(): PayloadWriter {
    let lose = true;
    return {
      putOnce: async (...args: Parameters<PayloadWriter['putOnce']>) => {
        const outcome = await this.store.putOnce(...args);
        if (lose) {
          lose = false;
          throw Object.assign(new Error('socket hang up after PutObject was sent (model)'), { name: 'TimeoutError' });
        }
        return outcome;
      },
    };
  }

  /** The keys of the objects written for `eventId` (whatever their content's digest). */
  public async objectsOf(eventId: string): Promise<string[]> {
    const listed = await this.s3.backendClient.send(new ListObjectsV2Command({ Bucket: this.config.bucketName, Prefix: `${PREFIX}${sha256Hex(eventId)}/` }));
    return (listed.Contents ?? []).map((object) => object.Key as string);
  }

  /** Notes an event the producer offloaded. */
  public committed(eventId: string): void {
    this.ids.push(eventId);
  }

  /**
   * Alters or deletes the object `dataref` names, behind the flow's back (the raw S3, no condition). False when there
   * was nothing to do: an object already deleted is not altered.
   */
  public async damage(eventId: string, dataref: string, damage: ObjectDamage, appliedBefore: number): Promise<boolean> {
    const location = parseDataRef(dataref);
    if (location === undefined) throw new Error(`the model's event ${eventId} has no readable dataref: ${dataref}`);
    const target = { Bucket: location.bucketName, Key: location.key };
    if (damage === 'missing') {
      await this.s3.backendClient.send(new DeleteObjectCommand(target));
    } else {
      if (this.damaged.get(eventId)?.damages.includes('missing') === true) return false;
      const text = await (await this.s3.backendClient.send(new GetObjectCommand(target))).Body?.transformToString('utf8');
      if (text === undefined) throw new Error(`the object of ${eventId} has no body to alter`);
      // one character changed: the same size, another SHA-256 (only the digest can tell)
      const at = text.lastIndexOf('x');
      await this.s3.backendClient.send(new PutObjectCommand({ ...target, Body: `${text.slice(0, at)}y${text.slice(at + 1)}` }));
    }
    // a second damage of one object keeps the first's record: what was applied before the first is what counts
    const first = this.damaged.get(eventId);
    // what was applied before the first damage is what counts
    this.damaged.set(eventId, { damages: [...(first?.damages ?? []), damage], appliedBefore: first?.appliedBefore ?? appliedBefore });
    return true;
  }

  /** True when the model altered or deleted the object of `eventId`. */
  public isDamaged(eventId: string): boolean {
    return this.damaged.has(eventId);
  }

  /** Notes a dead letter the consumer sent (the runtime's, with its reason). */
  public deadLettered(letter: DeadLetter): void {
    this.letters.push(letter);
  }

  /**
   * Notes a delivery of `eventId` to the consumer; `couldDeadLetter` when the invocation lived through it and its
   * dead-letter sends worked: a consumer that received a damaged event so had to dead-letter it with the reason.
   */
  public received(eventId: string, couldDeadLetter: boolean): void {
    if (couldDeadLetter && this.damaged.has(eventId)) this.couldDeadLetter.add(eventId);
  }

  /** What must hold after every command: data altered after commit never reached a handler (`applied`: the truth). */
  public check(applied: (eventId: string) => number): string[] {
    const violations: string[] = [];
    for (const [eventId, { damages, appliedBefore }] of this.damaged) {
      const damage = damages[0] as ObjectDamage;
      if (applied(eventId) > appliedBefore) violations.push(`offloaded event ${eventId} was applied after its object was ${damage === 'altered' ? 'altered' : 'deleted'}: ${damage === 'altered' ? 'the handler was handed data altered after commit' : 'applied without its data'}`);
    }
    return violations;
  }

  /**
   * Once the operator is done: an event whose object was damaged is applied exactly once (before the damage), or never
   * and dead-lettered by the consumer with the damage's reason, or never and, when no consumer could dead-letter it
   * (each delivery after the damage died or its dead-letter send failed: the queue's redrive policy then moves the
   * copy at maxReceiveCount, with no reason, docs/GUARANTEES.md), named where the operator sees it: `shown` is what
   * `dlq show --fetch` says of the data of that moved copy, which the operator's `dlq redrive` refused (undefined when
   * there is no such copy); it must give the damage's reason.
   * Undefined when the event's object was never damaged (the world's own rule decides), else the violation or `null`
   * when it holds.
   */
  public settled(eventId: string, applied: number, shown?: string): string | null | undefined {
    const damaged = this.damaged.get(eventId);
    if (damaged === undefined) return undefined;
    if (applied === 1) return null;
    const letters = this.letters.filter((letter) => letter.eventId === eventId);
    // the reason of one of the object's damages (a letter of an altered object deleted later may name either)
    const reasons = damaged.damages.map((damage) => REASONS[damage]);
    if (applied === 0 && letters.some((letter) => letter.errorName === 'PayloadUnavailableError' && reasons.some((reason) => reason.test(letter.errorMessage)))) return null;
    if (applied === 0 && shown !== undefined && !this.couldDeadLetter.has(eventId) && reasons.some((reason) => reason.test(shown))) return null;
    return (
      `after the operator is done, offloaded event ${eventId} (object ${damaged.damages.join(', then ')}) is applied ${applied} times and ` +
      (letters.length === 0 ? 'no dead letter of the consumer names it' : `its dead letters give other reasons: ${letters.map((letter) => `${letter.errorName}: ${letter.errorMessage.slice(0, 80)}`).join('; ')}`) +
      (shown === undefined
        ? ''
        : this.couldDeadLetter.has(eventId)
          ? ', although a consumer that could dead-letter it received it after the damage (SQS moved its copy)'
          : `; dlq show --fetch of its moved copy says: ${shown.slice(0, 80)}`)
    );
  }
}
