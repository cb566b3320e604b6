/**
 * Whether a subscription's filter policy takes an event type, whatever its conditions on the rest of the message: the
 * policy's conditions on the envelope's `type` key alone, evaluated on the type (in each `$or` branch too: one branch
 * that takes the type is enough; a branch, or a policy, with no `type` condition takes every type). A subscriber whose
 * policy takes `OrderPlaced` and only orders of 100 or more (`data.totalCents`) consumes OrderPlaced: the content
 * condition is its design, not a type missing from its filter. The relay publishes the envelope as the message body,
 * with no message attributes, so a policy on the message attributes takes no type.
 */
import { compileFilterPolicy, type FilterPolicyScope } from '../../operator/patterns/filter-policy';

/** The envelope key that carries the event type in the message body. */
const TYPE_KEY = 'type';

/** Whether `policy` (in `scope`) takes events of `type` by its conditions on the type (see the module comment). */
export function policyTakesType(policy: Readonly<Record<string, unknown>> | undefined, scope: FilterPolicyScope | undefined, type: string): boolean {
  if (policy === undefined) return true;
  if (scope !== 'MessageBody') return false;
  return branchTakes(policy, type);
}

function branchTakes(policy: Readonly<Record<string, unknown>>, type: string): boolean {
  const branches = policy.$or;
  if (Array.isArray(branches) && !(TYPE_KEY in policy)) {
    return branches.some((branch) => typeof branch === 'object' && branch !== null && branchTakes({ ...policy, $or: undefined, ...(branch as Record<string, unknown>) }, type));
  }
  if (!(TYPE_KEY in policy) || policy[TYPE_KEY] === undefined) return true;
  return compileFilterPolicy({ [TYPE_KEY]: policy[TYPE_KEY] }, 'MessageBody')({ body: JSON.stringify({ [TYPE_KEY]: type }), attributes: {} });
}
