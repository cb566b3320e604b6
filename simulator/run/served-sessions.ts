/**
 * The served run's STS sessions (`simulate --serve`): its STS (../aws/sts-endpoint.ts) answers AssumeRole for a role of
 * the app under the run's IAM, and the DynamoDB requests signed with a session's credentials go through a proxy that
 * authorizes each under that role's policies (as AWS does for the assumed role), one proxy per role; the run's S3
 * (the claim-check's bucket) and its SQS check a session's requests under its role too (and a request signed with an
 * `<account>.<role>` key as that principal: ../iam/flow-access.ts). Every other request is forwarded as before. With IAM off (`--iam off`, or no policy engine)
 * AssumeRole is granted for any role of the app, unevaluated, and the session's requests are not authorized either.
 */
import { ServedSts } from '../aws/sts-endpoint';
import { startDynamoDbProxy, type DynamoDbProxy } from '../faults/dynamodb-proxy';
import type { FlowAccess } from '../iam/flow-access';
import type { ResourceKey } from '../model/flow-model';

/** What the gateway takes from the sessions. */
export interface ServedSessions {
  readonly sts: ServedSts;
  /** The endpoint a request of `service` signed by `accessKeyId` goes to, when it is a session's DynamoDB request. */
  route(service: string, accessKeyId: string | undefined): Promise<string | undefined>;
  stop(): Promise<void>;
}

/** The sessions of a served run whose DynamoDB is at `dynamoDbEndpoint`; `access` is the run's IAM, when on. */
export function servedSessions(access: FlowAccess | undefined, dynamoDbEndpoint: string): ServedSessions {
  const sts = new ServedSts(async (caller, roleArn) => {
    if (access !== undefined) return access.assumeRole(caller, roleArn);
    return { allowed: true, role: roleArn, roleArn, notEvaluated: 'IAM is off in this run' };
  });
  // the run's S3 check (the claim-check's bucket) takes a session's requests under its role, as the proxies do DynamoDB's
  access?.actAsSessions((accessKeyId) => sts.roleOf(accessKeyId));
  const proxies = new Map<ResourceKey, Promise<DynamoDbProxy>>();
  return {
    sts,
    route: async (service, accessKeyId) => {
      const role = sts.roleOf(accessKeyId);
      if (service !== 'dynamodb' || role === undefined || access === undefined) return undefined;
      let proxy = proxies.get(role);
      if (proxy === undefined) {
        proxy = startDynamoDbProxy(dynamoDbEndpoint, { authorize: access.dynamoDbCheck(role) });
        proxies.set(role, proxy);
      }
      return (await proxy).endpoint;
    },
    stop: async () => {
      for (const proxy of proxies.values()) await (await proxy).stop();
    },
  };
}
