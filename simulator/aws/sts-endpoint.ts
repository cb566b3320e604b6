/**
 * The STS of a served run (`simulate --serve`): answers `AssumeRole` (query protocol, as the SDK's credential providers
 * send it for a profile with `role_arn`) for the roles of the served app, e.g. the `CrossAccountOperator<account>` role
 * `flow.grantOperator` creates for another account's operator. The caller is named by the access key id that signed
 * the request (a served run has no IAM users): `<account>` for that account's root, `<account>.<role name>` for
 * `arn:aws:iam::<account>:role/<role name>`. The decision is the role's trust policy and, across accounts, the
 * caller's identity policy (../iam/assume-role.ts); a refusal is STS's `AccessDenied` naming what refused it. The
 * temporary credentials it issues name the role: a request signed with them is authorized under the role's policies
 * (`roleOf`, used by the gateway to route the session's DynamoDB requests through an authorizing proxy).
 */
import { createHash } from 'node:crypto';
import type { ResourceKey } from '../model/flow-model';
import { principalOfAccessKey, type AssumeRoleDecision, type AssumingPrincipal } from '../iam/assume-role';
import type { GatewayAnswer, ServiceHandler } from './aws-gateway';

/** The access key id a SigV4-signed request names, or undefined when it is not signed. */
export function signingAccessKey(authorization: string | undefined): string | undefined {
  return /Credential=([^/]+)\//.exec(authorization ?? '')?.[1];
}

/** Decides one AssumeRole (../iam/assume-role.ts's decideAssumeRole, bound to a run's access model). */
export type AssumeRoleDecider = (caller: AssumingPrincipal, roleArn: string) => Promise<AssumeRoleDecision>;

/**
 * A session's credentials never expire while the run serves: the served run's clock is simulated and the SDK compares
 * an expiration with the real clock, so a fixed far date keeps the run deterministic (no wall clock in its answers).
 */
const EXPIRATION = '2999-12-31T23:59:59Z';

const xml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The served run's STS: `handler` for the gateway, `roleOf` for the requests signed with the credentials it issued. */
export class ServedSts {
  private readonly sessions = new Map<string, ResourceKey>();

  public constructor(private readonly decide: AssumeRoleDecider) {}

  /** The role a session's access key id was issued for, or undefined when it is not one of this run's sessions. */
  public roleOf(accessKeyId: string | undefined): ResourceKey | undefined {
    return accessKeyId === undefined ? undefined : this.sessions.get(accessKeyId);
  }

  /** The gateway's handler of `sts` requests. */
  public readonly handler: ServiceHandler = async (request) => {
    const form = new URLSearchParams(request.body.toString('utf8'));
    const action = form.get('Action');
    const requestId = createHash('sha256').update(request.body).update(String(this.sessions.size)).digest('hex').slice(0, 32);
    if (action !== 'AssumeRole') return this.error(400, 'InvalidAction', `the served run's STS answers AssumeRole only, not ${action ?? 'a request without Action'}`, requestId);
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? 'session';
    const accessKeyId = signingAccessKey(request.headers.authorization);
    const caller = accessKeyId === undefined ? undefined : principalOfAccessKey(accessKeyId);
    if (caller === undefined) {
      return this.error(
        403,
        'AccessDenied',
        `the served run does not know who signed this AssumeRole (access key id ${accessKeyId ?? 'none'}): sign it with AWS_ACCESS_KEY_ID=<account> (that account's root) ` +
          'or <account>.<role name> (arn:aws:iam::<account>:role/<role name>), the principal the trust policy names',
        requestId,
      );
    }
    const decision = await this.decide(caller, roleArn);
    if (!decision.allowed) return this.error(decision.code === 'NoSuchEntity' ? 404 : 403, decision.code, decision.message, requestId);
    const issued = `ASIASTS${createHash('sha256').update(`${roleArn}|${sessionName}|${caller.arn}|${this.sessions.size}`).digest('hex').slice(0, 13).toUpperCase()}`;
    this.sessions.set(issued, decision.role);
    const roleName = roleArn.split('/').pop()!;
    const account = roleArn.split(':')[4]!;
    const body =
      '<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>' +
      `<Credentials><AccessKeyId>${issued}</AccessKeyId><SecretAccessKey>simulator</SecretAccessKey><SessionToken>${issued}</SessionToken><Expiration>${EXPIRATION}</Expiration></Credentials>` +
      `<AssumedRoleUser><AssumedRoleId>AROASIM:${xml(sessionName)}</AssumedRoleId><Arn>arn:aws:sts::${account}:assumed-role/${xml(roleName)}/${xml(sessionName)}</Arn></AssumedRoleUser>` +
      `</AssumeRoleResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`;
    return { status: 200, headers: { 'content-type': 'text/xml' }, body };
  };

  private error(status: number, code: string, message: string, requestId: string): GatewayAnswer {
    const body = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
    return { status, headers: { 'content-type': 'text/xml' }, body };
  }
}
