/**
 * An in-memory stand-in for effects outside DynamoDB (an email sent, an invoice created at a provider): it counts how
 * often each effect ran, so a run can check that each ran exactly once.
 */
export class EffectLedger {
  private readonly counts = new Map<string, number>();

  /** Records one execution of the effect `key` (e.g. `<event id>#<step>`). */
  public apply(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  public count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Executions in total. */
  public get total(): number {
    let total = 0;
    for (const n of this.counts.values()) total += n;
    return total;
  }

  /**
   * Violations of "each expected effect ran exactly once, and nothing else ran" (at most once: no effect twice;
   * completed: none missing), described with `label`; empty when the ledger holds exactly `expected`, once each.
   */
  public check(expected: readonly string[], label: string): string[] {
    const violations: string[] = [];
    const wanted = new Set(expected);
    for (const key of expected) {
      const n = this.count(key);
      if (n !== 1) violations.push(`${label}: effect ${key} ran ${n} times`);
    }
    for (const key of [...this.counts.keys()].sort()) if (!wanted.has(key)) violations.push(`${label}: unexpected effect ${key} ran ${this.count(key)} times`);
    return violations;
  }
}
