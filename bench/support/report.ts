/** The bench's result rows and their Markdown tables. Pure: no AWS SDK. */
import { isReadOperation } from './capacity-rules';
import { emptyFigures, type Figures, type OperationFigures } from './meter';

/** One measured scenario. */
export interface Row {
  readonly scenario: string;
  readonly figures: Figures;
  /** What "per message" divides by. */
  readonly messages: number;
  readonly notes: string;
}

/** What a mode's scenarios produced. */
export interface ModeResult {
  readonly rows: Row[];
  /** Lines of the exactly-once section (what was checked and found). */
  readonly checks: string[];
  /** Exactly-once violations; empty when none. */
  readonly violations: string[];
  /** Item sizes worth listing, as stored: label and bytes. */
  readonly sizes: Array<[string, number]>;
}

export const fixed = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(3).replace(/0+$/, ''));
export const count = (value: number): string => value.toLocaleString('en-US');

/** The figures of the given operations added up (all of them by default). */
export function totalOf(figures: Figures, include: (op: string) => boolean = () => true): OperationFigures {
  const total = emptyFigures();
  for (const [name, op] of figures.entries()) {
    if (!include(name)) continue;
    total.requests += op.requests;
    total.attempts += op.attempts;
    total.reportedUnits += op.reportedUnits;
    total.reported += op.reported;
    total.unreported += op.unreported;
    total.ruleUnits += op.ruleUnits;
    total.failedRuleUnits += op.failedRuleUnits;
    total.ruleChecked += op.ruleChecked;
    total.ruleMismatches.push(...op.ruleMismatches);
    for (const [error, n] of Object.entries(op.errors)) total.errors[error] = (total.errors[error] ?? 0) + n;
  }
  return total;
}

/** Write capacity of a row by the rule, failed writes included. */
export const ruleWriteUnits = (figures: Figures): number => {
  const writes = totalOf(figures, (op) => !isReadOperation(op));
  return writes.ruleUnits + writes.failedRuleUnits;
};

/** Read capacity of a row by the rule. */
export const ruleReadUnits = (figures: Figures): number => totalOf(figures, isReadOperation).ruleUnits;

function reportedCell(op: OperationFigures, messages: number): string {
  if (op.requests === 0) return '—';
  if (op.reported === 0 && op.unreported > 0) return 'not reported';
  const value = `${fixed(op.reportedUnits / messages)}${op.unreported > 0 ? ' †' : ''}`;
  return op.ruleMismatches.length > 0 ? `${value} §` : value;
}

function ruleCell(op: OperationFigures, messages: number): string {
  if (op.requests === 0) return '—';
  if (op.ruleChecked === 0) return 'not checked';
  const value = fixed((op.ruleUnits + op.failedRuleUnits) / messages);
  const failed = op.failedRuleUnits > 0 ? ` (failed: ${fixed(op.failedRuleUnits / messages)})` : '';
  return `${value}${failed}${op.ruleChecked < op.requests ? ' *' : ''}`;
}

function errorNote(op: OperationFigures): string {
  const errors = Object.entries(op.errors).map(([name, n]) => `${count(n)} × ${name}`);
  return errors.length === 0 ? '' : `failed: ${errors.join(', ')}`;
}

export const TABLE_HEADER = [
  '| scenario | operation | requests/message | WCU/message, reported by DynamoDB Local | WCU/message, AWS rule | RCU/message, reported by DynamoDB Local | RCU/message, AWS rule | notes |',
  '|---|---|---:|---:|---:|---:|---:|---|',
];

/** The Markdown table of `rows`: one line per operation, plus a total line when a row used more than one. */
export function renderTable(rows: readonly Row[]): string {
  const lines = [...TABLE_HEADER];
  const none = emptyFigures();
  for (const row of rows) {
    const ops = [...row.figures.entries()];
    const cells = (label: string, write: OperationFigures, read: OperationFigures, notes: string): string =>
      `| ${label} | ${fixed((write.requests + read.requests) / row.messages)} | ${reportedCell(write, row.messages)} | ${ruleCell(write, row.messages)} | ` +
      `${reportedCell(read, row.messages)} | ${ruleCell(read, row.messages)} | ${notes} |`;
    ops.forEach(([name, op], index) => {
      const notes = [index === 0 ? row.notes : '', errorNote(op)].filter((note) => note !== '').join('; ');
      const [write, read] = isReadOperation(name) ? [none, op] : [op, none];
      lines.push(`| ${index === 0 ? row.scenario : ''} ${cells(name, write, read, notes)}`);
    });
    if (ops.length > 1) {
      lines.push(`| ${cells('**total**', totalOf(row.figures, (op) => !isReadOperation(op)), totalOf(row.figures, isReadOperation), '')}`);
    }
  }
  return lines.join('\n');
}

/** The legend under every results table. */
export const TABLE_LEGEND =
  '"requests" are DynamoDB API calls made by the code under test. WCU columns count writes, RCU columns reads. ' +
  '"AWS rule" is computed by the bench from the sizes of the items before and after each request (read by a separate client, not counted); ' +
  '"(failed: x)" is the part of it charged for failed conditional writes and cancelled transactions, which AWS charges but DynamoDB Local does not report ' +
  '(a failed PutItem by the larger of the stored and the sent item, a failed UpdateItem by the stored item, a cancelled transaction like a committed one, 2 WCU per started KB of each item). ' +
  '† Local returned no `ConsumedCapacity` for some of the requests (the failed ones), so its figure covers the successful ones only. ' +
  '§ Local\'s figure differs from the rule (listed below the tables). * not every request was checked against the rule.';
