/** The end-of-run report: a table per subscriber, the dead letters with their reasons, and the verdict. */
import type { DeadLetterFinding } from '../check/dead-letters';
import type { SimulationResult, SubscriberReport } from '../run/simulation';

const COLUMNS: readonly { readonly title: string; readonly cell: (row: SubscriberReport) => string }[] = [
  { title: 'subscriber', cell: (row) => row.name },
  { title: 'mode', cell: (row) => row.processingMode ?? '-' },
  { title: 'events', cell: (row) => String(row.events) },
  { title: 'deliveries', cell: (row) => String(row.deliveries) },
  { title: 'duplicates suppressed', cell: (row) => String(row.duplicatesSuppressed) },
  { title: 'faults injected', cell: (row) => String(row.faults) },
  { title: 'retries', cell: (row) => String(row.retries) },
  { title: 'DLQ', cell: (row) => String(row.deadLettered) },
  {
    title: 'effects (expected)',
    cell: (row) => (row.effects === undefined ? 'not counted' : `${row.effects.applied} (${row.effects.min === row.effects.max ? row.effects.min : `${row.effects.min}-${row.effects.max}`})`),
  },
];

/** A plain-text table; numbers right-aligned. */
export function formatTable(rows: readonly SubscriberReport[]): string {
  const cells = rows.map((row) => COLUMNS.map((column) => column.cell(row)));
  const widths = COLUMNS.map((column, index) => Math.max(column.title.length, ...cells.map((row) => row[index]!.length)));
  const line = (values: readonly string[]): string =>
    values.map((value, index) => (index < 2 ? value.padEnd(widths[index]!) : value.padStart(widths[index]!))).join('  ').trimEnd();
  return [line(COLUMNS.map((column) => column.title)), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}

/** Longest reason shown in the report (the JSON result has them whole). */
const MAX_REASON_CHARACTERS = 200;

/** One line per dead-lettered event of a subscriber: its copies and the first reason. */
export function deadLetterLines(subscriber: string, findings: readonly DeadLetterFinding[]): string[] {
  const byEvent = new Map<string, DeadLetterFinding[]>();
  for (const finding of findings) {
    const key = finding.eventId ?? `message ${finding.messageId}`;
    byEvent.set(key, [...(byEvent.get(key) ?? []), finding]);
  }
  return [...byEvent].map(([event, copies]) => {
    const unexplained = copies.filter((copy) => copy.explanation === undefined).length;
    const reason = copies.find((copy) => copy.explanation !== undefined)?.explanation ?? 'UNEXPLAINED';
    const shown = reason.length > MAX_REASON_CHARACTERS ? `${reason.slice(0, MAX_REASON_CHARACTERS - 1)}…` : reason;
    const count = copies.length > 1 ? ` (${copies.length} copies${unexplained ? `, ${unexplained} UNEXPLAINED` : ''})` : '';
    return `  ${subscriber}: ${event}${count}: ${shown}`;
  });
}

/** The whole report. */
export function formatSummary(result: SimulationResult): string {
  const out: string[] = [];
  const producer = result.producer;
  out.push(
    `seed ${result.seed} · ${result.rounds} rounds · ${result.realSeconds} s real, ${result.simulatedSeconds} s simulated · ${result.totalFaults} faults injected`,
    `producer: ${producer.succeeded}/${producer.total} succeeded, ${producer.retried} retried, ${producer.failed.length} failed` +
      (producer.failed.length ? ` (${producer.failed.slice(0, 3).map((failure) => `#${failure.index}: ${failure.reason}`).join('; ')})` : ''),
    `relay: ${result.relay.committedEvents} events committed to the outbox, ${result.relay.streamRecords} stream records read`,
    '',
    formatTable(result.subscribers),
  );
  const deadLetters = [...result.deadLetters].filter(([, findings]) => findings.length > 0);
  if (deadLetters.length > 0) {
    out.push('', 'dead letters (one line per event; every copy is explained, the first reason is shown):');
    for (const [subscriber, findings] of deadLetters) out.push(...deadLetterLines(subscriber, findings));
  }
  if (result.effectsNotCounted.length > 0) out.push('', `effects not counted (no probe in the scenario): ${result.effectsNotCounted.join(', ')}`);
  if (result.notSimulated.length > 0) out.push('', 'not simulated:', ...result.notSimulated.map((line) => `  ${line}`));
  out.push('');
  if (result.violations.length === 0) {
    out.push('OK: every event reached every matching subscriber; each effect applied exactly once (at most once when dead-lettered); every dead letter explained.');
  } else {
    out.push(`VIOLATED: ${result.violations.length} invariant violation(s):`);
    for (const violation of result.violations) out.push(`  [${violation.kind}]${violation.subscriber ? ` ${violation.subscriber}:` : ''} ${violation.detail}`);
  }
  return `${out.join('\n')}\n`;
}
