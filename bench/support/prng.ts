import { seededRandom } from '../../test/support/at-least-once';

/** A small seeded PRNG (the proof tests' mulberry32), so a run is reproducible from its `--seed`. */
export class Prng {
  private readonly random: () => number;

  public constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  /** A float in [0, 1). */
  public next(): number {
    return this.random();
  }

  /** An integer in [min, max]. */
  public int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element of a non-empty array. */
  public pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)] as T;
  }

  /** A version-4-shaped UUID drawn from this generator (same length and alphabet as `crypto.randomUUID`). */
  public uuid(): string {
    const bytes: number[] = [];
    for (let i = 0; i < 16; i++) bytes.push(Math.floor(this.next() * 256));
    bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
    bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
    const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
