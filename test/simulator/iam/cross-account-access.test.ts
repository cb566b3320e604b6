/**
 * Issue 41: IAM across accounts, with the real policy engine, on a hand-written access model of two stacks in two
 * accounts (Flow in 111111111111, Sub in 222222222222, both eu-west-1). Across accounts the caller's identity policy
 * AND the resource's policy must allow (/work/shared/AWS-FACTS.md section 7, "Cross-account access"); within one
 * account either suffices. A queue of another account is subscribed by that account: the topic policy must let it.
 */
import { describe, expect, test } from 'vitest';
import { AccessControl } from '../../../simulator/iam/access-control';
import { FlowRequests } from '../../../simulator/iam/flow-requests';
import { IamNames } from '../../../simulator/iam/iam-names';
import { snsDeliveryPrincipal } from '../../../simulator/iam/sns-principal';
import type { AccessModel, NamedResource, TemplatePolicy } from '../../../simulator/model/access-model';
import type { LocalNames } from '../../../simulator/model/flow-model';
import { checkSubscriptionRules } from '../../../simulator/check/subscription-rules';
import { isPendingConfirmation, placeSubscription } from '../../../simulator/model/subscription-placement';
import { engine } from './iam-test-kit';

const FLOW = { account: '111111111111', region: 'eu-west-1' };
const SUB = { account: '222222222222', region: 'eu-west-1' };
const ENVIRONMENTS = new Map([['Flow', FLOW], ['Sub', SUB]]);

function named(stackName: string, logicalId: string, type: string): NamedResource {
  return { key: `${stackName}/${logicalId}`, stackName, logicalId, constructPath: `${stackName}/${logicalId}/Resource`, type };
}

function policy(stackName: string, name: string, statements: unknown[]): TemplatePolicy {
  return { name, stackName, document: { Version: '2012-10-17', Statement: statements } };
}

const TOPIC_ARN = `arn:aws:sns:${FLOW.region}:${FLOW.account}:Flow-Topic`;
const QUEUE_ARN = `arn:aws:sqs:${SUB.region}:${SUB.account}:Sub-Queue`;

const names: LocalNames = {
  region: 'us-east-1',
  accountId: '000000000000',
  environmentOf: (stackName) => ENVIRONMENTS.get(stackName),
  ref: (key) => ({ 'Flow/Topic': TOPIC_ARN, 'Sub/Queue': `http://127.0.0.1:1/${SUB.account}/Sub-Queue`, 'Sub/Fn': 'Sub-Fn', 'Flow/Fn': 'Flow-Fn' })[key],
  getAtt: (key, attribute) => (key === 'Sub/Queue' && attribute === 'Arn' ? QUEUE_ARN : undefined),
};

const TABLE_ARN = `arn:aws:dynamodb:${FLOW.region}:${FLOW.account}:table/Flow-Orders`;

const BUCKET_ARN = 'arn:aws:s3:::ief-payload-flow';
const KEY_ARN = `arn:aws:kms:${FLOW.region}:${FLOW.account}:key/*`;

function control(options: { topicGrant?: boolean; tablePolicy?: boolean; payloadKeyStatement?: boolean; offloads?: boolean } = {}): { control: AccessControl; requests: FlowRequests } {
  const resources = Object.fromEntries(
    [
      named('Flow', 'Orders', 'AWS::DynamoDB::Table'),
      named('Flow', 'Topic', 'AWS::SNS::Topic'),
      named('Flow', 'Fn', 'AWS::Lambda::Function'),
      named('Flow', 'FnRole', 'AWS::IAM::Role'),
      named('Sub', 'Fn', 'AWS::Lambda::Function'),
      named('Sub', 'FnRole', 'AWS::IAM::Role'),
      named('Sub', 'Queue', 'AWS::SQS::Queue'),
      named('Sub', 'Subscription', 'AWS::SNS::Subscription'),
      { ...named('Flow', 'Bucket', 'AWS::S3::Bucket'), physicalName: 'ief-payload-flow' },
      named('Flow', 'Key', 'AWS::KMS::Key'),
      ...(options.offloads === true ? [named('Flow', 'PayloadBucket', 'AWS::S3::Bucket')] : []),
    ].map((resource) => [resource.key, resource]),
  );
  const putOrders = { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: TABLE_ARN };
  const role = (stackName: string) => ({
    key: `${stackName}/FnRole`,
    stackName,
    logicalId: 'FnRole',
    constructPath: `${stackName}/FnRole/Resource`,
    // the claim-check's reads of the flow's payload bucket and key (a subscriber reading offloaded events)
    policies: [policy(stackName, `${stackName}/FnRole/DefaultPolicy`, [putOrders, { Effect: 'Allow', Action: 's3:GetObject', Resource: `${BUCKET_ARN}/*` }, { Effect: 'Allow', Action: 'kms:Decrypt', Resource: KEY_ARN }])],
    unevaluatedManagedPolicies: [],
  });
  const access: AccessModel = {
    roles: [role('Flow'), role('Sub')],
    executionRoles: { 'Flow/Fn': { role: 'Flow/FnRole' }, 'Sub/Fn': { role: 'Sub/FnRole' } },
    resourcePolicies: {
      'Flow/Topic': [
        policy('Flow', 'Flow/TopicPolicy', [
          { Sid: 'Unrelated', Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${FLOW.account}:root` }, Action: 'sns:GetTopicAttributes', Resource: TOPIC_ARN },
          ...(options.topicGrant === false
            ? []
            : [{ Sid: 'AllowSubscribeSub', Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${SUB.account}:root` }, Action: 'sns:Subscribe', Resource: TOPIC_ARN, Condition: { StringEquals: { 'sns:Protocol': 'sqs', 'sns:Endpoint': QUEUE_ARN } } }]),
        ]),
      ],
      ...(options.tablePolicy === true
        ? { 'Flow/Orders': [policy('Flow', 'Flow/OrdersPolicy', [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${SUB.account}:root` }, Action: 'dynamodb:PutItem', Resource: '*' }])] }
        : {}),
      'Flow/Bucket': [policy('Flow', 'Flow/BucketPolicy', [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${SUB.account}:root` }, Action: 's3:GetObject', Resource: `${BUCKET_ARN}/*` }])],
      'Sub/Queue': [
        policy('Sub', 'Sub/QueuePolicy', [{ Effect: 'Allow', Principal: { Service: 'sns.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: QUEUE_ARN, Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } } }]),
      ],
    },
    keys: [
      {
        key: 'Flow/Key',
        stackName: 'Flow',
        logicalId: 'Key',
        keyPolicy: policy('Flow', 'Flow/Key key policy', [
          { Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${FLOW.account}:root` }, Action: 'kms:*', Resource: '*' },
          ...(options.payloadKeyStatement === true
            ? [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${SUB.account}:root` }, Action: 'kms:Decrypt', Resource: '*', Condition: { StringEquals: { 'kms:ViaService': `s3.${FLOW.region}.amazonaws.com` } } }]
            : []),
        ]),
      },
    ],
    encryption: { 'Flow/Bucket': { key: 'Flow/Key' } },
    resources,
    notEvaluated: [],
  };
  const iamNames = new IamNames(names, resources, new Map([['Flow/Orders', { tableName: 'Flow-Orders' }]]));
  const accessControl = new AccessControl(access, iamNames, engine);
  return { control: accessControl, requests: new FlowRequests(accessControl, new Map([['Flow-Orders', 'Flow/Orders']])) };
}

const put = JSON.stringify({ TableName: 'Flow-Orders', Item: {} });

describe('IAM across accounts', () => {
  test("each resource's ARN carries its stack's account and Region", () => {
    const iamNames = new IamNames(names, { 'Flow/Orders': named('Flow', 'Orders', 'AWS::DynamoDB::Table') }, new Map([['Flow/Orders', { tableName: 'Flow-Orders' }]]));
    expect(iamNames.tableArn('Flow/Orders')).toBe(TABLE_ARN);
    expect(iamNames.accountOf('Sub/Queue')).toBe(SUB.account);
  });

  test('a role with a RoleName has that name in its ARN (a policy pinning aws:PrincipalArn to it then matches); one without gets a generated name', () => {
    const resources = {
      'Sub/NamedRole': { ...named('Sub', 'NamedRole', 'AWS::IAM::Role'), physicalName: 'Sub-Function-Role-6107F20D' },
      'Sub/FnRole': named('Sub', 'FnRole', 'AWS::IAM::Role'),
    };
    const iamNames = new IamNames(names, resources, new Map());
    expect(iamNames.getAtt('Sub/NamedRole', 'Arn')).toBe(`arn:aws:iam::${SUB.account}:role/Sub-Function-Role-6107F20D`);
    expect(iamNames.ref('Sub/NamedRole')).toBe('Sub-Function-Role-6107F20D');
    expect(iamNames.getAtt('Sub/FnRole', 'Arn')).toBe(`arn:aws:iam::${SUB.account}:role/Sub-FnRole`);
  });

  test("an identity policy alone allows a request in its own account, not one on another account's table", async () => {
    const { control: access, requests } = control();
    expect(await access.authorizeAll(requests.dynamoDb('Flow/Fn', 'PutItem', put))).toEqual({ allowed: true, evaluated: true });
    const across = await access.authorizeAll(requests.dynamoDb('Sub/Fn', 'PutItem', put));
    expect(across.allowed).toBe(false);
    expect(across.message).toContain(`User: arn:aws:sts::${SUB.account}:assumed-role/`);
    // its own identity policy allows it: the denial names what is missing, the table's resource policy, not the role's grant
    expect(across.message).toContain(`because the resource policy of Flow/Orders does not allow Sub/FnRole of account ${SUB.account}: across accounts both the identity policy and the resource policy must allow`);
    expect(access.figures().denials[0]?.fix).toContain('resource policy');
  });

  test("a role of another account refused kms:Decrypt on the flow's payload key (its own policy allows it) is told the key policy's cross-account statement, not the same-account grant (NUX14-1)", async () => {
    const { control: access, requests } = control();
    const read = requests.s3Object('Sub/Fn', 'GetObject', 'Flow/Bucket', 'event-data/abc', {}, true);

    const outcome = await access.authorizeAll(read);

    expect(outcome.allowed).toBe(false);
    const denial = access.figures().denials.find((each) => each.action === 'kms:Decrypt')!;
    // the fix is the flow key's policy statement for the other account, pinned to the role, through S3, for the bucket
    expect(denial.fix).not.toContain('grantDecrypt');
    expect(denial.fix).toContain(`the key policy of Flow/Key must allow the role of account ${SUB.account}`);
    expect(denial.fix).toContain("'aws:PrincipalArn'");
    expect(denial.fix).toContain(`'kms:ViaService': 's3.${FLOW.region}.amazonaws.com'`);
    expect(denial.fix).toMatch(/'kms:EncryptionContext:aws:s3:arn': 'arn:aws:s3:[^']*ief-payload-flow'/);
    expect(denial.fix).toContain('writes this statement itself');
    // with the statement, the read is allowed
    const granted = control({ payloadKeyStatement: true });
    expect(await granted.control.authorizeAll(granted.requests.s3Object('Sub/Fn', 'GetObject', 'Flow/Bucket', 'event-data/abc', {}, true))).toMatchObject({ allowed: true });
  });

  test("the other account's request is allowed when the table's resource policy names that account too", async () => {
    const { control: access, requests } = control({ tablePolicy: true });
    expect(await access.authorizeAll(requests.dynamoDb('Sub/Fn', 'PutItem', put))).toEqual({ allowed: true, evaluated: true });
  });

  test("SNS delivers to a queue of another account by the queue policy's statement for the topic", async () => {
    const { control: access, requests } = control();
    expect(await access.authorizeAll(requests.deliver('Flow/Topic', 'Sub/Queue'))).toEqual({ allowed: true, evaluated: true });
  });

  test('SNS delivers as sns.<Region>.amazonaws.com from a topic of an opt-in Region to another Region, sns.amazonaws.com otherwise (review r41, R41-3)', () => {
    expect(snsDeliveryPrincipal('eu-south-1', 'eu-central-1')).toBe('sns.eu-south-1.amazonaws.com');
    expect(snsDeliveryPrincipal('eu-south-1', 'eu-south-1')).toBe('sns.amazonaws.com');
    expect(snsDeliveryPrincipal('eu-west-1', 'eu-central-1')).toBe('sns.amazonaws.com');
  });

  test("the queue's account subscribes it when the topic policy lets that account, for that endpoint; without the grant it is denied, naming the topic policy", async () => {
    expect(await control().control.authorizeSubscribe('Sub/Subscription', 'Flow/Topic', 'Sub/Queue')).toEqual({ allowed: true, evaluated: true });
    const { control: withoutGrant } = control({ topicGrant: false });
    const denied = await withoutGrant.authorizeSubscribe('Sub/Subscription', 'Flow/Topic', 'Sub/Queue');
    expect(denied?.allowed).toBe(false);
    const [denial] = withoutGrant.figures().denials;
    expect(denial?.action).toBe('sns:Subscribe');
    expect(denial?.reason).toContain(`the topic policy of Flow/Topic has no statement that allows account ${SUB.account} (arn:aws:iam::${SUB.account}:root) sns:Subscribe with sns:Protocol sqs and sns:Endpoint ${QUEUE_ARN}`);
    expect(withoutGrant.figures().denied).toBe(1);
    expect(denial?.fix).toContain("list 222222222222 in the flow's subscriberAccounts");
  });

  test("the topic grant's fix does not offer subscriberAccounts for a flow that offloads large events, which refuses it at synth (NUX14-7)", async () => {
    const { control: withoutGrant } = control({ topicGrant: false, offloads: true });
    await withoutGrant.authorizeSubscribe('Sub/Subscription', 'Flow/Topic', 'Sub/Queue');
    const [denial] = withoutGrant.figures().denials;
    expect(denial?.action).toBe('sns:Subscribe');
    expect(denial?.fix).toContain('subscribe through the flow');
    expect(denial?.fix).not.toContain('subscriberAccounts');
  });

  /**
   * Review r41 (R41-2): the topic's account needs no grant to subscribe, so IAM asks nothing; but a subscription it
   * makes of another account's queue is pending confirmation (SNS developer guide, "Sending Amazon SNS messages to an
   * Amazon SQS queue in a different account": only one the queue's owner creates needs none), and SNS delivers nothing
   * through it: the run delivers nothing and fails naming it (simulator/check/subscription-rules.ts). A subscription of
   * the topic's own account's queue is confirmed at once.
   */
  test("a subscription in the topic's account asks nothing of IAM; of another account's queue it is pending confirmation, of its own account's not", async () => {
    expect(await control().control.authorizeSubscribe('Flow/Subscription', 'Flow/Topic', 'Sub/Queue')).toBeUndefined();
    const subscription = { key: 'Flow/Subscription', stackName: 'Flow', logicalId: 'Subscription', topic: 'Flow/Topic', rawMessageDelivery: true, filterPolicyScope: 'MessageAttributes' as const };
    const foreignQueue = placeSubscription(ENVIRONMENTS, { ...subscription, queue: 'Sub/Queue' })!;
    expect(isPendingConfirmation(foreignQueue)).toBe(true);
    expect(checkSubscriptionRules({ subscriptions: [{ ...subscription, queue: 'Sub/Queue' }], topics: [], queues: [], environments: ENVIRONMENTS })).toEqual([
      { kind: 'unconfirmed-subscription', detail: expect.stringContaining("create the subscription in the queue's account 222222222222") },
    ]);
    expect(isPendingConfirmation(placeSubscription(ENVIRONMENTS, { ...subscription, queue: 'Flow/Queue' })!)).toBe(false);
    expect(isPendingConfirmation(placeSubscription(ENVIRONMENTS, { ...subscription, key: 'Sub/Subscription', stackName: 'Sub', queue: 'Sub/Queue' })!)).toBe(false);
  });
});
