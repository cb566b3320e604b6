/** A value a cross-stack reference stands for (see stack-template.ts). */

/**
 * What a cross-stack reference reads: the `Value` of an output of another stack, to be evaluated in that stack. It
 * renders as the reference itself (`toJSON`), so messages show the expression the template has.
 */
export class CrossStackValue {
  constructor(
    /** The stack whose output it is. */
    readonly stackName: string,
    /** The output's `Value` (its own template parameters replaced). */
    readonly value: unknown,
    /** The reference as the importing template has it. */
    readonly expression: unknown,
  ) {}

  toJSON(): unknown {
    return this.expression;
  }
}
