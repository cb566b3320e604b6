/**
 * The request context and the policies each request is evaluated with, against the real policy engine
 * (@cloud-copilot/iam-simulate): permissions boundaries, DynamoDB's fine-grained access keys, the KMS requests of a
 * pipe reading a stream under a customer-managed key, DynamoDB's encryption context, role tags as aws:PrincipalTag,
 * and the rule that a condition reading a key the simulator does not fill makes the request "not evaluated", never an
 * Allow (issue 20, section 1).
 */
import { describe, expect, test } from 'vitest';
import { AccessControl } from '../../../simulator/iam/access-control';
import { FlowRequests } from '../../../simulator/iam/flow-requests';
import { IamNames } from '../../../simulator/iam/iam-names';
import type { AccessModel, NamedResource, RoleAccessModel, TemplatePolicy } from '../../../simulator/model/access-model';
import { ACCOUNT, byKey, engine, getAtt, localNames, policy, REGION, resource, rootPrincipal } from './iam-test-kit';

const TABLE_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/App-Orders`;

const RESOURCES: Record<string, NamedResource> = byKey([
  resource('Fn', 'AWS::Lambda::Function'),
  resource('FnRole', 'AWS::IAM::Role'),
  resource('Pipe', 'AWS::Pipes::Pipe'),
  resource('PipeRole', 'AWS::IAM::Role'),
  resource('Orders', 'AWS::DynamoDB::Table'),
  resource('Outbox', 'AWS::DynamoDB::Table'),
  resource('Key', 'AWS::KMS::Key'),
  resource('Boundary', 'AWS::IAM::ManagedPolicy'),
  resource('Queue', 'AWS::SQS::Queue'),
  resource('Topic', 'AWS::SNS::Topic'),
]);

function role(logicalId: string, statements: unknown[], extra: Partial<RoleAccessModel> = {}): RoleAccessModel {
  return { key: `App/${logicalId}`, stackName: 'App', logicalId, constructPath: `App/${logicalId}/Resource`, policies: [policy(`App/${logicalId}/DefaultPolicy`, statements)], unevaluatedManagedPolicies: [], ...extra };
}

interface Fixture {
  readonly fnStatements?: unknown[];
  readonly fnRole?: Partial<RoleAccessModel>;
  readonly pipeStatements?: unknown[];
  readonly keyStatements?: unknown[];
  readonly encryption?: AccessModel['encryption'];
  readonly resourcePolicies?: AccessModel['resourcePolicies'];
}

function accessControl(fixture: Fixture = {}): { control: AccessControl; requests: FlowRequests } {
  const access: AccessModel = {
    roles: [role('FnRole', fixture.fnStatements ?? [], fixture.fnRole), role('PipeRole', fixture.pipeStatements ?? [])],
    executionRoles: { 'App/Fn': { role: 'App/FnRole' }, 'App/Pipe': { role: 'App/PipeRole' } },
    resourcePolicies: fixture.resourcePolicies ?? {},
    keys: [{ key: 'App/Key', stackName: 'App', logicalId: 'Key', keyPolicy: policy('App/Key key policy', fixture.keyStatements ?? [{ Effect: 'Allow', Principal: rootPrincipal, Action: 'kms:*', Resource: '*' }]) }],
    encryption: fixture.encryption ?? {},
    resources: RESOURCES,
    notEvaluated: [],
    tableKeys: { 'App/Orders': { partitionKey: 'pk', indexPartitionKeys: { ByCustomer: 'customer' } }, 'App/Outbox': { partitionKey: 'pk', indexPartitionKeys: {} } },
  };
  const tables = new Map([
    ['App/Orders', { tableName: 'App-Orders' }],
    ['App/Outbox', { tableName: 'App-Outbox', streamLabel: '2026-01-01T00:00:00.000' }],
  ]);
  const names = new IamNames(localNames, access.resources, tables);
  const control = new AccessControl(access, names, engine);
  return { control, requests: new FlowRequests(control, new Map([['App-Orders', 'App/Orders'], ['App-Outbox', 'App/Outbox']])) };
}

const put = (item: Record<string, unknown>, extra: Record<string, unknown> = {}): string => JSON.stringify({ TableName: 'App-Orders', Item: item, ...extra });
const S = (value: string): { S: string } => ({ S: value });

describe('permissions boundaries', () => {
  const boundary: TemplatePolicy = policy('App/Boundary', [{ Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:GetItem'], Resource: '*' }]);
  const grants = [{ Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], Resource: getAtt('Orders') }];

  test('a boundary that does not allow an action denies it, whatever the identity policies grant, and the reason says so', async () => {
    const { control, requests } = accessControl({ fnStatements: grants, fnRole: { permissionsBoundary: { policy: boundary } } });

    const update = await control.authorizeAll(requests.dynamoDb('App/Fn', 'UpdateItem', JSON.stringify({ TableName: 'App-Orders', Key: { pk: S('A') } })));
    const putItem = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })));

    expect(update).toMatchObject({ allowed: false, evaluated: true });
    expect(control.figures().denials[0]?.reason).toBe('the permissions boundary App/Boundary of the role does not allow dynamodb:UpdateItem');
    expect(control.figures().denials[0]?.fix).toBe('the permissions boundary App/Boundary must allow dynamodb:UpdateItem too: no grant to the role passes a boundary');
    expect(putItem).toEqual({ allowed: true, evaluated: true });
  });

  test('a boundary from outside the app makes an allowed request "not evaluated" (it can only take permissions away), a denied one stays denied', async () => {
    const { control, requests } = accessControl({ fnStatements: [grants[0]], fnRole: { permissionsBoundary: { external: '"arn:aws:iam::123456789012:policy/org"' } } });

    const putItem = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })));
    const deleteItem = await control.authorizeAll(requests.dynamoDb('App/Fn', 'DeleteItem', JSON.stringify({ TableName: 'App-Orders', Key: { pk: S('A') } })));

    expect(putItem).toEqual({ allowed: true, evaluated: false });
    expect(control.figures().notEvaluatedReasons).toContain('the permissions boundary "arn:aws:iam::123456789012:policy/org" of App/FnRole is not a policy of the app: requests its identity policies allow are not evaluated');
    expect(deleteItem).toMatchObject({ allowed: false, evaluated: true });
  });
});

describe("DynamoDB's fine-grained access keys, filled from each request", () => {
  test('dynamodb:LeadingKeys: the partition key of the item, of a transaction item, of a batch', async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:BatchWriteItem'], Resource: getAtt('Orders'), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CUSTOMER#*'] } } }],
    });

    const wrongKey = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('ACCOUNT#1') })));
    const rightKey = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('CUSTOMER#1'), other: S('x') })));
    const inTransaction = await control.authorizeAll(requests.dynamoDb('App/Fn', 'TransactWriteItems', JSON.stringify({ TransactItems: [{ Put: { TableName: 'App-Orders', Item: { pk: S('ACCOUNT#2') } } }] })));
    const batch = await control.authorizeAll(
      requests.dynamoDb('App/Fn', 'BatchWriteItem', JSON.stringify({ RequestItems: { 'App-Orders': [{ PutRequest: { Item: { pk: S('CUSTOMER#1') } } }, { DeleteRequest: { Key: { pk: S('ACCOUNT#3') } } }] } })),
    );

    expect(wrongKey).toMatchObject({ allowed: false, evaluated: true });
    expect(rightKey).toEqual({ allowed: true, evaluated: true });
    expect(inTransaction).toMatchObject({ allowed: false, evaluated: true });
    expect(batch).toMatchObject({ allowed: false, evaluated: true });
  });

  test('dynamodb:LeadingKeys of a Query: the partition key value its key condition names', async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: 'dynamodb:Query', Resource: getAtt('Orders'), Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['CUSTOMER#1'] } } }],
    });
    const query = (value: string): string =>
      JSON.stringify({ TableName: 'App-Orders', KeyConditionExpression: '#k = :v AND begins_with(sk, :p)', ExpressionAttributeNames: { '#k': 'pk' }, ExpressionAttributeValues: { ':v': S(value), ':p': S('ORDER#') } });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'Query', query('CUSTOMER#1')))).toEqual({ allowed: true, evaluated: true });
    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'Query', query('CUSTOMER#2')))).toMatchObject({ allowed: false, evaluated: true });
  });

  test('dynamodb:Attributes: the top-level attribute names of the item put, or of a projection', async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:GetItem'], Resource: getAtt('Orders'), Condition: { 'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'status'] } } }],
    });

    const allowedPut = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A'), status: S('new') })));
    const extraAttribute = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A'), secret: S('x') })));
    const projected = await control.authorizeAll(requests.dynamoDb('App/Fn', 'GetItem', JSON.stringify({ TableName: 'App-Orders', Key: { pk: S('A') }, ProjectionExpression: '#s, pk', ExpressionAttributeNames: { '#s': 'status' } })));
    const projectedSecret = await control.authorizeAll(requests.dynamoDb('App/Fn', 'GetItem', JSON.stringify({ TableName: 'App-Orders', Key: { pk: S('A') }, ProjectionExpression: 'secret' })));

    expect(allowedPut).toEqual({ allowed: true, evaluated: true });
    expect(extraAttribute).toMatchObject({ allowed: false, evaluated: true });
    expect(projected).toEqual({ allowed: true, evaluated: true });
    expect(projectedSecret).toMatchObject({ allowed: false, evaluated: true });
  });

  test('dynamodb:Select and dynamodb:ReturnValues: the request parameters', async () => {
    const { control, requests } = accessControl({
      fnStatements: [
        { Effect: 'Allow', Action: ['dynamodb:Query', 'dynamodb:PutItem'], Resource: getAtt('Orders') },
        { Effect: 'Deny', Action: 'dynamodb:Query', Resource: getAtt('Orders'), Condition: { StringNotEquals: { 'dynamodb:Select': 'COUNT' } } },
        { Effect: 'Deny', Action: 'dynamodb:PutItem', Resource: getAtt('Orders'), Condition: { StringEquals: { 'dynamodb:ReturnValues': 'ALL_OLD' } } },
      ],
    });
    const query = (select: string): string => JSON.stringify({ TableName: 'App-Orders', KeyConditionExpression: 'pk = :v', ExpressionAttributeValues: { ':v': S('A') }, Select: select });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'Query', query('COUNT')))).toEqual({ allowed: true, evaluated: true });
    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'Query', query('ALL_ATTRIBUTES')))).toMatchObject({ allowed: false, evaluated: true });
    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') }, { ReturnValues: 'ALL_OLD' })))).toMatchObject({ allowed: false, evaluated: true });
    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') }, { ReturnValues: 'NONE' })))).toEqual({ allowed: true, evaluated: true });
  });
});

describe('KMS requests through DynamoDB', () => {
  test("the pipe reading the stream of a table under a customer-managed key needs kms:Decrypt on the key", async () => {
    const streamStatement = { Effect: 'Allow', Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], Resource: getAtt('Outbox', 'StreamArn') };
    const withoutKey = accessControl({ pipeStatements: [streamStatement], encryption: { 'App/Outbox': { key: 'App/Key' } } });
    const withKey = accessControl({ pipeStatements: [streamStatement, { Effect: 'Allow', Action: 'kms:Decrypt', Resource: getAtt('Key') }], encryption: { 'App/Outbox': { key: 'App/Key' } } });
    const streamArn = `${TABLE_ARN.replace('App-Orders', 'App-Outbox')}/stream/2026-01-01T00:00:00.000`;

    const denied = await withoutKey.control.authorizeAll(withoutKey.requests.readStream('App/Pipe', 'App/Outbox', streamArn));
    const allowed = await withKey.control.authorizeAll(withKey.requests.readStream('App/Pipe', 'App/Outbox', streamArn));

    expect(denied).toMatchObject({ allowed: false, evaluated: true });
    expect(denied.message).toContain('kms:Decrypt');
    expect(allowed).toEqual({ allowed: true, evaluated: true });
  });

  test('aws:dynamodb:subscriberId in the encryption context is the account id, so a key policy conditioned on it allows', async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') }],
      encryption: { 'App/Orders': { key: 'App/Key' } },
      keyStatements: [
        {
          Effect: 'Allow',
          Principal: { AWS: { 'Fn::GetAtt': ['FnRole', 'Arn'] } },
          Action: 'kms:Decrypt',
          Resource: '*',
          Condition: { StringEquals: { 'kms:ViaService': `dynamodb.${REGION}.amazonaws.com`, 'kms:EncryptionContext:aws:dynamodb:subscriberId': ACCOUNT, 'kms:CallerAccount': ACCOUNT } },
        },
      ],
    });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: true });
  });

  test('the encryption context is evaluated, not dropped: a key policy conditioned on another account denies', async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') }],
      encryption: { 'App/Orders': { key: 'App/Key' } },
      keyStatements: [
        { Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': ['FnRole', 'Arn'] } }, Action: 'kms:Decrypt', Resource: '*', Condition: { StringEquals: { 'kms:EncryptionContext:aws:dynamodb:subscriberId': '111122223333' } } },
      ],
    });

    const outcome = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })));

    expect(outcome).toMatchObject({ allowed: false, evaluated: true });
    expect(outcome.message).toContain('kms:Decrypt');
  });
});

describe('principal keys', () => {
  test("the role's tags from the template are aws:PrincipalTag/<key>", async () => {
    const statements = [
      { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') },
      { Effect: 'Deny', Action: 'dynamodb:*', Resource: '*', Condition: { StringNotEquals: { 'aws:PrincipalTag/team': 'ledger' } } },
    ];
    const tagged = accessControl({ fnStatements: statements, fnRole: { tags: { team: 'ledger' } } });
    const untagged = accessControl({ fnStatements: statements, fnRole: { tags: {} } });

    expect(await tagged.control.authorizeAll(tagged.requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: true });
    expect(await untagged.control.authorizeAll(untagged.requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toMatchObject({ allowed: false, evaluated: true });
  });

  test('a tag whose value is an intrinsic is resolved, not taken as absent', async () => {
    const statements = [
      { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') },
      { Effect: 'Deny', Action: 'dynamodb:*', Resource: '*', Condition: { StringNotEquals: { 'aws:PrincipalTag/region': REGION } } },
    ];
    const { control, requests } = accessControl({ fnStatements: statements, fnRole: { tags: { region: { Ref: 'AWS::Region' } } } });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: true });
  });

  test('lambda:SourceFunctionArn is the calling function, aws:PrincipalIsAWSService and aws:ViaAWSService false for a direct call', async () => {
    const { control, requests } = accessControl({
      fnStatements: [
        {
          Effect: 'Allow',
          Action: 'dynamodb:PutItem',
          Resource: getAtt('Orders'),
          Condition: { ArnEquals: { 'lambda:SourceFunctionArn': `arn:aws:lambda:${REGION}:${ACCOUNT}:function:App-Fn` }, Bool: { 'aws:PrincipalIsAWSService': 'false', 'aws:ViaAWSService': 'false' } },
        },
      ],
    });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: true });
  });
});

describe('keys of calls other than a function\'s', () => {
  test('lambda:SourceFunctionArn is absent on a pipe\'s calls, as in AWS: evaluated, not "not evaluated"', async () => {
    const { control, requests } = accessControl({
      pipeStatements: [
        { Effect: 'Allow', Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], Resource: '*' },
        { Effect: 'Deny', Action: 'dynamodb:*', Resource: '*', Condition: { Null: { 'lambda:SourceFunctionArn': 'false' } } },
      ],
    });

    const outcome = await control.authorizeAll(requests.readStream('App/Pipe', 'App/Outbox', `${TABLE_ARN.replace('App-Orders', 'App-Outbox')}/stream/2026-01-01T00:00:00.000`));

    expect(outcome).toEqual({ allowed: true, evaluated: true });
  });
});

describe('statements that cannot apply to the request do not count', () => {
  test("a key policy statement for another service's encryption context does not stop SNS's delivery to an encrypted queue", async () => {
    const { control, requests } = accessControl({
      encryption: { 'App/Queue': { key: 'App/Key' } },
      resourcePolicies: { 'App/Queue': [policy('App/QueuePolicy', [{ Effect: 'Allow', Principal: { Service: 'sns.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: '*', Condition: { ArnEquals: { 'aws:SourceArn': { Ref: 'Topic' } } } }])] },
      keyStatements: [
        { Effect: 'Allow', Principal: rootPrincipal, Action: 'kms:*', Resource: '*' },
        // as a log group's key has it: the logs service, for its own encryption context
        { Effect: 'Allow', Principal: { Service: 'logs.eu-west-1.amazonaws.com' }, Action: ['kms:Decrypt*', 'kms:GenerateDataKey*'], Resource: '*', Condition: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': 'arn:aws:logs:*' } } },
        { Effect: 'Allow', Principal: { Service: 'sns.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Resource: '*', Condition: { ArnEquals: { 'aws:SourceArn': { Ref: 'Topic' } } } },
      ],
    });

    const outcome = await control.authorizeAll(requests.deliver('App/Topic', 'App/Queue'));
    expect(outcome).toEqual({ allowed: true, evaluated: true });
  });

  test("a queue policy statement for a service does not stop a role's send, whatever it reads", async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: '*' }],
      resourcePolicies: { 'App/Queue': [policy('App/QueuePolicy', [{ Effect: 'Deny', Principal: { Service: 'sns.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: '*', Condition: { NotIpAddress: { 'aws:SourceIp': '203.0.113.0/24' } } }])] },
    });

    const outcome = await control.authorizeAll(requests.sqs({ kind: 'role', via: 'App/Fn' }, 'SendMessage', 'App/Queue'));
    expect(outcome).toEqual({ allowed: true, evaluated: true });
  });
});

describe('a condition on a key the simulator does not fill', () => {
  test('makes the request "not evaluated", never an Allow, and names the key', async () => {
    const { control, requests } = accessControl({
      fnStatements: [{ Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders'), Condition: { NotIpAddress: { 'aws:SourceIp': '203.0.113.0/24' } } }],
    });

    const outcome = await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })));

    expect(outcome).toEqual({ allowed: true, evaluated: false });
    expect(control.figures()).toMatchObject({ requests: 1, authorized: 0, notEvaluated: 1 });
    expect(control.figures().notEvaluatedReasons).toEqual([
      'dynamodb:PutItem by App/FnRole is not evaluated: App/FnRole/DefaultPolicy reads aws:SourceIp, which the simulator does not fill (docs/SIMULATOR.md, "Request context keys")',
    ]);
  });

  test('a Deny on such a key that would not apply is still not trusted: the request is not evaluated', async () => {
    const { control, requests } = accessControl({
      fnStatements: [
        { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') },
        { Effect: 'Deny', Action: 'dynamodb:*', Resource: '*', Condition: { StringNotEquals: { 'aws:SourceVpc': 'vpc-1' } } },
      ],
    });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: false });
  });

  test('a key AWS does not set for the request (aws:SourceArn on a call by a role) is evaluated as absent, as AWS does', async () => {
    const { control, requests } = accessControl({
      fnStatements: [
        { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') },
        { Effect: 'Deny', Action: 'dynamodb:*', Resource: '*', Condition: { Null: { 'aws:SourceArn': 'false' } } },
      ],
    });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: true });
  });

  test('a statement about other actions does not matter', async () => {
    const { control, requests } = accessControl({
      fnStatements: [
        { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: getAtt('Orders') },
        { Effect: 'Allow', Action: 's3:GetObject', Resource: '*', Condition: { IpAddress: { 'aws:SourceIp': '203.0.113.0/24' } } },
      ],
    });

    expect(await control.authorizeAll(requests.dynamoDb('App/Fn', 'PutItem', put({ pk: S('A') })))).toEqual({ allowed: true, evaluated: true });
  });
});
