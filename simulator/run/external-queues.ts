/**
 * Queues the app sends to but does not own: not in its templates (another team's, named by a literal URL or an
 * imported ARN). A function's environment variable that holds an SQS queue URL of AWS is given a local URL on the
 * simulator's SQS endpoint instead (so the SDK sends there, not to AWS), and the queue is created on first use; its
 * messages are kept for the scenario's effect probes, and nothing consumes them.
 */
import type { VirtualClock } from '../aws/clock';
import { SimulatedQueue } from '../aws/queue';
import type { SimulationObserver } from '../observation/observer';

/** An SQS queue URL of AWS: `https://sqs.<region>.amazonaws.com[.cn]/<account>/<name>`, or the legacy `https://<region>.queue.amazonaws.com/...`. */
const AWS_QUEUE_URL = /^https:\/\/(?:sqs\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?|[a-z0-9-]+\.queue\.amazonaws\.com(?:\.cn)?)\/(\d{12})\/([A-Za-z0-9_-]{1,80}(?:\.fifo)?)$/;

/** The queues outside the templates of one run. */
export class ExternalQueues {
  private readonly byUrl = new Map<string, SimulatedQueue>();

  public constructor(private readonly deps: { readonly endpoint: () => string; readonly clock: VirtualClock; readonly observer?: SimulationObserver }) {}

  /** The local URL of the queue an AWS queue URL names (creating the queue), or undefined when `value` is no such URL. */
  public localUrl(value: string): string | undefined {
    const match = AWS_QUEUE_URL.exec(value);
    if (match === null) return undefined;
    const [, accountId, name] = match as unknown as [string, string, string];
    const url = `${this.deps.endpoint()}/${accountId}/${name}`;
    if (!this.byUrl.has(url)) {
      const model = { key: `external:${value}`, stackName: '(outside the app)', logicalId: name, queueName: name, fifo: name.endsWith('.fifo'), visibilityTimeoutSeconds: 30, messageRetentionSeconds: 1_209_600 };
      const arn = `arn:aws:sqs:${/sqs\.([a-z0-9-]+)\./.exec(value)?.[1] ?? /https:\/\/([a-z0-9-]+)\.queue/.exec(value)?.[1] ?? 'us-east-1'}:${accountId}:${name}`;
      this.byUrl.set(url, new SimulatedQueue({ model, address: { name, url, arn }, clock: this.deps.clock, ...(this.deps.observer === undefined ? {} : { observer: this.deps.observer }) }));
    }
    return url;
  }

  /** The variables with each AWS queue URL replaced by its local URL. */
  public localize(variables: Readonly<Record<string, string>>): Record<string, string> {
    return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, this.localUrl(value) ?? value]));
  }

  /** The external queue a local URL names. */
  public resolve(url: string): SimulatedQueue | undefined {
    return this.byUrl.get(url);
  }

  /** Every external queue used so far. */
  public all(): SimulatedQueue[] {
    return [...this.byUrl.values()];
  }
}
