/**
 * The resources this library's constructs make, found from the flow: the outbox tables, the pipes and their
 * dead-letter queues, the topics, the subscriptions' queues and dead-letter queues, the inbox tables the consumers name
 * (`IEF_INBOX_TABLE_NAME`), and the keys that encrypt any of them. A permission on one of them was granted by a
 * construct (its wiring, or a grant method such as `grantOperator`); the report tells those apart from the user's own
 * grants.
 */
import { ENV } from '../../lambda/contract/environment';
import type { FlowModel, ResourceKey } from '../model/flow-model';
import type { LocalFlow } from './build-flow';

/** The construct path of a resource as the IAM report names it: without the `Resource` child of an L2 construct. */
function reportedPath(constructPath: string): string {
  let path = constructPath;
  while (path.endsWith('/Resource')) path = path.slice(0, -'/Resource'.length);
  return path;
}

/** The construct paths of the resources the library's constructs made (see the module comment). */
export function constructResourcePaths(model: FlowModel, flow: Pick<LocalFlow, 'tables' | 'subscribers'>): string[] {
  const keys = new Set<ResourceKey>();
  const add = (key: ResourceKey | undefined): void => {
    if (key !== undefined) keys.add(key);
  };
  for (const relay of model.relays) [relay.key, relay.sourceTable, relay.targetTopic, relay.targetQueue?.queue, relay.deadLetterQueue].forEach(add);
  for (const subscription of model.subscriptions) {
    [subscription.topic, subscription.queue, subscription.deadLetterQueue].forEach(add);
    add(model.queues.find((queue) => queue.key === subscription.queue)?.redrive?.deadLetterQueue);
  }
  for (const subscriber of flow.subscribers) {
    const inbox = subscriber.environment[ENV.INBOX_TABLE_NAME];
    for (const [key, table] of flow.tables) if (table.tableName === inbox) add(key);
  }
  for (const key of [...keys]) {
    const encryption = model.access?.encryption[key];
    if (encryption !== undefined && 'key' in encryption) add(encryption.key);
  }
  return [...keys].flatMap((key) => {
    const path = model.access?.resources[key]?.constructPath;
    return path === undefined ? [] : [reportedPath(path)];
  });
}
