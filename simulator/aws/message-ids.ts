/**
 * Identifiers of the simulated messaging services. They must not depend on chance (no `Math.random`, no
 * `randomUUID`): the same sequence of operations gives the same ids, so a seeded run replays exactly.
 */
import { createHash } from 'node:crypto';

/**
 * A UUID-shaped id (the version-4 layout SQS and SNS message ids have) that depends only on `namespace` and
 * `sequence`: the first 122 bits of SHA-256 of both.
 */
export function deterministicUuid(namespace: string, sequence: number): string {
  const hex = createHash('sha256').update(`${namespace}\n${sequence}`).digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Hands out {@link deterministicUuid}s of one namespace in order: 1st, 2nd, ... */
export class IdSequence {
  private issued = 0;

  public constructor(private readonly namespace: string) {}

  /** The next id of the namespace. */
  public next(): string {
    this.issued += 1;
    return deterministicUuid(this.namespace, this.issued);
  }
}

/**
 * Hands out {@link deterministicUuid}s keyed by content (e.g. the event a message carries): the n-th id for one content
 * depends only on the namespace, the content and n, not on what else was handed out before. Fault decisions keyed on such ids then follow the message,
 * whatever order messages arrive in (at concurrency above 1, events commit in an order that varies from run to run).
 */
export class ContentIds {
  private readonly issued = new Map<string, number>();

  public constructor(private readonly namespace: string) {}

  /** The next id for `content`: its 1st, 2nd, ... */
  public next(content: string): string {
    const digest = createHash('sha256').update(content).digest('hex');
    const count = (this.issued.get(digest) ?? 0) + 1;
    this.issued.set(digest, count);
    return deterministicUuid(`${this.namespace}\n${digest}`, count);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The event envelope a message carries, as a JSON object, so one event can be followed through the flow: a JSON object
 * body itself; a JSON string holding one (a pipe input template may render the envelope quoted; the consumer accepts
 * both); or, for an SNS notification (`Type: 'Notification'`, what a subscription without raw delivery puts on its
 * queue), the envelope in its `Message`. Undefined for anything else.
 */
export function envelopeObjectOf(body: string): Record<string, unknown> | undefined {
  let parsed = parseJson(body);
  if (typeof parsed === 'string') parsed = parseJson(parsed);
  const object = asObject(parsed);
  if (object?.Type === 'Notification' && typeof object.Message === 'string') return envelopeObjectOf(object.Message);
  return object;
}

/** The envelope subject ({@link envelopeObjectOf}'s string `subject`, the aggregate) a message carries; undefined when it carries none. */
export function eventSubjectOf(body: string): string | undefined {
  const subject = envelopeObjectOf(body)?.subject;
  return typeof subject === 'string' ? subject : undefined;
}

/** The envelope id ({@link envelopeObjectOf}'s string `id`) a message carries; undefined when it carries none. */
export function eventIdOf(body: string): string | undefined {
  const id = envelopeObjectOf(body)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** The envelope time ({@link envelopeObjectOf}'s `time`) a message carries, epoch milliseconds; undefined when it carries none readable. */
export function eventTimeOf(body: string): number | undefined {
  const time = envelopeObjectOf(body)?.time;
  const parsed = typeof time === 'string' ? Date.parse(time) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : undefined;
}
