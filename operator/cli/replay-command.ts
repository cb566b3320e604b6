/**
 * `idempotent-event-flow replay`: sends committed events from the outbox to ONE subscriber's queue, with their original
 * ids, so the subscriber's inbox drops what it already applied (a replay twice applies once). For events the relay gave
 * up on (its dead letters hold stream batch metadata, not the events) and for a subscriber added later that needs
 * history within the outbox's retention.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import { INBOX_ITEM, PROCESSING_RECORD, RECORD_STATUS, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { listOption, parseTime } from './arguments';
import { formatTable } from './blocked-command';
import { copyWaitOf } from './dead-letters/copy-wait';
import { DEFAULT_SAFETY_MARGIN_SECONDS, windowRefusal } from './dead-letters/redrive-decision';
import { compileFilterPolicy } from '../patterns/filter-policy';
import type { SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { aggregateModeRefusal, DEPLOYED_SUBSCRIBER_HELP, DEPLOYED_SUBSCRIBER_OPTIONS, resolveSubscriber, type ResolvedSubscriber } from './deployed-subscriber';
import { isFifoQueueUrl } from './dead-letters/ordered-sends';
import { replayOrdered } from './ordered-replay';
import { replayNeedsOutputLine } from './replay-needs-output';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { OUTBOX_TTL_ATTRIBUTE_OPTION, outboxTimeToLive, outboxTtlAttributeHelp } from './outbox-ttl-attribute';
import { PAST_RETENTION_TEXT } from './outbox-events';
import { earliestApplication, outboxEventsById, outboxEventsInRange, pastRetention, type OutboxEvent } from './outbox-events';
import { terminalText } from './terminal-text';
import { aggregateDecision, readAggregateApplications, type AggregateApplications } from './aggregate-applications';
import { MAY_BE_QUEUED_TEXT, queueOccupancy, queuedCopyRefusal, queuedCopyReplayableAfter, REPLAY_AUDIT, type DeadLetterOccupancy } from './queued-copy';
import { FLOW_PROFILE_HELP, FLOW_PROFILE_OPTION, flowAccountClient, nameMissingOutbox } from './flow-account-client';
import { flowProfileRefusal, topicEnvironment } from './flow-identity';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { FLOW_OUTPUT_HELP, FLOW_OUTPUT_OPTION, readFlowOutput, type FlowOperatorOutput } from './flow-output';

const USAGE = `Usage:
  idempotent-event-flow replay --subscriber-output <json|@file> (--event-id <id>... | --since <time> [--until <time>]
      [--type <type>]...) [--table <outbox table>] [--flow-profile <profile>] [--allow-expired] [--allow-reapply] [--yes] [--json]
  idempotent-event-flow replay --table <outbox table> --queue <subscriber queue url> --subscriber <name>
      --processing-mode <mode> --deduplication-window <duration> --filter-policy <json|none> (--event-id ... | --since ...)

Reads committed events from the outbox table and sends each, exactly as the relay publishes it (the same body, the
same event id), to one subscriber's queue. The subscriber's inbox drops an event it already applied, so a replay
applies only what is missing, and replaying twice applies once. A dry run unless --yes is given (at a terminal it
asks).

The subscriber is best named by its <subscriber>/Operator stack output (--subscriber-output): its queue, processing
mode, deduplication window, subscription filter policy and its flow's outbox table come from what was deployed, and a
flag that disagrees with it is refused (exit code 2). Without it, the flags say all of that.

When to use it: the relay gave up on a batch (its dead-letter queue holds stream batch metadata; 'dlq list' shows
their time range), or a subscriber added later needs the events it missed. The outbox keeps events for its retention
(eventRetention, 7 days by default), then its TTL removes them: older events can not be replayed. DynamoDB deletes
an expired item only within days, and reads return it until then: an item past its TTL is not sent either (its
offloaded data may be gone with the retention); it is named as past the outbox's retention (pastRetention in --json),
and the exit code is 3. To an ordered subscriber, such a history item is named as not in the history. An item's
expiry is read under the outbox table's TTL attribute. The one given is --outbox-ttl-attribute, else the Operator
output's outboxTimeToLiveAttribute. The table's TTL on: its attribute (a given one that differs is refused). Its TTL
off: the one given, else expiresAt; on a restored table (DynamoDB restores no TTL setting) nothing is sent without one
given. Its TTL unreadable (DescribeTimeToLive, which flow.grantOperator grants): the one given, else nothing is sent.

What it sends: only what SNS would have delivered to the subscriber (its subscription's filter policy, evaluated by
the simulator's matcher; --type narrows further); the others are listed as not for this subscriber.

Already applied: with --subscriber-output, the subscriber's inbox table is read (one GetItem per event, with your own
credentials): an event whose inbox record (or completed processing record) is still there is said to be already
applied, with until when the record is kept (its TTL). It is still sent: the inbox drops the copy as a duplicate.

Refused (exit code 3):
  - an event whose copy could be consumed after the subscriber's deduplication window ends: its age (from its time,
    or from when its outbox item was written if that is earlier: a producer's date never makes an event look younger
    than its item) plus how long the copy can wait in the queue (its MessageRetentionPeriod; 14 days, the SQS maximum,
    when it can not be read) plus an hour to spare reaches the window, as its inbox record of an earlier application
    may then be gone (--allow-expired sends it with a warning);
  - an event whose age can not be proven: its outbox item does not say when it was written (no iefWrittenAt: an older
    runtime, a producer in another language, an item written by hand), or says a time later than now. Its time is
    only its producer's word (an item written 31 days ago may say 20), so it is never guessed young (--allow-expired
    sends it with a warning);
  - for a subscriber in aggregate mode: it keeps no inbox, only the ids of the last events applied to each aggregate,
    so an event an earlier copy applied whose id has left that list would be applied again. Without --aggregate-table
    every event is refused. With its aggregate tables (--aggregate-table, every table its locate writes; read with
    your own credentials), an event whose id an aggregate remembers was applied and is not sent (not refused), one no
    aggregate remembers is sent when no aggregate ever forgot an id (its aggregateVersion is its list's length), and
    refused when some did, naming them (--allow-reapply sends it with a warning). It is refused too while a copy of it
    may still be on the subscriber's queue (both copies would arrive, and once newer events pushed its id out of the
    list between them, the second applies again): the relay's copy until its item's write (iefWrittenAt; none, or one
    later than now, proves nothing) plus the relay's 24 hours plus the queue's MessageRetentionPeriod plus an hour,
    which the refusal names (replayableAfter in --json); a copy an earlier replay sent while the queue holds any message (its approximate counts,
    which lag a send by about a minute), or while its dead-letter queue or its subscription's (both named by its Operator
    output) holds any: a dead-lettered copy goes back with 'dlq redrive'. --allow-reapply sends it with a warning.
    Only the subscriber's own aggregates count: each item names its subscriber (aggregateSubscriber); items naming
    another (a table several subscribers share) are left out, and an id only an item naming none remembers (written
    before the runtime marked items) is refused (--allow-reapply sends it). An aggregate deleted (or expired by TTL) takes its ids with it.
A subscriber of another account or Region than its flow (docs/CROSS-ACCOUNT.md): its Operator output does not name
the outbox (another environment's table), so give --flow-output (the flow's Operator output: its outbox table, refused
unless its topic is the one the subscriber's output names; an ordered subscriber takes --table), and --flow-profile, an AWS
profile that assumes the role the flow's account granted with flow.grantOperator: the outbox is read under that role,
the subscriber's queue (and an ordered subscriber's fences) with your own credentials, in one command. The profile
must be of the flow's account: the output names the topic the subscriber is on (topicArn), and a profile whose
credentials are of another account (another environment's outbox), or of an account the SDK can not tell, is refused
before anything is read (exit code 3); the outbox is read in the topic's Region, not --region's (the subscriber's),
with or without --flow-profile.

Every event sent by --allow-expired or --allow-reapply past its rule is logged as one JSON audit line on stderr
("audit":"replay-override": when, who, the flag, the subscriber, the event id and the rule it passed), and every
other event sent to a subscriber in aggregate mode too ("audit":"replay-aggregate": when, who, the subscriber, the
queue, the event id and the message id): keep them, they show whether an earlier replay sent an event.

To an ordered subscriber (its output says ordered, or --queue is a FIFO queue; docs/ORDERED-DELIVERY.md) the events
are read from the ordered outbox's history items and planned against its sequence fences (needs its inbox table:
--inbox-table or the output): an event at or below the fence is a duplicate by design and is not sent (the output
counts it apart, never as replayed); the events the fences admit now are sent in sequence per aggregate, the aggregate
as the message group and the event id with one of this run as the deduplication id (a retry within the run is dropped;
a second copy is answered by the fence); an event behind a sequence that is not among those replayed is not sent (exit
code 3; widen the selection, or 'fence replay', which sends every event after the fence). It sends (--yes) only with
--subscriber-output: nothing else ties a typed FIFO --queue to the subscriber whose fences it read.
No deduplication window rule: the fence answers a copy of an applied event after its inbox record expired.

Options:
  --table <name>                     the outbox table
  --queue <url>                      the subscriber's queue
  --subscriber <name>                the subscriber (for the output)
  --deduplication-window <duration>  the subscriber's deduplicationWindow, e.g. 30d
  --event-id <id>                    replay this event (repeatable; an id given twice is sent once)
  --since <time>, --until <time>     replay events whose time is in [since, until) (ISO-8601; until: now)
  --type <type>                      only events of this type (repeatable)
  --partition-key <name>             the outbox table's partition key (default pk, as OutboxTable)
  --sort-key <name>                  its sort key (default sk, as OutboxTable)
  --no-sort-key                      the table has no sort key (an outbox table of your own)
${outboxTtlAttributeHelp(37)}
  --allow-expired                    send events past the deduplication window, or whose age can not be proven, with
                                     a warning and an audit line
  --allow-reapply                    send to a subscriber in aggregate mode what may be applied again (no aggregate
                                     table, one that forgot ids, a copy that may still be on its queue), with a warning
                                     and an audit line
  --aggregate-table <name>           a subscriber in aggregate mode: a table of its aggregates (repeatable; every table
                                     its locate writes), to decide from their processed ids what was applied
  --filter-policy <json|none>        without --subscriber-output: the subscription's filter policy (MessageBody scope)
  --inbox-table <name>               without --subscriber-output, an ordered subscriber's inbox table (its fences)
${DEPLOYED_SUBSCRIBER_HELP}
${FLOW_PROFILE_HELP}
${FLOW_OUTPUT_HELP}
  --yes                              send them (default: a dry run)
  --json                             print JSON instead of text
  --region, --endpoint, --sqs-endpoint   see idempotent-event-flow --help
`;

/** The `audit` of the line for each event sent to a subscriber in aggregate mode without an override. */
export { REPLAY_AUDIT } from './queued-copy';

/** The text line's start for events past the outbox's TTL, which replay never sends. */
export { PAST_RETENTION_TEXT } from './outbox-events';

const ALLOWED = new Set([
  'table', 'queue', 'subscriber', 'deduplication-window', 'event-id', 'since', 'until', 'type', 'partition-key', 'sort-key', 'no-sort-key', 'allow-expired', 'yes', 'json',
  'allow-reapply', 'aggregate-table', 'subscriber-output', 'processing-mode', 'filter-policy', 'inbox-table',
  'flow-profile', 'flow-output', 'outbox-ttl-attribute', 'region', 'endpoint', 'sqs-endpoint', 'help',
]);

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const profile = parsed.values['flow-profile'];
  if (profile !== undefined && (typeof profile !== 'string' || profile.trim() === '')) return context.usageError('--flow-profile needs the name of an AWS profile');
  return replay(parsed, context, profile);
}

/** `replay`, reading the outbox with the flow account's client of `profile` (--flow-profile), or the operator's own. */
async function replay(parsed: ParsedArguments, context: CommandContext, profile: string | undefined): Promise<number> {
  const values = parsed.values;
  if (parsed.positionals.length > 0) return context.usageError(`unexpected argument '${parsed.positionals[0]}'`);
  for (const name of Object.keys(values)) if (!ALLOWED.has(name)) return context.usageError(`option --${name} does not apply to 'replay'`);
  // --table is the outbox table here, not the inbox table the output names as `inboxTable`
  const { table: outboxFlag, 'flow-output': flowOutputFlag, ...subscriberFlags } = values;
  const cwd = context.io.cwd ?? process.cwd();
  const resolvedSubscriber = resolveSubscriber(subscriberFlags, cwd);
  if (typeof resolvedSubscriber === 'string') return context.usageError(resolvedSubscriber.startsWith('needs') ? `'replay' ${resolvedSubscriber}` : resolvedSubscriber);
  const flowOutput = typeof flowOutputFlag === 'string' ? readFlowOutput(flowOutputFlag, cwd) : undefined;
  if (typeof flowOutput === 'string') return context.usageError(flowOutput);
  const subscriberDeployment = resolvedSubscriber.deployment;
  if (subscriberDeployment?.outboxTable !== undefined && outboxFlag !== undefined && outboxFlag !== subscriberDeployment.outboxTable) {
    return context.usageError(`--table ${String(outboxFlag)} disagrees with the deployed subscriber '${subscriberDeployment.subscriberName}' (--subscriber-output says its flow's outbox table is ${subscriberDeployment.outboxTable}); leave the flag out`);
  }
  const tied = outboxOfFlow(subscriberDeployment, flowOutput, outboxFlag);
  if ('usage' in tied) return context.usageError(tied.usage);
  if ('refusal' in tied) return refuse(context, tied.refusal);
  // the flow's output names the outbox's TTL attribute when the subscriber's does not
  const deployment =
    subscriberDeployment !== undefined && subscriberDeployment.outboxTimeToLiveAttribute === undefined && flowOutput?.outboxTimeToLiveAttribute !== undefined
      ? { ...subscriberDeployment, outboxTimeToLiveAttribute: flowOutput.outboxTimeToLiveAttribute }
      : subscriberDeployment;
  const resolved = { ...resolvedSubscriber, ...(deployment === undefined ? {} : { deployment }) };
  const outboxTable = tied.outboxTable ?? (typeof outboxFlag === 'string' && outboxFlag.trim() !== '' ? outboxFlag : deployment?.outboxTable);
  if (outboxTable === undefined) return context.usageError("'replay' needs --table (the outbox table)");
  const topicArn = deployment?.topicArn;
  if (profile === undefined) {
    // the outbox is in the topic's Region (the flow's), which may not be --region's (the subscriber's)
    const flowRegion = topicArn === undefined ? undefined : topicEnvironment(topicArn)?.region;
    if (flowRegion === undefined || flowRegion === context.clientOptions.region) return replayFrom(parsed, context, resolved, outboxTable, context.client(), undefined);
    const options = { ...context.clientOptions, region: flowRegion };
    const regionalClient = context.io.createClient?.(options) ?? new DynamoDBClient({ region: flowRegion, ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }) });
    try {
      return await replayFrom(parsed, context, resolved, outboxTable, regionalClient, undefined);
    } finally {
      regionalClient.destroy();
    }
  }
  // --flow-profile reads another account's outbox: only once the profile is proven to be of the subscriber's flow
  if (deployment === undefined) return context.usageError(`--flow-profile needs --subscriber-output (the subscriber's Operator output): the topic it names says the flow's account and Region, which the profile must reach`);
  if (topicArn === undefined) {
    return context.usageError(`--flow-profile: the Operator output of '${deployment.subscriberName}' does not name its topic (topicArn), so the profile can not be proven to reach its flow's account; deploy the subscriber's stack with this version and use its new output`);
  }
  const flowClient = flowAccountClient(context.clientOptions, profile, topicEnvironment(topicArn)?.region ?? 'us-east-1');
  try {
    const refusal = await flowProfileRefusal(flowClient, profile, deployment.subscriberName, topicArn);
    if (refusal !== undefined) {
      context.io.stderr(`refused: ${refusal}\n`);
      return EXIT_CODE.REFUSED;
    }
    return await replayFrom(parsed, context, resolved, outboxTable, flowClient, profile);
  } finally {
    flowClient.destroy();
  }
}

/** `replay` from `outboxTable`, read with `outboxClient`. */
async function replayFrom(parsed: ParsedArguments, context: CommandContext, resolved: ResolvedSubscriber, outboxTable: string, outboxClient: DynamoDBClient, profile: string | undefined): Promise<number> {
  const values = parsed.values;
  const deployment = resolved.deployment;
  nameMissingOutbox(outboxClient, outboxTable, profile);
  const ordered = deployment?.ordered === true || isFifoQueueUrl(resolved.queueUrl);
  if (ordered) return replayToOrdered(parsed, context, resolved, outboxTable, outboxClient);
  if (values['inbox-table'] !== undefined) return context.usageError('--inbox-table goes with an ordered subscriber (a FIFO --queue)');
  const filter = filterOf(deployment, values['filter-policy']);
  if (typeof filter === 'string') return context.usageError(filter);
  const window = resolved.deduplicationWindowSeconds;
  const queue = resolved.queueUrl;
  const subscriber = resolved.subscriberName;
  const selection = selectionOf(values);
  if (typeof selection === 'string') return context.usageError(selection);
  const { eventIds, types, since, until } = selection;
  if (values['no-sort-key'] === true && typeof values['sort-key'] === 'string') return context.usageError('--sort-key and --no-sort-key contradict each other');
  const now = context.now().getTime();
  // review ro15b (RO15B-1), rx15b (RX15B-1): the TTL attribute is not guessed on a restored table or an unreadable TTL
  const timeToLive = await outboxTimeToLive(outboxClient, outboxTable, knownTimeToLiveAttribute(values, deployment));
  if ('refusal' in timeToLive) return refuse(context, timeToLive.refusal);
  const location = {
    client: toDocumentClient(outboxClient),
    tableName: outboxTable,
    timeToLiveAttributeName: timeToLive.attributeName ?? null,
    ...(typeof values['partition-key'] === 'string' ? { partitionKeyName: values['partition-key'] } : {}),
    ...(values['no-sort-key'] === true ? {} : { sortKeyName: typeof values['sort-key'] === 'string' ? values['sort-key'] : TABLE_SCHEMA.SORT_KEY }),
  };
  let events: OutboxEvent[];
  let missing: string[] = [];
  if (since !== undefined) {
    events = await outboxEventsInRange(location, { sinceEpochMs: since, untilEpochMs: until ?? now, types });
  } else {
    ({ events, missing } = await outboxEventsById(location, eventIds));
  }
  // past the outbox's TTL: past the retention the payload bucket's lifecycle counts on, never sent (DynamoDB may not
  // have deleted the item yet); named in the output, and the exit code says something was not replayed
  const expired = events.filter((event) => pastRetention(event, now));
  events = events.filter((event) => !pastRetention(event, now));
  const pastRetentionOf = expired.map((event) => ({ eventId: event.envelope.id, expiredAt: new Date(event.expiresAtEpochSeconds! * 1000).toISOString() }));
  // only what SNS would have delivered to the subscriber: its subscription's filter policy, as the simulator matches it
  const takes = (event: OutboxEvent): boolean => filter === undefined || filter({ body: event.body, attributes: {} });
  const filteredOut = events.filter((event) => !takes(event));
  events = events.filter(takes);
  const aggregateTables = listOption(values, 'aggregate-table');
  if (aggregateTables.length > 0 && resolved.processingMode !== 'aggregate') return context.usageError(`--aggregate-table goes with a subscriber in aggregate mode; '${subscriber}' is in ${resolved.processingMode} mode`);
  // the aggregate tables are the subscriber's: read with the operator's own credentials, not --flow-profile's
  const applications: AggregateApplications | undefined = aggregateTables.length === 0 ? undefined : await readAggregateApplications(context.client(), aggregateTables, subscriber);
  const { wait: destination, note } = await copyWaitOf(context.sqsClient(), queue);
  if (note !== undefined) context.io.stderr(`note: ${note}\n`);
  // an aggregate subscriber's queue: what it holds now (a copy an earlier replay sent may be there)
  const occupancy = applications === undefined ? undefined : await queueOccupancy(context.sqsClient(), queue);
  // and its dead-letter queues (the ones its Operator output names): a copy dead-lettered there comes back by a redrive
  const deadLetters = applications === undefined ? undefined : await deadLetterOccupancies(context, deployment);
  // every mode but aggregate has a window (resolveSubscriber requires it)
  const rules = { deduplicationWindowSeconds: window as number, safetyMarginSeconds: DEFAULT_SAFETY_MARGIN_SECONDS, nowEpochMilliseconds: now, destination };
  const decisions = events.map((event): { event: OutboxEvent; send: boolean; applied?: boolean; why?: string; override?: string } => {
    if (resolved.processingMode === 'aggregate') {
      if (applications === undefined) {
        const why = `${aggregateModeRefusal(subscriber, 'replayed')}; or give its aggregate tables (--aggregate-table) to decide from what they remember`;
        return { event, send: values['allow-reapply'] === true, why, override: '--allow-reapply' };
      }
      const decided = aggregateDecision(applications, event.envelope.id, subscriber);
      if ('applied' in decided) return { event, send: false, applied: true, why: decided.applied };
      if ('unknown' in decided) return { event, send: values['allow-reapply'] === true, why: decided.unknown, override: '--allow-reapply' };
      // never applied, but the relay's copy may still be on the queue: the replayed copy would be its second
      const queued = queuedCopyRefusal(event, subscriber, { nowEpochMilliseconds: now, queue: destination, safetyMarginSeconds: DEFAULT_SAFETY_MARGIN_SECONDS, occupancy: occupancy ?? { unreadable: 'not read' }, deadLetters: deadLetters ?? [] });
      if (queued !== undefined) return { event, send: values['allow-reapply'] === true, why: queued, override: '--allow-reapply' };
      return { event, send: true };
    }
    const earliest = earliestApplication(event, now);
    const why = 'unknown' in earliest ? earliest.unknown : windowRefusal(earliest.epochMilliseconds, rules, 'replayed', earliest.from);
    return { event, send: why === undefined || values['allow-expired'] === true, ...(why !== undefined ? { why, override: '--allow-expired' } : {}) };
  });
  // which of them the subscriber already applied: its inbox still holds their records (read with the operator's own
  // credentials), so their copies are dropped as duplicates; said per event, the replay still allowed
  const inbox = resolved.processingMode === 'aggregate' || resolved.inboxTable === undefined ? undefined : await readInboxRecords(context.client(), resolved.inboxTable, subscriber, decisions.map((item) => item.event.envelope.id));
  if (inbox?.note !== undefined) context.io.stderr(`note: ${inbox.note}\n`);
  const appliedUntil = (item: { event: OutboxEvent }): string | undefined => inbox?.keptUntil.get(item.event.envelope.id);
  // an event refused while the relay's copy may be queued: when that bound passes (the queues' counts decide then)
  const replayableAfterOf = (item: { event: OutboxEvent; send: boolean; why?: string }): string | undefined =>
    resolved.processingMode === 'aggregate' && !item.send && item.why?.startsWith(MAY_BE_QUEUED_TEXT) === true
      ? queuedCopyReplayableAfter(item.event, { nowEpochMilliseconds: now, queue: destination, safetyMarginSeconds: DEFAULT_SAFETY_MARGIN_SECONDS })
      : undefined;
  const appliedNote = (keptUntil: string): string => `already applied by '${subscriber}': its inbox record is kept until ${keptUntil}, so the copy is dropped as a duplicate`;
  let send = values.yes === true;
  const sendable = decisions.filter((item) => item.send).length;
  const sendableApplied = decisions.filter((item) => item.send && appliedUntil(item) !== undefined).length;
  if (!send && sendable > 0 && values.json !== true && context.io.confirm !== undefined) {
    send = await context.io.confirm(`Send ${sendable} event(s) to ${queue} for subscriber '${subscriber}'?`);
  }
  const sent: Array<{ eventId: string; messageId?: string }> = [];
  if (send) {
    for (const decision of decisions.filter((item) => item.send)) {
      const response = await context.sqsClient().send(new SendMessageCommand({ QueueUrl: queue, MessageBody: decision.event.body }));
      sent.push({ eventId: decision.event.envelope.id, ...(response.MessageId !== undefined ? { messageId: response.MessageId } : {}) });
      if (decision.why !== undefined) {
        context.io.stderr(`warning: event '${terminalText(decision.event.envelope.id)}': ${decision.why}\n`);
        // an override is audited: who sent which event past which rule, and why the rule held it back
        const audit = { audit: 'replay-override', at: context.now().toISOString(), by: context.user, override: decision.override, subscriber, queue, eventId: decision.event.envelope.id, why: decision.why };
        context.io.stderr(`${JSON.stringify(audit)}\n`);
      } else if (resolved.processingMode === 'aggregate') {
        // review r19b (R19B-4): every copy sent to an aggregate subscriber is audited, so that the log shows whether an
        // earlier replay sent an event before a later one overrides the rule for a copy that may be queued
        const audit = { audit: REPLAY_AUDIT, at: context.now().toISOString(), by: context.user, subscriber, queue, eventId: decision.event.envelope.id, ...(response.MessageId === undefined ? {} : { messageId: response.MessageId }) };
        context.io.stderr(`${JSON.stringify(audit)}\n`);
      }
    }
  }
  const refused = decisions.filter((item) => !item.send && item.applied !== true).length;
  const alreadyApplied = decisions.filter((item) => item.applied === true).length;
  if (values.json === true) {
    context.io.stdout(
      `${JSON.stringify(
        {
          dryRun: !send,
          subscriber,
          destination,
          events: decisions.map((item) => ({
            eventId: item.event.envelope.id,
            type: item.event.envelope.type,
            time: item.event.envelope.time,
            send: item.send,
            ...(item.applied === true ? { applied: true } : {}),
            ...(item.why !== undefined ? { why: item.why } : {}),
            ...(replayableAfterOf(item) === undefined ? {} : { replayableAfter: replayableAfterOf(item) }),
            ...(appliedUntil(item) === undefined ? {} : { alreadyApplied: { keptUntil: appliedUntil(item), note: appliedNote(appliedUntil(item)!) } }),
          })),
          missing,
          pastRetention: pastRetentionOf,
          filteredOut: filteredOut.map((event) => event.envelope.id),
          ...(send ? { sent } : {}),
        },
        null,
        2,
      )}\n`,
    );
  } else {
    const why = (item: (typeof decisions)[number]): string => {
      const until = appliedUntil(item);
      return [item.why, until === undefined ? undefined : appliedNote(until)].filter((part) => part !== undefined).join('; ');
    };
    const rows = decisions.map((item) => [item.event.envelope.id, item.event.envelope.type, item.event.envelope.time ?? '-', item.send ? (item.why === undefined ? 'replay' : 'replay (warning)') : item.applied === true ? 'applied' : 'refused', why(item)]);
    const duplicates = sendableApplied === 0 ? '' : `; ${sendableApplied} of them already applied by '${subscriber}' (its inbox drops their copies as duplicates)`;
    const table = rows.length === 0 ? 'no events match\n' : formatTable(['EVENT ID', 'TYPE', 'TIME', 'DECISION', 'WHY'], rows);
    const missingLine = missing.length === 0 ? '' : `not in the outbox (never written, or past its retention): ${missing.join(' ')}\n`;
    const expiredLine = expired.length === 0 ? '' : `${PAST_RETENTION_TEXT}: ${expired.map((event) => terminalText(event.envelope.id)).join(' ')}\n`;
    const filteredLine = filteredOut.length === 0 ? '' : `not for this subscriber (its subscription's filter policy does not take them): ${filteredOut.map((event) => event.envelope.id).join(' ')}\n`;
    const outcome = send
      ? `sent ${sent.length} to ${queue} for subscriber '${subscriber}'; refused ${refused}${duplicates}${alreadyApplied === 0 ? '' : `; ${alreadyApplied} already applied, not sent`}`
      : `dry run: would send ${sendable} and refuse ${refused}${duplicates}${alreadyApplied === 0 ? '' : `; ${alreadyApplied} already applied, not sent`}${sendable === 0 ? '' : '; run again with --yes to send them'}`;
    context.io.stdout(`${table}${missingLine}${expiredLine}${filteredLine}${outcome}\n`);
  }
  return refused > 0 || missing.length > 0 || expired.length > 0 ? EXIT_CODE.REFUSED : EXIT_CODE.OK;
}

/**
 * Until when the subscriber's inbox keeps the record of each event it already applied (an inbox record, or a COMPLETED
 * processing record, of that subscriber and event), by event id, as ISO-8601 (its TTL); events without one are left
 * out. One GetItem per event (the `dynamodb:GetItem` on the inbox table that `inbox forget` needs too). A table the
 * operator may not read, or that is not there, is a note, not a failure: the replay's decisions do not depend on it (a
 * copy of an applied event is dropped by the inbox either way).
 */
async function readInboxRecords(client: DynamoDBClient, tableName: string, subscriber: string, eventIds: readonly string[]): Promise<{ keptUntil: Map<string, string>; note?: string }> {
  const keptUntil = new Map<string, string>();
  const documents = toDocumentClient(client);
  try {
    for (const eventId of new Set(eventIds)) {
      const { Item: item } = await documents.send(new GetCommand({ TableName: tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) }, ConsistentRead: true }));
      if (item === undefined) continue;
      const recordType = item[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE];
      const completed = recordType === undefined || (recordType === PROCESSING_RECORD.RECORD_TYPE_VALUE && item[PROCESSING_RECORD.STATUS_ATTRIBUTE] === RECORD_STATUS.COMPLETED);
      const expiresAt = item[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE];
      if (!completed || item[INBOX_ITEM.SUBSCRIBER_ATTRIBUTE] !== subscriber || item[INBOX_ITEM.EVENT_ID_ATTRIBUTE] !== eventId || typeof expiresAt !== 'number') continue;
      keptUntil.set(eventId, new Date(expiresAt * 1000).toISOString());
    }
  } catch (error) {
    return { keptUntil, note: `the inbox table ${tableName} of '${subscriber}' could not be read (${(error as Error).name}: ${(error as Error).message}), so which events it already applied is not shown; a copy of one it applied is dropped by its inbox all the same` };
  }
  return { keptUntil };
}

/**
 * The outbox table of the subscriber's flow, tied to the topic the subscriber's output names (review rx15, RX15-2):
 * from `--flow-output`, whose topic must be the subscriber's; required when the subscriber's output names a topic but
 * no outbox table (a subscriber of another account or Region than its flow: a typed --table is tied to nothing). An
 * ordered subscriber's relay has no Operator output of its own: its --table is taken as before.
 */
function outboxOfFlow(
  deployment: SubscriberDeployment | undefined,
  flowOutput: FlowOperatorOutput | undefined,
  outboxFlag: unknown,
): { readonly outboxTable?: string } | { readonly usage: string } | { readonly refusal: string } {
  if (flowOutput === undefined) {
    if (deployment?.topicArn !== undefined && deployment.outboxTable === undefined && deployment.ordered !== true) {
      return {
        usage:
          `'replay' to '${deployment.subscriberName}' needs --flow-output (the Operator output of its flow's stack): its output names the topic ${deployment.topicArn} ` +
          "but no outbox table (a subscriber of another account or Region than its flow), and a --table alone is tied to no flow: it could be another flow's outbox",
      };
    }
    return {};
  }
  if (deployment?.topicArn === undefined) {
    return { usage: "--flow-output goes with --subscriber-output naming the subscriber's topic (topicArn), which the flow's output must name too" };
  }
  if (flowOutput.topicArn !== deployment.topicArn) {
    return {
      refusal:
        `--flow-output is the Operator output of the flow whose topic is ${flowOutput.topicArn}, but '${deployment.subscriberName}' subscribes to the topic ${deployment.topicArn}: ` +
        `its outbox ${flowOutput.outboxTable} is another flow's (another environment's?), whose events this subscriber's inbox has never seen; ` +
        "use the Operator output of the flow of that topic; nothing was read or sent",
    };
  }
  if (outboxFlag !== undefined && outboxFlag !== flowOutput.outboxTable) {
    return { usage: `--table ${String(outboxFlag)} disagrees with --flow-output (its outboxTable is ${flowOutput.outboxTable}); leave the flag out` };
  }
  if (deployment.outboxTable !== undefined && deployment.outboxTable !== flowOutput.outboxTable) {
    return { usage: `--flow-output names the outbox table ${flowOutput.outboxTable}, but --subscriber-output names ${deployment.outboxTable} for the same topic; leave --flow-output out` };
  }
  return { outboxTable: flowOutput.outboxTable };
}

/** The outbox's TTL attribute given: --outbox-ttl-attribute, else the Operator output's (none: items never expire). */
function knownTimeToLiveAttribute(values: ParsedArguments['values'], deployment: SubscriberDeployment | undefined): string | undefined {
  const typed = values['outbox-ttl-attribute'];
  return typeof typed === 'string' && typed.trim() !== '' ? typed : deployment?.outboxTimeToLiveAttribute;
}

/**
 * What the subscriber's dead-letter queues hold (`replay --aggregate-table`): the ones its Operator output names. Without
 * the output none is known, which a note says (a dead-lettered copy is then not counted).
 */
async function deadLetterOccupancies(context: CommandContext, deployment: SubscriberDeployment | undefined): Promise<DeadLetterOccupancy[]> {
  if (deployment === undefined) {
    context.io.stderr("note: the subscriber's dead-letter queues were not read (its Operator output, --subscriber-output, names them): a copy of an event dead-lettered there is not counted\n");
    return [];
  }
  const queues: Array<Pick<DeadLetterOccupancy, 'kind' | 'queueUrl'>> = [
    { kind: 'dead-letter queue', queueUrl: deployment.deadLetterQueueUrl },
    ...(deployment.subscriptionDeadLetterQueueUrl === undefined ? [] : [{ kind: 'subscription dead-letter queue' as const, queueUrl: deployment.subscriptionDeadLetterQueueUrl }]),
  ];
  const read: DeadLetterOccupancy[] = [];
  for (const each of queues) read.push({ ...each, occupancy: await queueOccupancy(context.sqsClient(), each.queueUrl) });
  return read;
}

/** Says `refusal` on stderr: nothing was sent (exit code 3). */
function refuse(context: CommandContext, refusal: string): number {
  context.io.stderr(`refused: ${refusal}\n`);
  return EXIT_CODE.REFUSED;
}

/**
 * Which events a replay takes: `--event-id`s (a repeated id once, as `dlq redrive --event-id` takes it: two copies sent in
 * one run would reach an aggregate subscriber twice), or `--since` (and `--until`, `--type`). Returns a usage problem
 * as a string.
 */
function selectionOf(values: ParsedArguments['values']): { eventIds: string[]; types: string[]; since?: number; until?: number } | string {
  const eventIds = [...new Set(listOption(values, 'event-id'))];
  const types = listOption(values, 'type');
  const since = typeof values.since === 'string' ? parseTime(values.since, 'since') : undefined;
  const until = typeof values.until === 'string' ? parseTime(values.until, 'until') : undefined;
  if (typeof since === 'string') return since;
  if (typeof until === 'string') return until;
  if ((eventIds.length > 0) === (since !== undefined)) return "'replay' needs either --event-id or --since, not both";
  if (eventIds.length > 0 && (until !== undefined || types.length > 0)) return '--until and --type go with --since';
  return { eventIds, types, ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) };
}


/** `replay` to an ordered subscriber (ordered-replay.ts): from the history items, in sequence, as its fences admit. */
async function replayToOrdered(parsed: ParsedArguments, context: CommandContext, resolved: ResolvedSubscriber, outboxTable: string, outboxClient: DynamoDBClient): Promise<number> {
  const values = parsed.values;
  for (const option of ['allow-expired', 'allow-reapply', 'aggregate-table', 'filter-policy', 'partition-key', 'sort-key', 'no-sort-key']) {
    if (values[option] !== undefined) return context.usageError(`--${option} does not apply to the ordered subscriber '${resolved.subscriberName}' (its fences answer every copy of an applied event; its outbox is an OutboxTable)`);
  }
  const typedInbox = typeof values['inbox-table'] === 'string' ? values['inbox-table'] : undefined;
  if (resolved.inboxTable !== undefined && typedInbox !== undefined && typedInbox !== resolved.inboxTable) {
    return context.usageError(`--inbox-table ${typedInbox} disagrees with the deployed subscriber '${resolved.subscriberName}' (--subscriber-output says ${resolved.inboxTable}); leave the flag out`);
  }
  const inboxTable = resolved.inboxTable ?? typedInbox;
  if (inboxTable === undefined) return context.usageError(`'replay' to the ordered subscriber '${resolved.subscriberName}' needs --inbox-table (its inbox table, where its sequence fences are) or --subscriber-output`);
  const selection = selectionOf(values);
  if (typeof selection === 'string') return context.usageError(selection);
  const { eventIds, types, since, until } = selection;
  // review ro15 (RO15-4): only the Operator output ties a FIFO --queue to the subscriber whose fences are read
  const bound = resolved.deployment !== undefined;
  if (values.yes === true && !bound) return context.usageError(replayNeedsOutputLine('replay'));
  const timeToLive = await outboxTimeToLive(outboxClient, outboxTable, knownTimeToLiveAttribute(values, resolved.deployment));
  if ('refusal' in timeToLive) return refuse(context, timeToLive.refusal);
  return replayOrdered(
    context,
    {
      subscriberName: resolved.subscriberName,
      queueUrl: resolved.queueUrl,
      inboxTable,
      ...(resolved.deduplicationWindowSeconds === undefined ? {} : { deduplicationWindowSeconds: resolved.deduplicationWindowSeconds }),
      location: { client: toDocumentClient(outboxClient), tableName: outboxTable, sortKeyName: TABLE_SCHEMA.SORT_KEY, timeToLiveAttributeName: timeToLive.attributeName ?? null },
      eventIds,
      ...(since === undefined ? {} : { range: { sinceEpochMs: since, untilEpochMs: until ?? context.now().getTime(), types } }),
      send: values.yes === true,
      asJson: values.json === true,
    },
    async (count) => {
      if (!bound) {
        context.io.stderr(`not sent: ${replayNeedsOutputLine('replay')}\n`);
        return false;
      }
      return context.io.confirm === undefined ? false : context.io.confirm(`Send ${count} event(s) to ${resolved.queueUrl} in sequence for subscriber '${resolved.subscriberName}'?`);
    },
  );
}

/**
 * The subscription's filter policy as a predicate over a published message: from the deployed output, or from
 * `--filter-policy` (a MessageBody-scope policy as JSON, or `none`); undefined when the subscriber takes every event.
 * Returns a usage problem as a string. The matcher is the simulator's (checked against AWS's recorded vectors).
 */
function filterOf(deployment: SubscriberDeployment | undefined, typed: unknown): ((message: { body: string; attributes: Record<string, never> }) => boolean) | undefined | string {
  let policy: Readonly<Record<string, unknown>> | undefined;
  let scope: 'MessageBody' | 'MessageAttributes' = 'MessageBody';
  if (deployment !== undefined) {
    if (typed !== undefined) return "--filter-policy goes without --subscriber-output, which says the deployed subscription's policy";
    policy = deployment.filterPolicy;
    scope = deployment.filterPolicyScope ?? 'MessageAttributes';
  } else {
    if (typeof typed !== 'string') return "'replay' needs --filter-policy (the subscription's filter policy in MessageBody scope as JSON, or none) without --subscriber-output";
    if (typed !== 'none') {
      try {
        policy = JSON.parse(typed) as Record<string, unknown>;
      } catch (error) {
        return `--filter-policy must be a JSON object or none: ${(error as Error).message}`;
      }
      if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) return '--filter-policy must be a JSON object or none';
    }
  }
  if (policy === undefined) return undefined;
  try {
    return compileFilterPolicy(policy as Record<string, unknown>, scope);
  } catch (error) {
    return `the subscription's filter policy can not be evaluated: ${(error as Error).message}`;
  }
}

/** The `replay` command. */
export const replayCommand: Command = {
  name: 'replay',
  summary: "send committed events from the outbox to one subscriber's queue, with their original ids",
  usage: USAGE,
  options: {
    table: { type: 'string' },
    queue: { type: 'string' },
    subscriber: { type: 'string' },
    'deduplication-window': { type: 'string' },
    'event-id': { type: 'string', multiple: true },
    since: { type: 'string' },
    until: { type: 'string' },
    type: { type: 'string', multiple: true },
    'partition-key': { type: 'string' },
    'sort-key': { type: 'string' },
    'no-sort-key': { type: 'boolean' },
    'allow-expired': { type: 'boolean' },
    'allow-reapply': { type: 'boolean' },
    'aggregate-table': { type: 'string', multiple: true },
    'filter-policy': { type: 'string' },
    'inbox-table': { type: 'string' },
    ...DEPLOYED_SUBSCRIBER_OPTIONS,
    ...FLOW_PROFILE_OPTION,
    ...FLOW_OUTPUT_OPTION,
    ...OUTBOX_TTL_ATTRIBUTE_OPTION,
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run,
};
