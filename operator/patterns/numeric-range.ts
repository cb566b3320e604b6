/**
 * The `numeric` operator shared by EventBridge event patterns and SNS filter policies: `["=", 5]`, `["<", 10]`,
 * `[">", 0, "<=", 5]`. A lower bound (`>`/`>=`) may be followed by an upper bound (`<`/`<=`) greater than it; nothing
 * else may follow. It matches JSON numbers only (EventBridge "Numeric matching works with values that are JSON numbers";
 * SNS compares numeric policies with Number attributes and JSON numbers of the body).
 *
 * SNS compares to five decimal digits (the caller passes `quantize`). Not emulated: the services' bounds on operands
 * (EventBridge -1e9..1e9 with 6 decimals, SNS -1e9..1e9) and EventBridge's rounding; its values compare as IEEE
 * doubles.
 */

type ComparisonOperator = '=' | '<' | '<=' | '>' | '>=';

const COMPARISON_OPERATORS: ReadonlySet<string> = new Set(['=', '<', '<=', '>', '>=']);

/** A compiled numeric condition. */
export type NumericMatcher = (value: number) => boolean;

function compare(operator: ComparisonOperator, value: number, operand: number): boolean {
  switch (operator) {
    case '=':
      return value === operand;
    case '<':
      return value < operand;
    case '<=':
      return value <= operand;
    case '>':
      return value > operand;
    case '>=':
      return value >= operand;
  }
}

function isOperand(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * Compiles the operand of `numeric`, or returns a sentence saying why it is malformed. `quantize` maps the operands and
 * each value before they are compared (SNS compares to five decimal digits). @param quantize default: the number itself
 */
export function compileNumericRange(operand: unknown, quantize: (value: number) => number = (value) => value): NumericMatcher | string {
  if (!Array.isArray(operand) || (operand.length !== 2 && operand.length !== 4)) {
    return `"numeric" needs an array of 2 or 4 elements such as [">", 0, "<=", 5], but was ${JSON.stringify(operand)}`;
  }
  const [firstOperator, firstValue, secondOperator, secondValue] = operand as unknown[];
  if (typeof firstOperator !== 'string' || !COMPARISON_OPERATORS.has(firstOperator)) {
    return `"numeric" comparison must be one of = < <= > >=, but was ${JSON.stringify(firstOperator)}`;
  }
  if (!isOperand(firstValue)) return `"numeric" value after "${firstOperator}" must be a number, but was ${JSON.stringify(firstValue)}`;
  const first = firstOperator as ComparisonOperator;
  const firstBound = quantize(firstValue);
  if (operand.length === 2) return (value: number): boolean => compare(first, quantize(value), firstBound);

  if (first !== '>' && first !== '>=') {
    return `"numeric" range must start with a lower bound (">" or ">="), but started with "${first}"`;
  }
  if (secondOperator !== '<' && secondOperator !== '<=') {
    return `"numeric" range upper bound must be "<" or "<=", but was ${JSON.stringify(secondOperator)}`;
  }
  if (!isOperand(secondValue)) return `"numeric" value after "${secondOperator}" must be a number, but was ${JSON.stringify(secondValue)}`;
  if (secondValue <= firstValue) return `"numeric" range bottom ${firstValue} must be less than top ${secondValue}`;
  const second = secondOperator as ComparisonOperator;
  const secondBound = quantize(secondValue);
  return (value: number): boolean => compare(first, quantize(value), firstBound) && compare(second, quantize(value), secondBound);
}
