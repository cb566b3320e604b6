/**
 * Errors that say `verify` did not reach AWS (or the served run) or was refused by it, so it has no verdict: no
 * credentials the SDK's default chain finds, credentials AWS does not accept or that may not make verify's calls, an
 * endpoint that does not answer. The CLI gives them their own exit code (4), apart from VIOLATED (1) and NOT PROVEN (5),
 * and says what to check: the sentence every command that reaches AWS says (operator/cli/aws-access.ts).
 */
import { awsAccessHint } from '../../operator/cli/aws-access';

export { awsUnreachedReason } from '../../operator/cli/aws-access';

/** What to check, said with every such error. */
export const AWS_ACCESS_HINT = `${awsAccessHint('verify', 'AWS_ENDPOINT_URL')}; the permissions it needs are in docs/DEPLOYING.md`;
