/**
 * Finds a resource the way a scenario names it: by logical id, by key (`<stack>/<logical id>`), or by its construct
 * path or a trailing part of it (e.g. `Orders/PlaceOrder`), where the `Resource` children of an L2 construct are left off.
 */
import type { ModelledResource } from './flow-model';

/** The construct path's segments, without the trailing `Resource` children of an L2 construct. */
export function constructSegments(constructPath: string): string[] {
  const parts = constructPath.split('/');
  while (parts.length > 1 && parts[parts.length - 1] === 'Resource') parts.pop();
  return parts;
}

/** How a resource is shown in "did you mean" lists: its construct path without `Resource` children, else its key. */
export function shownName(resource: ModelledResource): string {
  return resource.constructPath !== undefined ? constructSegments(resource.constructPath).join('/') : resource.key;
}

/** Every resource `reference` names (none, one, or several when it is ambiguous). */
export function resourcesNamed<T extends ModelledResource>(resources: readonly T[], reference: string): T[] {
  const wanted = reference.split('/').filter((part) => part !== '');
  return resources.filter((resource) => {
    if (resource.logicalId === reference || resource.key === reference) return true;
    if (resource.constructPath === undefined) return false;
    const path = constructSegments(resource.constructPath);
    return wanted.length <= path.length && wanted.every((part, index) => path[path.length - wanted.length + index] === part);
  });
}
