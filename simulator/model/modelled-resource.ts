/** How the model names a template resource: below flow-model.ts and access-model.ts, which both use it. */

/** `<stack name>/<logical id>` of a template resource. */
export type ResourceKey = string;

/** What every modelled resource carries. */
export interface ModelledResource {
  /** `<stack name>/<logical id>` */
  readonly key: ResourceKey;
  readonly stackName: string;
  readonly logicalId: string;
  /** The construct path (`aws:cdk:path` metadata), when the template has it; the readable name in reports. */
  readonly constructPath?: string;
}
