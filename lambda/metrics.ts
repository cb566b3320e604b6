/**
 * Consumer metrics in CloudWatch Embedded Metric Format (EMF): one JSON line per batch on standard output, which
 * Lambda's log pipeline turns into metrics with no API call. Names are defined once in contract/metric-names.ts;
 * the constructs build their alarms and metric helpers from the same constants. Pure: imports no AWS SDK.
 */
import type { RecordOutcome } from './consumer/batch';
import { CONSUMER_METRICS } from './contract/metric-names';
import { eventAgeMilliseconds, MAX_EMF_VALUES_PER_METRIC } from './event-age';
import { metricLogLevel } from './metric-log-level';
import { traceIdOf } from './trace-context';

const METRIC_OF_OUTCOME: Readonly<Record<RecordOutcome, string>> = {
  processed: CONSUMER_METRICS.PROCESSED,
  duplicate: CONSUMER_METRICS.DUPLICATES,
  failed: CONSUMER_METRICS.FAILED,
  skipped: CONSUMER_METRICS.FAILED,
  blocked: CONSUMER_METRICS.BLOCKED,
  'dead-lettered': CONSUMER_METRICS.DEAD_LETTERED,
  'already-blocked': CONSUMER_METRICS.ALREADY_BLOCKED,
};

/** Every metric a consumer emits, in a fixed order (each batch line carries all of them, zeros included). */
const METRIC_NAMES: readonly string[] = [
  CONSUMER_METRICS.PROCESSED,
  CONSUMER_METRICS.DUPLICATES,
  CONSUMER_METRICS.FAILED,
  CONSUMER_METRICS.BLOCKED,
  CONSUMER_METRICS.DEAD_LETTERED,
  CONSUMER_METRICS.ALREADY_BLOCKED,
];

/** Options of {@link ConsumerMetrics}. */
export interface ConsumerMetricsOptions {
  readonly subscriberName: string;
  /** The processing mode, the second dimension. */
  readonly processingMode: string;
  /**
   * The Lambda function's name, the third dimension, unique per deployment.
   * @default none: outside Lambda the lines carry the subscriber and mode dimensions only
   */
  readonly functionName?: string;
  /** Receives each EMF line (without the newline). @default writes the line to standard output */
  readonly sink?: (line: string) => void;
  /** Clock for the EMF timestamp. @default the system clock */
  readonly now?: () => Date;
  /** Metrics besides the outcomes that this consumer counts with {@link ConsumerMetrics.countMetric}. @default none */
  readonly additionalMetrics?: readonly string[];
  /**
   * The `level` of each line, so that Lambda's log-level filtering keeps it at every application log level.
   * @default `metricLogLevel()`: INFO, or the function's application log level when that is above INFO
   */
  readonly logLevel?: string;
}

/** Counts outcomes over a batch and writes them as one EMF line. */
export class ConsumerMetrics {
  private readonly counts = new Map<string, number>();
  private readonly sink: (line: string) => void;
  private readonly now: () => Date;
  private readonly names: readonly string[];
  private readonly logLevel: string;
  private ages: number[] = [];
  private traceIds = new Set<string>();

  public constructor(private readonly options: ConsumerMetricsOptions) {
    this.sink = options.sink ?? ((line) => process.stdout.write(`${line}\n`));
    this.now = options.now ?? (() => new Date());
    this.names = [...METRIC_NAMES, ...(options.additionalMetrics ?? [])];
    this.logLevel = options.logLevel ?? metricLogLevel();
  }

  /** The dimensions of every line: subscriber and mode, and the function name when it runs in Lambda. */
  private get dimensionNames(): string[] {
    const names: string[] = [CONSUMER_METRICS.SUBSCRIBER_DIMENSION, CONSUMER_METRICS.PROCESSING_MODE_DIMENSION];
    if (this.options.functionName !== undefined) names.push(CONSUMER_METRICS.FUNCTION_NAME_DIMENSION);
    return names;
  }

  /**
   * Counts one record's outcome. With the record's parsed body (`{ envelope }`), an applied message also adds its
   * {@link CONSUMER_METRICS.EVENT_AGE} and its trace id.
   */
  public count(outcome: RecordOutcome, parsedBody?: object): void {
    this.countMetric(METRIC_OF_OUTCOME[outcome]);
    if (outcome !== 'processed' || parsedBody === undefined || !('envelope' in parsedBody)) return;
    const envelope = parsedBody.envelope as { readonly time?: string; readonly traceparent?: string };
    const age = eventAgeMilliseconds(envelope, this.now());
    if (age !== undefined) this.ages.push(age);
    const traceId = traceIdOf(envelope.traceparent);
    if (traceId !== undefined) this.traceIds.add(traceId);
  }

  /** Counts one occurrence of `name`, an outcome's metric or one of the `additionalMetrics`. */
  public countMetric(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  /** Writes the counts since the last flush as one EMF line (nothing when nothing was counted), then resets them. */
  public flush(): void {
    if (this.counts.size === 0) return;
    const values = Object.fromEntries(this.names.map((name) => [name, this.counts.get(name) ?? 0]));
    const ages = this.ages;
    const traceIds = [...this.traceIds];
    this.counts.clear();
    this.ages = [];
    this.traceIds = new Set();
    // EMF takes at most 100 values of a metric per line: the first line has the counts, any further one more ages
    const ageChunks: number[][] = [];
    for (let start = 0; start < ages.length; start += MAX_EMF_VALUES_PER_METRIC) ageChunks.push(ages.slice(start, start + MAX_EMF_VALUES_PER_METRIC));
    this.sink(this.line(this.names.map((name) => ({ Name: name, Unit: 'Count' })), { ...values, ...this.ageValues(ageChunks[0]), ...this.traceIdValues(traceIds) }));
    for (const chunk of ageChunks.slice(1)) this.sink(this.line([], this.ageValues(chunk)));
  }

  private ageValues(ages: number[] | undefined): Record<string, unknown> {
    return ages === undefined || ages.length === 0 ? {} : { [CONSUMER_METRICS.EVENT_AGE]: ages.length === 1 ? ages[0] : ages };
  }

  private traceIdValues(traceIds: readonly string[]): Record<string, unknown> {
    return traceIds.length === 0 ? {} : { [CONSUMER_METRICS.TRACE_IDS_PROPERTY]: traceIds };
  }

  /**
   * One EMF line: the declared count metrics, plus `EventAge` when `values` has it. What does not change from line to
   * line (the declaration, the dimensions) is serialized once per consumer (see {@link staticPartsOf}); the line is the
   * JSON of `{ level, _aws: { Timestamp, CloudWatchMetrics }, <dimensions>, ...values }`.
   */
  private line(countMetrics: ReadonlyArray<{ Name: string; Unit: string }>, values: Record<string, unknown>): string {
    const metrics = CONSUMER_METRICS.EVENT_AGE in values ? [...countMetrics, { Name: CONSUMER_METRICS.EVENT_AGE, Unit: 'Milliseconds' }] : [...countMetrics];
    const parts = staticPartsOf(this.options);
    const declarationKey = metrics.map((metric) => metric.Name).join(',');
    let declaration = parts.declarations.get(declarationKey);
    if (declaration === undefined) {
      // One dimension set only: the set without the function name would be shared by every deployment
      // with a subscriber of this name (what item 17 of issue 10 fixed), and would double the custom metrics.
      declaration = JSON.stringify([{ Namespace: CONSUMER_METRICS.NAMESPACE, Dimensions: [this.dimensionNames], Metrics: metrics }]);
      parts.declarations.set(declarationKey, declaration);
    }
    const valuesJson = JSON.stringify(values);
    // `level`: a root member the EMF specification ignores, read by Lambda's log-level filtering
    return `{"level":${JSON.stringify(this.logLevel)},"_aws":{"Timestamp":${this.now().getTime()},"CloudWatchMetrics":${declaration}},${parts.dimensions}${valuesJson === '{}' ? '}' : `,${valuesJson.slice(1)}`}`;
  }
}

/** What every line of one consumer shares, serialized: its dimension fields, and its metric declarations by metric names. */
interface StaticParts {
  /** `"Subscriber":"...","ProcessingMode":"..."` (and the function name), without braces. */
  readonly dimensions: string;
  readonly declarations: Map<string, string>;
}

/** Per options object: a consumer passes the same one to the {@link ConsumerMetrics} of each invocation. */
const staticParts = new WeakMap<ConsumerMetricsOptions, StaticParts>();

function staticPartsOf(options: ConsumerMetricsOptions): StaticParts {
  let parts = staticParts.get(options);
  if (parts === undefined) {
    const dimensions = JSON.stringify({
      [CONSUMER_METRICS.SUBSCRIBER_DIMENSION]: options.subscriberName,
      [CONSUMER_METRICS.PROCESSING_MODE_DIMENSION]: options.processingMode,
      ...(options.functionName !== undefined ? { [CONSUMER_METRICS.FUNCTION_NAME_DIMENSION]: options.functionName } : {}),
    });
    parts = { dimensions: dimensions.slice(1, -1), declarations: new Map() };
    staticParts.set(options, parts);
  }
  return parts;
}
