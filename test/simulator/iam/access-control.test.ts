/**
 * AccessControl with the real policy engine (@cloud-copilot/iam-simulate) on hand-written access models: identity
 * policies, explicit denies, queue policies for SNS, key policies with and without the root delegation, roles from
 * outside the app, the request-to-ARN mapping of DynamoDB calls, and the least-privilege figures.
 */
import { describe, expect, test } from 'vitest';
import { AccessControl } from '../../../simulator/iam/access-control';
import { EVENT_TOPIC_PUBLISH_HINT } from '../../../simulator/iam/grant-hints';
import { FlowRequests } from '../../../simulator/iam/flow-requests';
import { IamNames } from '../../../simulator/iam/iam-names';
import type { AccessModel, NamedResource } from '../../../simulator/model/access-model';
import { ACCOUNT, byKey, engine, getAtt, localNames, policy, REGION, resource, rootPrincipal } from './iam-test-kit';

const RESOURCES: Record<string, NamedResource> = byKey([
  resource('Fn', 'AWS::Lambda::Function'),
  resource('FnRole', 'AWS::IAM::Role'),
  resource('Orders', 'AWS::DynamoDB::Table'),
  resource('Queue', 'AWS::SQS::Queue'),
  resource('Topic', 'AWS::SNS::Topic'),
  resource('OtherTopic', 'AWS::SNS::Topic'),
  resource('Key', 'AWS::KMS::Key'),
  resource('Imported', 'AWS::Lambda::Function'),
]);

function accessControl(overrides: Partial<AccessModel> = {}, eventTopics?: ConstructorParameters<typeof AccessControl>[3]): { control: AccessControl; requests: FlowRequests } {
  const access: AccessModel = {
    roles: [
      {
        key: 'App/FnRole',
        stackName: 'App',
        logicalId: 'FnRole',
        constructPath: 'App/FnRole/Resource',
        policies: [
          policy('App/FnRole/DefaultPolicy', [
            { Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:Scan'], Resource: [getAtt('Orders'), { 'Fn::Join': ['', [getAtt('Orders'), '/index/*']] }] },
            { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: getAtt('Queue') },
            { Effect: 'Allow', Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Resource: getAtt('Key') },
            { Effect: 'Deny', Action: 'dynamodb:DeleteItem', Resource: '*' },
            { Effect: 'Allow', Action: 'logs:PutLogEvents', Resource: '*' },
          ]),
        ],
        unevaluatedManagedPolicies: [],
      },
    ],
    executionRoles: { 'App/Fn': { role: 'App/FnRole' }, 'App/Imported': { external: '"arn:aws:iam::123456789012:role/elsewhere"' } },
    resourcePolicies: {
      'App/Queue': [
        policy('App/QueuePolicy', [
          { Effect: 'Deny', Principal: { AWS: '*' }, Action: 'sqs:*', Resource: getAtt('Queue'), Condition: { Bool: { 'aws:SecureTransport': 'false' } } },
          { Effect: 'Allow', Principal: { Service: 'sns.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: getAtt('Queue'), Condition: { ArnEquals: { 'aws:SourceArn': { Ref: 'Topic' } } } },
        ]),
      ],
    },
    keys: [{ key: 'App/Key', stackName: 'App', logicalId: 'Key', constructPath: 'App/Key/Resource', keyPolicy: policy('App/Key key policy', [{ Effect: 'Allow', Principal: rootPrincipal, Action: 'kms:*', Resource: '*' }]) }],
    encryption: { 'App/Queue': { key: 'App/Key' } },
    resources: RESOURCES,
    notEvaluated: [],
    ...overrides,
  };
  const tables = new Map([['App/Orders', { tableName: 'App-Orders' }]]);
  const names = new IamNames(localNames, access.resources, tables);
  const accessControl = new AccessControl(access, names, engine, eventTopics);
  return { control: accessControl, requests: new FlowRequests(accessControl, new Map([['App-Orders', 'App/Orders']])) };
}

describe('AccessControl', () => {
  test('allows what an identity policy grants, on the table and its indexes', async () => {
    const { control, requests } = accessControl();

    const put = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', JSON.stringify({ TableName: 'App-Orders', Item: {} })));
    const scanIndex = await control.authorizeAll(requests.dynamoDb('App/Fn', 'Scan', JSON.stringify({ TableName: 'App-Orders', IndexName: 'ByCustomer' })));

    expect(put).toEqual({ allowed: true, evaluated: true });
    expect(scanIndex).toEqual({ allowed: true, evaluated: true });
  });

  test('denies each action of a transaction separately: one ungranted action refuses the whole call, with the reason and the grant', async () => {
    const { control, requests } = accessControl();
    const body = JSON.stringify({ TransactItems: [{ Put: { TableName: 'App-Orders', Item: {} } }, { Update: { TableName: 'App-Orders', Key: {} } }] });

    const outcome = await control.authorizeAll(requests.dynamoDb('App/Fn', 'TransactWriteItems', body));

    expect(outcome.allowed).toBe(false);
    expect(outcome.message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/App-FnRole/App-Fn is not authorized to perform: dynamodb:UpdateItem on resource: arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/App-Orders because no identity-based policy allows the dynamodb:UpdateItem action (simulated IAM evaluation)`,
    );
    expect(control.figures().denials).toEqual([
      {
        principal: 'App/FnRole',
        caller: 'App/Fn',
        action: 'dynamodb:UpdateItem',
        resource: 'App/Orders',
        resourceArn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/App-Orders`,
        reason: 'no identity-based policy allows the dynamodb:UpdateItem action',
        fix: "orders.grant(fn, 'dynamodb:UpdateItem') (or orders.grantWriteData(fn) for every write)",
        count: 1,
      },
    ]);
  });

  test('an explicit Deny wins over any grant, and the hint says no grant can fix it', async () => {
    const { control, requests } = accessControl();

    const outcome = await control.authorizeAll(requests.dynamoDb('App/Fn', 'DeleteItem', JSON.stringify({ TableName: 'App-Orders', Key: {} })));

    expect(outcome.allowed).toBe(false);
    const [denial] = control.figures().denials;
    expect(denial?.reason).toBe('an explicit Deny in App/FnRole/DefaultPolicy (statement 4) matches it');
    expect(denial?.fix).toContain('no grant overrides an explicit Deny');
  });

  test('SNS may send to the queue only for the topic its policy names, and needs the key policy too', async () => {
    const { control, requests } = accessControl();

    const fromTopic = await control.authorizeAll(requests.deliver('App/Topic', 'App/Queue'));
    const fromOther = await control.authorizeAll(requests.deliver('App/OtherTopic', 'App/Queue'));

    // the queue policy lets App/Topic send, but the key policy only delegates to the account's IAM policies, which a
    // service principal has none of: SNS may not encrypt for the queue
    expect(fromTopic.allowed).toBe(false);
    expect(fromTopic.message).toContain('kms:GenerateDataKey');
    expect(fromOther.allowed).toBe(false);
    expect(fromOther.message).toContain('sqs:SendMessage');
    const reasons = control.figures().denials.map((denial) => denial.reason);
    expect(reasons).toEqual([
      'the key policy of App/Key does not allow sns.amazonaws.com to kms:GenerateDataKey for App/Topic (aws:SourceArn)',
      'the resource policy of App/Queue does not allow sns.amazonaws.com to sqs:SendMessage for App/OtherTopic (aws:SourceArn)',
    ]);
  });

  test('a key policy that lets SNS use the key for the topic allows the delivery', async () => {
    const keys: AccessModel['keys'] = [
      {
        key: 'App/Key',
        stackName: 'App',
        logicalId: 'Key',
        keyPolicy: policy('App/Key key policy', [
          { Effect: 'Allow', Principal: rootPrincipal, Action: 'kms:*', Resource: '*' },
          { Effect: 'Allow', Principal: { Service: 'sns.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'], Resource: '*', Condition: { ArnEquals: { 'aws:SourceArn': { Ref: 'Topic' } } } },
        ]),
      },
    ];
    const { control, requests } = accessControl({ keys });

    expect(await control.authorizeAll(requests.deliver('App/Topic', 'App/Queue'))).toEqual({ allowed: true, evaluated: true });
  });

  test('a key policy that neither names the role nor delegates to the account denies, whatever the identity policy grants', async () => {
    const keys: AccessModel['keys'] = [
      { key: 'App/Key', stackName: 'App', logicalId: 'Key', keyPolicy: policy('App/Key key policy', [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${ACCOUNT}:role/admin` }, Action: 'kms:*', Resource: '*' }]) },
    ];
    const { control, requests } = accessControl({ keys });

    const outcome = await control.authorizeAll(requests.sqs({ kind: 'role', via: 'App/Fn' }, 'SendMessage', 'App/Queue'));

    expect(outcome.allowed).toBe(false);
    expect(control.figures().denials[0]?.reason).toBe("the key policy of App/Key neither allows the role nor delegates to the account's IAM policies");
  });

  test('a role from outside the app is not evaluated, counted and named, never denied', async () => {
    const { control, requests } = accessControl();

    const outcome = await control.authorizeAll(requests.dynamoDb('App/Imported', 'DeleteItem', JSON.stringify({ TableName: 'App-Orders', Key: {} })));

    expect(outcome).toEqual({ allowed: true, evaluated: false });
    const figures = control.figures();
    expect(figures).toMatchObject({ requests: 1, authorized: 0, denied: 0, notEvaluated: 1 });
    expect(figures.notEvaluatedReasons).toEqual(['App/Imported runs under a role from outside the app: its requests are not evaluated']);
  });

  test('counts every request, cached or not, and lists the granted permissions no request used (services it runs only)', async () => {
    const { control, requests } = accessControl();
    const put = requests.dynamoDb('App/Fn', 'PutItem', JSON.stringify({ TableName: 'App-Orders', Item: {} }));

    await control.authorizeAll(put);
    await control.authorizeAll(put);

    const figures = control.figures();
    expect(figures).toMatchObject({ requests: 2, authorized: 2, denied: 0, rolesEvaluated: 1 });
    expect(figures.unusedPermissions).toEqual({
      'App/FnRole': [
        { policy: 'App/FnRole/DefaultPolicy', statement: '1', action: 'dynamodb:PutItem', resource: 'index * of App/Orders', grantedBy: 'you' },
        { policy: 'App/FnRole/DefaultPolicy', statement: '1', action: 'dynamodb:Scan', resource: 'App/Orders', grantedBy: 'you' },
        { policy: 'App/FnRole/DefaultPolicy', statement: '1', action: 'dynamodb:Scan', resource: 'index * of App/Orders', grantedBy: 'you' },
        { policy: 'App/FnRole/DefaultPolicy', statement: '2', action: 'sqs:SendMessage', resource: 'App/Queue', grantedBy: 'you' },
        { policy: 'App/FnRole/DefaultPolicy', statement: '3', action: 'kms:Decrypt', resource: 'App/Key', grantedBy: 'you' },
        { policy: 'App/FnRole/DefaultPolicy', statement: '3', action: 'kms:GenerateDataKey', resource: 'App/Key', grantedBy: 'you' },
      ],
    });
  });

  test("a function's sns:Publish refused on a flow's event topic is answered with the outbox; on another topic, or the relay's own, with grantPublish", async () => {
    const { control, requests } = accessControl({}, { topics: new Set(['App/Topic']), relays: new Set() });

    await control.authorizeAll(requests.topicAction('App/Fn', 'Publish', 'App/Topic'));
    await control.authorizeAll(requests.topicAction('App/Fn', 'Publish', 'App/OtherTopic'));

    const fixes = Object.fromEntries(control.figures().denials.map((denial) => [denial.resource, denial.fix]));
    expect(fixes).toEqual({ 'App/Topic': EVENT_TOPIC_PUBLISH_HINT('topic', 'fn'), 'App/OtherTopic': 'otherTopic.grantPublish(fn)' });

    // the relay's fan-out function itself is granted
    const relay = accessControl({}, { topics: new Set(['App/Topic']), relays: new Set(['App/Fn']) });
    await relay.control.authorizeAll(relay.requests.topicAction('App/Fn', 'Publish', 'App/Topic'));
    expect(relay.control.figures().denials.map((denial) => denial.fix)).toEqual(['topic.grantPublish(fn)']);
  });
});
