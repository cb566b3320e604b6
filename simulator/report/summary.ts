/** The end-of-run report: a table per subscriber, the dead letters with their reasons, and the verdict. */
import { lastReceiveProbeLines } from './last-receive-probe-lines';
import { iamNotProvenReason, iamVerdictNote } from '../check/iam-not-evaluated';
import type { DeadLetterFinding } from '../check/dead-letters';
import type { HeldAggregate } from '../check/aggregate-order-coverage';
import { FAILURE_PATHS, FAILURE_PATHS_NOT_MET_ADVICE, notSteeredReason, type FailurePathsNotMet } from '../check/failure-paths';
import { runVerdict } from '../run/verdict';
import { warningText } from '../check/lease-below-timeout';
import type { GrantedPermission } from '../iam/access-types';
import { GRANTED_BY_USER } from '../iam/resolved-roles';
import type { SimulationResult, SubscriberReport } from '../run/simulation';
import type { SettingReference, ViolationCause } from '../check/violation-cause';
import { CATCH_UP_LIMIT_MS } from '../run/relay-catch-up';

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

/**
 * Said when a subscriber never met a dead letter: the only fault steered there is the last-receive probe's, given to a
 * subscriber on a standard queue with a redrive policy (not in aggregate mode, its deduplication window long enough).
 */
export const DEAD_LETTER_NOT_STEERED_TEXT =
  '(A dead letter is steered only by the last-receive probe, on a standard queue with a redrive policy, not in aggregate mode, whose deduplication window outlasts the redrive, to an event young enough for it; otherwise a malformed event or a blocked step takes that path.)';

/** Per subscriber, how often its consumer met each failure path, and the paths it never met (not proven by this run). */
export function failurePathLines(rows: readonly SubscriberReport[]): string[] {
  const lines = ['failure paths met (a path a subscriber never met is not proven by this run):'];
  for (const row of rows) {
    const counts = FAILURE_PATHS.map((path) => `${path} ${row.failurePaths[path]}`).join(', ');
    const missed = FAILURE_PATHS.filter((path) => row.failurePaths[path] === 0);
    lines.push(`  ${row.name}: ${counts}${missed.length === 0 ? '' : ` · never met: ${missed.join(', ')}`}`);
    const unsteered = notSteeredText(row);
    if (unsteered !== undefined) lines.push(`    ${unsteered}`);
    if (row.outcomesHidden !== undefined) lines.push(`    ${row.outcomesHidden}`);
  }
  return lines;
}

/** The paths a subscriber never met that the run could not steer to it, and why; undefined when there are none. */
function notSteeredText(row: SubscriberReport): string | undefined {
  const notSteered = row.failurePathsNotSteered;
  const missed = notSteered?.paths.filter((path) => row.failurePaths[path] === 0) ?? [];
  if (notSteered === undefined || missed.length === 0) return undefined;
  return `not steered to ${row.name}, so not proven: ${missed.join(', ')} (${notSteeredReason(notSteered.maxReceiveCount, notSteered.probed === true)})`;
}

/**
 * The subscribers that never met a failure path steered to them (`not-exercised`): a sentence to end a verdict's first
 * line, one line per subscriber and the advice; empty when every subscriber met its paths.
 */
function failurePathsNotMetLines(notMet: readonly FailurePathsNotMet[]): string[] {
  if (notMet.length === 0) return [];
  return [
    `${notMet.length} subscriber(s) never met a failure path the run's fault rates steer to them, so this run does not prove they handle it (not-exercised):`,
    ...notMet.map(({ subscriber, paths, eventsReached }) => `  ${subscriber}: never met ${paths.join(', ')} (${eventsReached} event(s) reached it)`),
    `  ${FAILURE_PATHS_NOT_MET_ADVICE}`,
  ];
}

/** The aggregates held behind an event never applied: where each stopped, and why (none: empty). */
function heldText(held: readonly HeldAggregate[] | undefined): string {
  if (held === undefined || held.length === 0) return '';
  const shown = held.slice(0, MAX_EVENTS_LISTED).map(({ aggregateId, appliedUpTo, waitsFor, cause }) => `${aggregateId} applied up to ${appliedUpTo}, sequence ${waitsFor.sequence} (event ${waitsFor.eventId}) ${cause}`);
  return `; held: ${shown.join('; ')}${held.length > shown.length ? `; and ${held.length - shown.length} more` : ''}`;
}

/**
 * Per ordered subscriber (one on a FIFO queue), what the `aggregate-order` check read: how many events of how many
 * aggregates it checked were applied in sequence order. None without ordered subscribers.
 */
export function aggregateOrderLines(rows: readonly SubscriberReport[]): string[] {
  const ordered = rows.flatMap((row) => (row.orderChecked === undefined ? [] : [{ name: row.name, ...row.orderChecked }]));
  if (ordered.length === 0) return [];
  return [
    'order per aggregate (aggregate-order: each aggregate\'s events applied in sequence, no gap left):',
    ...ordered.map(({ name, aggregates, events, held }) => `  ${name}: ${events} event(s) of ${aggregates} aggregate(s) checked${heldText(held)}`),
  ];
}

/** Longest example reason shown in the report (the JSON result has every reason whole). */
const MAX_REASON_CHARACTERS = 160;
/** Event ids listed per kind of reason. */
const MAX_EVENTS_LISTED = 4;

function truncate(text: string): string {
  return text.length > MAX_REASON_CHARACTERS ? `${text.slice(0, MAX_REASON_CHARACTERS - 1)}…` : text;
}

/** What kind of reason a dead letter has: the error name before the first colon, or how SQS moved it. */
function reasonKind(explanation: string | undefined): string {
  if (explanation === undefined) return 'UNEXPLAINED';
  if (explanation.startsWith('moved by SQS')) return 'moved by SQS after maxReceiveCount';
  return explanation.split(':')[0] ?? explanation;
}

/** One line per kind of reason of a subscriber's dead letters: how many events, which, and one reason in full. */
export function deadLetterLines(subscriber: string, findings: readonly DeadLetterFinding[]): string[] {
  const byKind = new Map<string, { events: Set<string>; copies: number; example: string }>();
  for (const finding of findings) {
    const kind = reasonKind(finding.explanation);
    const entry = byKind.get(kind) ?? { events: new Set<string>(), copies: 0, example: finding.explanation ?? 'no reason attribute and no recorded failure' };
    entry.events.add(finding.eventId ?? `message ${finding.messageId}`);
    entry.copies += 1;
    byKind.set(kind, entry);
  }
  return [...byKind].map(([kind, { events, copies, example }]) => {
    const listed = [...events].slice(0, MAX_EVENTS_LISTED).join(', ') + (events.size > MAX_EVENTS_LISTED ? ', …' : '');
    return `  ${subscriber}: ${events.size} event(s) in ${copies} message(s), ${kind} (${listed})\n      e.g. ${truncate(example)}`;
  });
}

/** Unused permissions listed per role in the report (the JSON result has them all). */
const MAX_UNUSED_LISTED = 3;

/**
 * The IAM line: requests authorized and denied, roles evaluated, permissions granted that no request used, per role and
 * per who granted them (the library's constructs and grant methods, by the Sid of their statements; the user).
 */
export function iamLine(result: SimulationResult): string {
  const iam = result.iam;
  if (!iam.evaluated) return `IAM: not evaluated: ${iam.reason}`;
  const unused = Object.values(iam.unusedPermissions).reduce((sum, permissions) => sum + permissions.length, 0);
  const lines = [
    `IAM: ${iam.requests} requests evaluated, ${iam.authorized} authorized, ${iam.denied} denied` +
      (iam.notEvaluated > 0 ? `, ${iam.notEvaluated} not evaluated` : '') +
      ` · ${iam.rolesEvaluated} roles evaluated · ${unused} granted permission(s) unused`,
  ];
  const listed = (permissions: readonly GrantedPermission[]): string =>
    permissions
      .slice(0, MAX_UNUSED_LISTED)
      .map((permission) => `${permission.action} on ${permission.resource}`)
      .join(', ') + (permissions.length > MAX_UNUSED_LISTED ? `, … (${permissions.length} in all)` : '');
  let libraryGrants = 0;
  for (const [role, permissions] of Object.entries(iam.unusedPermissions)) {
    const byGranter = new Map<string, GrantedPermission[]>();
    for (const permission of permissions) byGranter.set(permission.grantedBy, [...(byGranter.get(permission.grantedBy) ?? []), permission]);
    // the library's grants first (in the order of the role's statements), the user's last
    const granters = [...byGranter.keys()].sort((a, b) => Number(a === GRANTED_BY_USER) - Number(b === GRANTED_BY_USER));
    for (const granter of granters) {
      const granted = byGranter.get(granter)!;
      if (granter !== GRANTED_BY_USER) libraryGrants += granted.length;
      lines.push(`  unused by ${role}, granted by ${granter}: ${listed(granted)}`);
    }
  }
  if (libraryGrants > 0) {
    lines.push(
      "  (idempotent-event-flow's grants are marked by their Sid: a construct's own wiring, or a grant method a construct or you called; " +
        "some are needed only by what this run did not do, e.g. a dead letter or an operator's command; a construct's that no run needs is the library's bug: report it)",
    );
  }
  for (const reason of iam.notEvaluatedReasons.slice(0, MAX_UNUSED_LISTED)) lines.push(`  not evaluated: ${truncate(reason)}`);
  return lines.join('\n');
}

/** The relay line: records read, publish attempts that failed and were retried, what the pipes gave up on. */
export function relayLine(result: SimulationResult): string {
  const { committedEvents, offloadedEvents, streamRecords, failedAttempts, deadLettered, deadLetterMessages, lost, catchUpLimitMet } = result.relay;
  return (
    `relay: ${committedEvents} events committed to the outbox` +
    (offloadedEvents > 0 ? ` (${offloadedEvents} of them offloaded: their data in the payload bucket, the event carrying its reference)` : '') +
    `, ${streamRecords} stream records read, ${failedAttempts} publish attempt(s) failed and retried` +
    (deadLettered > 0 ? `, ${deadLettered} event(s) given up and dead-lettered by the pipe (${deadLetterMessages} message(s) of stream-batch metadata: replay their events from the outbox with idempotent-event-flow replay)` : '') +
    (lost > 0 ? `, ${lost} event(s) given up and LOST` : '') +
    (catchUpLimitMet === undefined ? '' : `; ${catchUpLimitUnmet(catchUpLimitMet)}`)
  );
}

/**
 * The relay line's note that a relay's catch-up gave up at its real-time limit `times` time(s): what it means and what
 * to do (simulator/run/relay-catch-up.ts).
 */
export function catchUpLimitUnmet(times: number): string {
  return (
    `a relay stopped waiting for its stream to catch up with its table ${times} time(s), after ${CATCH_UP_LIMIT_MS / 1000} s of real time each: ` +
    'the records it had not read reached the queues in a later round, when the stream\'s lag decided, so this run may not replay; ' +
    'a pipe that starts at LATEST misses what its table held before its first poll (start it at TRIM_HORIZON)'
  );
}

/** The SNS line: delivery attempts that failed and were retried, messages put on subscription dead-letter queues, lost. */
export function snsLine(result: SimulationResult): string {
  const { failedAttempts, deadLettered, undeliverable } = result.sns;
  return (
    `sns: ${failedAttempts} delivery attempt(s) to queues failed and retried` +
    (deadLettered > 0 ? `, ${deadLettered} message(s) put on subscription dead-letter queues` : '') +
    (undeliverable > 0 ? `, ${undeliverable} message(s) undeliverable and LOST` : '')
  );
}

/**
 * The DynamoDB line: requests refused with a transaction conflict by contention, as DynamoDB refuses a request that
 * meets an ongoing one on the same item, by operation; and the conflicts the run injected (fault steering: a write of a
 * subscriber refused on purpose, `transaction-conflict` faults), which a subscriber's `conflict` failure path counts
 * with its genuine ones, so the line and the subscribers' figures agree.
 */
export function dynamoDbLine(result: SimulationResult): string {
  const { refused, byOperation } = result.transactionConflicts;
  const operations = Object.entries(byOperation).map(([operation, count]) => `${count} ${operation}`);
  const injected = result.subscribers.reduce((sum, subscriber) => sum + (subscriber.faultsByKind['transaction-conflict'] ?? 0), 0);
  return (
    `dynamodb: ${refused} request(s) refused with a transaction conflict by contention (two requests meeting on one item)` +
    (operations.length > 0 ? ` (${operations.join(', ')})` : '') +
    (injected > 0 ? `, and ${injected} by injected faults (fault steering); a subscriber's conflict path below counts both` : '')
  );
}

/** The SQS line, when the functions sent messages with their own clients: per function and queue, the sends and the repeats. */
export function sqsSendsLine(result: SimulationResult): string | undefined {
  if (result.sqsSends.length === 0) return undefined;
  const entries = result.sqsSends.map(
    ({ functionName, queueName, sends, events, repeatedEvents, extraMessages }) =>
      `${functionName} to ${queueName} ${sends} for ${events} event(s)${repeatedEvents > 0 ? `, ${repeatedEvents} event(s) sent more than once` : ''}${extraMessages > 0 ? `, ${extraMessages} extra message(s)` : ''}`,
  );
  return `sqs: messages the functions sent with their own clients: ${entries.join('; ')}`;
}

/** Synth warnings and errors listed in the report (the JSON result has them all). */
const MAX_SYNTH_ANNOTATIONS_LISTED = 10;

/** Longest synth message shown whole in the report (the JSON result has each whole). */
const MAX_SYNTH_MESSAGE_CHARACTERS = 240;
/** Longest end of a long synth message kept after its cut. */
const MAX_SYNTH_MESSAGE_END_CHARACTERS = 160;

/**
 * A synth message, a long one cut in its middle: its beginning (what is wrong) and its last sentence with the
 * acknowledgement that silences it (`[ack: …]`) stay, as the last sentence usually says what to change.
 */
function shortenedSynthMessage(message: string): string {
  if (message.length <= MAX_SYNTH_MESSAGE_CHARACTERS) return message;
  const ack = /\s*\[ack: [^\]]*\]$/.exec(message)?.[0] ?? '';
  const body = message.slice(0, message.length - ack.length);
  const lastSentence = body.lastIndexOf('. ', body.length - 2);
  const sentenceEnd = lastSentence === -1 ? undefined : `${body.slice(lastSentence + 2)}${ack}`;
  const end = sentenceEnd !== undefined && sentenceEnd.length <= MAX_SYNTH_MESSAGE_END_CHARACTERS ? sentenceEnd : message.slice(-MAX_SYNTH_MESSAGE_END_CHARACTERS);
  return `${message.slice(0, MAX_SYNTH_MESSAGE_CHARACTERS - end.length - 2).trimEnd()}… ${end}`;
}

/** The synth's warnings and errors, when it reported any: a count, then one line each. */
export function synthLines(result: SimulationResult): string[] {
  const annotations = result.synthAnnotations;
  if (annotations.length === 0) return [];
  const errors = annotations.filter(({ level }) => level === 'error').length;
  const lines = [`synth: ${annotations.length - errors} warning(s), ${errors} error(s) (cdk synth printed them too):`];
  for (const { level, path, message } of annotations.slice(0, MAX_SYNTH_ANNOTATIONS_LISTED)) lines.push(`  [${level}] ${path}: ${shortenedSynthMessage(message)}`);
  if (annotations.length > MAX_SYNTH_ANNOTATIONS_LISTED) lines.push(`  … and ${annotations.length - MAX_SYNTH_ANNOTATIONS_LISTED} more (--json has them all)`);
  return lines;
}

/** How the report's line begins when the run's seed may not replay it (see {@link notReplayableLine}). */
export const NOT_REPLAYABLE = 'NOT REPLAYABLE';

/**
 * The line of a run its seed may not replay (`replayable: false`), naming each cause: something outside the seed acted
 * on a worker between two steps (how often, in which functions among the events kept, the first change), and a relay's
 * catch-up that stopped at its real-time limit; and what it means: the verdict is this run's, its seed may give another.
 */
export function notReplayableLine(result: SimulationResult): string {
  const reasons: string[] = [];
  const { count, first } = result.realTimeEvents;
  if (count > 0) {
    const byFunction = new Map<string, number>();
    for (const { environment } of first) {
      const functionKey = environment.replace(/#\d+$/, '');
      byFunction.set(functionKey, (byFunction.get(functionKey) ?? 0) + 1);
    }
    const functions = [...byFunction].map(([functionKey, events]) => `${functionKey} ${events}`).join(', ') + (first.length < count ? ` of the first ${first.length}` : '');
    const [earliest] = first;
    reasons.push(
      `something outside the seed acted on a worker between two steps, ${count} time(s) (${functions})` +
        (earliest === undefined ? '' : `; first at turn ${earliest.turn}, ${earliest.environment}: ${earliest.change}`) +
        '. Such as a connection the function keeps to a service outside the simulation (a Redis or database pool, an HTTP agent of its own) ' +
        'that the service closed in real time, a socket answering, a child process ending: when it came was the machine\'s timing, not the seed\'s. ' +
        'Open such connections per invocation, or keep the service from closing them during the run',
    );
  }
  const catchUp = result.relay.catchUpLimitMet ?? 0;
  if (catchUp > 0) {
    reasons.push(
      `a relay stopped waiting for its stream to catch up with its table ${catchUp} time(s) (see the relay line): ` +
        "when its unread records reached the queues was the stream's lag on this machine, not the seed's. " +
        'A pipe that starts at LATEST misses what its table held before its first poll: start it at TRIM_HORIZON',
    );
  }
  return `${NOT_REPLAYABLE}: ${reasons.join('; and ')}. The verdict below is this run's; the same seed, start and concurrency may give another run.`;
}

/** A failing run's replay line (`command` replays it), with a note when the run was not replayable (see {@link notReplayableLine}). */
export function replayLines(command: string, replayable: boolean): string {
  return `replay this run: ${command}\n` + (replayable ? '' : `  (it may give another run: ${NOT_REPLAYABLE}, see above)\n`);
}

/** The whole report. */
export function formatSummary(result: SimulationResult): string {
  const out: string[] = [];
  const producer = result.producer;
  out.push(
    `seed ${result.seed} · ${result.rounds} rounds · ${result.realSeconds} s real, ${result.simulatedSeconds} s simulated · ${result.totalFaults} faults injected`,
    `producer: ${producer.succeeded}/${producer.total} succeeded, ${producer.retried} retried, ${producer.failed.length} failed` +
      (producer.failed.length
        ? ` (${producer.failed.slice(0, 3).map((failure) => `#${failure.index + 1}: ${truncate(failure.reason)}`).join('; ')}` +
          '; a command that failed may still have committed before the failure was seen, e.g. a crash or lost response after the commit; the relay check counts what committed)'
        : '') +
      (producer.byProducer === undefined
        ? ''
        : ` · ${producer.byProducer.map((entry) => `${entry.producer} ${entry.succeeded}/${entry.total}`).join(', ')}`),
    relayLine(result),
    snsLine(result),
    dynamoDbLine(result),
  );
  const sends = sqsSendsLine(result);
  if (sends !== undefined) out.push(sends);
  out.push(iamLine(result));
  out.push(...synthLines(result));
  out.push(...(result.warnings ?? []).map(warningText));
  const operator = result.operator;
  if (operator !== undefined) {
    out.push(
      `operator: ${operator.resolvedSuccess + operator.resolvedTryAgain} blocked step(s) resolved (${operator.resolvedSuccess} SUCCESS, ${operator.resolvedTryAgain} TRY_AGAIN) ` +
        `in ${operator.passes} pass(es), ${operator.movedBack} dead letter(s) moved back` +
        (operator.refused.length ? `; ${operator.refused.length} resolution(s) refused (${truncate(operator.refused[0]!)})` : '') +
        (operator.redriveRefused.length ? `; ${operator.redriveRefused.length} dead letter(s) left by dlq redrive's rules (${truncate(operator.redriveRefused[0]!)})` : ''),
    );
  }
  out.push(...lastReceiveProbeLines(result.lastReceiveProbes ?? []));
  const untaken = result.untakenEvents;
  if (untaken.length > 0) {
    const count = untaken.reduce((sum, { eventIds }) => sum + eventIds.length, 0);
    out.push(`events no subscription took: ${count} of ${result.relay.committedEvents} committed (${untaken.map(({ type, eventIds }) => `${type} ${eventIds.length}`).join(', ')}): no filter policy takes them`);
  }
  out.push('', formatTable(result.subscribers), '', ...failurePathLines(result.subscribers));
  const orderLines = aggregateOrderLines(result.subscribers);
  if (orderLines.length > 0) out.push('', ...orderLines);
  const deadLetters = [...result.deadLetters].filter(([, findings]) => findings.length > 0);
  if (deadLetters.length > 0) {
    out.push('', 'dead letters, by reason (every one is explained; --json has each reason in full):');
    for (const [subscriber, findings] of deadLetters) out.push(...deadLetterLines(subscriber, findings));
  }
  const unreached = result.producer.total > 0 ? result.subscribers.filter((row) => row.events === 0).map((row) => row.name) : [];
  const { committedEvents, deadLettered: relayDeadLettered, lost: relayLost } = result.relay;
  if (unreached.length > 0 && committedEvents > 0 && relayDeadLettered + relayLost >= committedEvents) {
    out.push(
      '',
      `no event reached ${unreached.join(', ')}: the relay gave up on all ${committedEvents} committed event(s) before they reached a topic ` +
        '(see the relay line), so no filter policy was tried. Nothing was checked for it.',
    );
  } else if (unreached.length > 0) {
    out.push(
      '',
      `no event reached ${unreached.join(', ')}: none matched its filter policy, or its topic is fed by another outbox than the one ` +
        "the run wrote to (an --events event goes to the first outbox unless it names its 'flow'; a scenario producer writes where its code does; " +
          "a scenario's 'producers' drive several flows). Nothing was checked for it.",
    );
  }
  if (result.notSimulated.length > 0) out.push('', 'not simulated:', ...result.notSimulated.map((line) => `  ${line}`));
  if (!result.replayable) out.push('', notReplayableLine(result));
  out.push('');
  if (result.violations.length === 0) {
    const notCounted = result.effectsNotCounted;
    const counted = result.subscribers.length - notCounted.length;
    const effects = counted === 0 ? '' : `${notCounted.length === 0 ? 'each effect' : 'each counted effect'} applied exactly once (at most once when dead-lettered); `;
    const producerWrites =
      result.producerWritesChecked === true ? `every business change of the producer${result.producer.byProducer === undefined ? '' : 's'} committed with its events; ` : '';
    const givenUp = result.relay.deadLettered + result.sns.deadLettered;
    const reached =
      givenUp === 0
        ? 'every event reached every matching subscriber'
        : `every event reached every matching subscriber or is on a dead-letter queue an alarm watches (${result.relay.deadLettered} given up by the relay, ${result.sns.deadLettered} by SNS)`;
    const orderChecked = result.subscribers.filter((row) => row.orderChecked !== undefined);
    const inOrder = orderChecked.length === 0 ? '' : `each aggregate's events applied in sequence by ${orderChecked.length === 1 ? 'the ordered subscriber' : `each of the ${orderChecked.length} ordered subscribers`}; `;
    const claims = `${producerWrites}${reached}; ${effects}${inOrder}every valid event applied by every subscriber its filter took; every dead letter explained`;
    const notExercised = result.notExercised ?? [];
    const iamNotProven = iamNotProvenReason(result.iam);
    // the failure paths steered to a subscriber that it never met: the run proves too little (simulator/check/failure-paths.ts)
    const [pathsNotMet, ...pathsNotMetItems] = failurePathsNotMetLines(result.failurePathsNotMet ?? []);
    if (notExercised.length === 0 && iamNotProven === undefined) {
      if (pathsNotMet === undefined) out.push(`OK: ${claims}.${result.iam.evaluated ? '' : iamVerdictNote(result.iam)}`);
      else out.push(`NOT PROVEN: no check failed (${claims}), but ${pathsNotMet}`, ...pathsNotMetItems);
      if (pathsNotMet !== undefined && !result.iam.evaluated) out.push(iamVerdictNote(result.iam).trim());
    } else if (notExercised.length === 0) {
      // across accounts, IAM is what wires the app: unchecked, an OK would claim it (simulator/check/iam-not-evaluated.ts)
      out.push(`NOT PROVEN: no check failed (${claims}), but ${iamNotProven}.`);
    } else {
      // no check failed, but a subscriber that received nothing proved nothing (simulator/check/not-exercised.ts)
      out.push(`NOT PROVEN: no check failed (${claims}), but exactly-once was not exercised for ${notExercised.length} subscriber(s) that received no event:`);
      for (const { subscriber, reason } of notExercised) out.push(`  ${subscriber}: received no event: ${reason}`);
      if (!result.iam.evaluated) out.push(iamNotProven === undefined ? iamVerdictNote(result.iam).trim() : `${iamNotProven}.`);
    }
    if (pathsNotMet !== undefined && (notExercised.length > 0 || iamNotProven !== undefined)) out.push(`Also not proven: ${pathsNotMet}`, ...pathsNotMetItems);
    const unproven = result.subscribers.flatMap((row) => {
      const missed = FAILURE_PATHS.filter((path) => row.failurePaths[path] === 0);
      return missed.length === 0 ? [] : [`${row.name} (${missed.join(', ')})`];
    });
    if (unproven.length > 0) {
      const deadLetterMissed = result.subscribers.some((row) => row.failurePaths['dead-letter'] === 0);
      out.push(
        `Failure paths this run never took, so this ${runVerdict(result) === 'OK' ? 'OK' : 'run'} does not prove them: ${unproven.join('; ')}.` +
          (deadLetterMissed ? ` ${DEAD_LETTER_NOT_STEERED_TEXT}` : ''),
      );
      for (const row of result.subscribers) {
        const unsteered = notSteeredText(row);
        if (unsteered !== undefined) out.push(`${unsteered.charAt(0).toUpperCase()}${unsteered.slice(1)}.`);
      }
    }
    if (notCounted.length > 0) {
      out.push(`Effects were NOT checked for ${notCounted.join(', ')} (no effect probe in the scenario): exactly-once is unproven for them.`);
    }
  } else {
    if (result.effectsNotCounted.length > 0) out.push(`effects not counted (no effect probe in the scenario): ${result.effectsNotCounted.join(', ')}`);
    out.push(`VIOLATED: ${result.violations.length} invariant violation(s):`);
    const causes = new Map(result.causes.map((caused) => [caused.violation, caused.causes]));
    const fixesPrinted = new Set<string>();
    result.violations.forEach((violation, index) => {
      out.push(`  [${violation.kind}]${violation.subscriber ? ` ${violation.subscriber}:` : ''} ${printedDetail(violation.detail, causes.get(index) ?? [])}`);
      for (const line of causeLines(causes.get(index) ?? [], fixesPrinted, violation.subscriber)) out.push(`      ${line}`);
    });
    // a violation wins the verdict; the failure paths a subscriber never met are still what the run does not prove
    const [pathsNotMet, ...pathsNotMetItems] = failurePathsNotMetLines(result.failurePathsNotMet ?? []);
    if (pathsNotMet !== undefined) out.push(`Also not proven: ${pathsNotMet}`, ...pathsNotMetItems);
  }
  return `${out.join('\n')}\n`;
}

/**
 * A violation's detail as the text report prints it: without the fix of a cause it carries, which the cause's own line
 * prints (so each fix is printed once per violation; `--json` keeps the detail whole).
 */
export function printedDetail(detail: string, causes: readonly ViolationCause[]): string {
  let printed = detail;
  for (const fix of new Set(causes.map((cause) => cause.fix))) printed = printed.split(`: ${fix}`).join('').split(`; ${fix}`).join('');
  return printed;
}

/**
 * A cause's setting: its value, and the most it may be, the least it should be, the delay the run met that it did not
 * cover, or the newer events of an aggregate that pushed an event out of its processed list.
 */
export function settingText(setting: SettingReference): string {
  const told = [
    ...(setting.needed === undefined ? [] : [`at most ${setting.needed} allowed`]),
    ...(setting.least === undefined ? [] : [`at least ${setting.least} recommended`]),
    ...(setting.observedDelay === undefined ? [] : [`a redelivery came after ${setting.observedDelay} s`]),
    ...(setting.newerApplied === undefined ? [] : [`${setting.newerApplied} newer events of the aggregate applied before the redelivery`]),
  ];
  return [`${setting.name} ${typeof setting.value === 'number' ? setting.value : JSON.stringify(setting.value)}`, ...told].join(', ');
}

/**
 * The distinct causes of a violation, one line each: the kind, where, and the change to make, told once per run for a
 * subscriber, kind and fix (`fixesPrinted` holds those told by earlier violations; a later line says `as for <kind>
 * above`).
 */
function causeLines(causes: readonly ViolationCause[], fixesPrinted: Set<string>, subscriber: string | undefined): string[] {
  const byKind = new Map<string, ViolationCause[]>();
  for (const cause of causes) byKind.set(cause.kind, [...(byKind.get(cause.kind) ?? []), cause]);
  return [...byKind].map(([kind, told]) => {
    const events = [...new Set(told.flatMap((cause) => cause.eventIds))];
    const setting = told.find((cause) => cause.setting !== undefined)?.setting;
    const calls = [...new Set(told.flatMap((cause) => (cause.calls ?? []).map((call) => `${call.method} ${call.host}${call.path}`)))];
    const eventType = told.find((cause) => cause.eventType !== undefined)?.eventType;
    const where = [
      ...(eventType === undefined ? [] : [`type ${eventType}`]),
      ...(events.length === 0 ? [] : [`event(s) ${events.slice(0, 3).join(', ')}${events.length > 3 ? ` and ${events.length - 3} more` : ''}`]),
      ...(setting === undefined ? [] : [settingText(setting)]),
      ...(calls.length === 0 ? [] : [`call(s) ${calls.join(', ')}`]),
    ];
    const fix = told[0]!.fix;
    const key = `${subscriber ?? ''}\n${kind}\n${fix}`;
    const toldBefore = fixesPrinted.has(key);
    fixesPrinted.add(key);
    return `cause: ${kind}${where.length === 0 ? '' : ` (${where.join('; ')})`}; fix: ${toldBefore ? `as for ${kind} above` : fix}`;
  });
}
