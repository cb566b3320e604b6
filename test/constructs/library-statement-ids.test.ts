/**
 * The library marks every statement it adds to an identity policy with its own Sid (`IdempotentEventFlow<origin>[n]`,
 * lambda/contract/statement-ids.ts), so the user's grants and the library's can be told apart in the synthesized policy
 * (issue 29 item 6): a grant method's statements are named by the method, a construct's wiring by the construct; a Sid is
 * unique within its policy, as IAM requires; a statement granted twice is written once; and with
 * `@aws-cdk/aws-iam:minimizePolicies` no statement of the user's is merged into one of the library's.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, test } from 'vitest';
import { LIBRARY_SID_PREFIX, librarySid, libraryStatementOrigin } from '../../lambda/contract/statement-ids';
import { IdempotentEventFlow, ProcessingMode } from '../../lib';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { OutboxTable } from '../../lib/outbox';
import { HANDLER_ENTRY, nagFindings } from '../fixtures/construct-test-kit';
import * as path from 'node:path';

const LEASE_HANDLER = path.join(__dirname, '..', 'fixtures', 'lease-consumer-handler.ts');
const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');

interface Statement {
  readonly Sid?: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

/** Every identity policy of the template (AWS::IAM::Policy and roles' inline policies): its name and statements. */
function identityPolicies(template: Template): { name: string; statements: Statement[] }[] {
  const policies = Object.entries(template.findResources('AWS::IAM::Policy')).map(([id, policy]) => ({ name: id, statements: policy.Properties.PolicyDocument.Statement as Statement[] }));
  for (const [id, role] of Object.entries(template.findResources('AWS::IAM::Role'))) {
    for (const inline of (role.Properties.Policies ?? []) as { PolicyName: string; PolicyDocument: { Statement: Statement[] } }[]) {
      policies.push({ name: `${id}#${inline.PolicyName}`, statements: inline.PolicyDocument.Statement });
    }
  }
  return policies;
}

const actions = (statement: Statement): string[] => [statement.Action].flat();
const mentions = (statement: Statement, logicalId: string): boolean => JSON.stringify(statement.Resource).includes(`"${logicalId}"`);

/** A flow with each kind of subscriber and grant, an ordered path, and the user's own grants beside the library's. */
function appWithEveryGrant(context: Record<string, unknown> = {}) {
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new Stack(app, 'Shop');
  const flow = new IdempotentEventFlow(stack, 'Orders', { eventSource: 'urn:test:orders' });
  const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
  const mail = flow.addSubscriber('Mail', { entry: LEASE_HANDLER, processingMode: ProcessingMode.LEASE });
  const ledger = new dynamodb.Table(stack, 'Ledger', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
  ledger.grantReadWriteData(billing.consumerFunction);

  const service = new iam.Role(stack, 'Service', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  flow.grantAppendEvents(service);
  flow.grantAppendEvents(service);
  flow.eventTopic.grantPublish(service);
  flow.outboxTable.table.grantReadWriteData(service);
  const operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
  billing.inboxTable?.grantOperator(operator);
  mail.inboxTable?.grantOperatorRead(operator);

  const orderedOutbox = new OutboxTable(stack, 'OrderedOutbox');
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: orderedOutbox });
  new OrderedSubscriber(stack, 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER });
  relay.grantAppendOrderedEvents(service);
  return { stack, template: Template.fromStack(stack), ids: { ledger: stack.getLogicalId(ledger.node.defaultChild as dynamodb.CfnTable), outbox: stack.getLogicalId(flow.outboxTable.table.node.defaultChild as dynamodb.CfnTable) } };
}

describe("the library's statement ids", () => {
  test('the Sid names where a statement comes from, and is read back; a statement of the user has none of the library', () => {
    expect(librarySid('grantAppendEvents', 1)).toBe('IdempotentEventFlowGrantAppendEvents');
    expect(librarySid('OutboxRelay', 3)).toBe('IdempotentEventFlowOutboxRelay3');
    expect(libraryStatementOrigin('IdempotentEventFlowGrantAppendEvents')).toBe('grantAppendEvents');
    expect(libraryStatementOrigin('IdempotentEventFlowOutboxRelay3')).toBe('OutboxRelay');
    expect([undefined, '0', 'AllowLedger', LIBRARY_SID_PREFIX].map(libraryStatementOrigin)).toEqual([undefined, undefined, undefined, undefined]);
    expect(() => librarySid('Outbox2', 1)).toThrow(/letters only, got 'Outbox2'/);
  });

  for (const [name, context] of [
    ['without feature flags', {}],
    ['with @aws-cdk/aws-iam:minimizePolicies', { '@aws-cdk/aws-iam:minimizePolicies': true }],
  ] as const) {
    test(`${name}: every statement on a flow's resources is the library's but the user's own grants; each Sid is unique in its policy`, () => {
      const { template, ids } = appWithEveryGrant(context);
      const policies = identityPolicies(template);
      for (const { name: policy, statements } of policies) {
        const sids = statements.map(({ Sid }) => Sid).filter((sid) => sid !== undefined);
        expect(new Set(sids).size, `Sids of ${policy}`).toBe(sids.length);
      }
      const all = policies.flatMap(({ name: policy, statements }) => statements.map((statement) => ({ policy, statement })));
      const unmarked = all.filter(({ statement }) => libraryStatementOrigin(statement.Sid) === undefined);
      // the user's: grantReadWriteData on the ledger (Billing's role) and on the outbox table (the service's role); X-Ray is aws-lambda's
      for (const { policy, statement } of unmarked) {
        const usersOwn = mentions(statement, ids.ledger) || (policy.startsWith('ServiceDefaultPolicy') && mentions(statement, ids.outbox));
        expect(usersOwn || actions(statement).every((action) => action.startsWith('xray:')), `${policy}: ${JSON.stringify(statement)}`).toBe(true);
      }
      expect(unmarked.filter(({ statement }) => mentions(statement, ids.ledger)).length).toBeGreaterThan(0);
      // and no statement of the library's names the user's table
      expect(all.filter(({ statement }) => libraryStatementOrigin(statement.Sid) !== undefined && mentions(statement, ids.ledger))).toEqual([]);
    });
  }

  test("grant methods name their statements, constructs their wiring; one granted twice is written once", () => {
    const { template, ids } = appWithEveryGrant();
    const statements = identityPolicies(template).flatMap(({ name, statements: list }) => list.map((statement) => ({ name, statement })));
    const of = (policyPrefix: string) => statements.filter(({ name }) => name.startsWith(policyPrefix)).map(({ statement }) => statement);
    /** Where the statements come from, but X-Ray's (aws-lambda adds it for tracing, unmarked). */
    const origins = (list: Statement[]) => new Set(list.filter((statement) => !actions(statement).every((action) => action.startsWith('xray:'))).map((statement) => libraryStatementOrigin(statement.Sid)));

    const service = of('ServiceDefaultPolicy');
    const appends = service.filter((statement) => libraryStatementOrigin(statement.Sid) === 'grantAppendEvents');
    // this flow's outbox and the ordered outbox (numbered: one Sid per statement); the second flow.grantAppendEvents added nothing
    expect(appends.map(({ Sid, Action }) => [Sid, Action])).toEqual([
      ['IdempotentEventFlowGrantAppendEvents', 'dynamodb:PutItem'],
      ['IdempotentEventFlowGrantAppendEvents2', 'dynamodb:PutItem'],
    ]);
    expect(service.find((statement) => statement.Sid === 'IdempotentEventFlowGrantAppendOrderedEvents')).toMatchObject({ Action: 'dynamodb:GetItem' });
    expect(service.filter((statement) => statement.Sid?.startsWith('IdempotentEventFlowGrantPublish')).flatMap(actions).sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey', 'sns:Publish']);
    expect(service.filter((statement) => statement.Sid === undefined && mentions(statement, ids.outbox)).length).toBeGreaterThan(0);

    const relay = of('OrdersRelayRoleDefaultPolicy');
    expect(relay.length).toBeGreaterThan(0);
    expect(relay.every((statement) => libraryStatementOrigin(statement.Sid) === 'OutboxRelay')).toBe(true);
    expect(relay.find((statement) => actions(statement).includes('dynamodb:ListStreams'))).toMatchObject({ Resource: '*' });

    const operator = of('OperatorDefaultPolicy');
    expect(origins(operator)).toEqual(new Set(['grantOperator', 'grantOperatorRead']));

    const billing = of('OrdersBillingFunctionRoleDefaultPolicy');
    expect(origins(billing)).toEqual(new Set(['Subscriber', 'ConsumerFunction', 'grantRecordMessages', undefined]));
    const mail = of('OrdersMailFunctionRoleDefaultPolicy');
    expect(origins(mail)).toEqual(new Set(['Subscriber', 'ConsumerFunction', 'grantProcessingRecords']));
    expect(origins(of('OrderedPipeRoleDefaultPolicy'))).toEqual(new Set(['OrderedRelay']));
  });

  test('cdk-nag finds nothing new on the flow', () => {
    const { stack } = appWithEveryGrant();
    const flow = stack.node.findChild('Orders');
    expect(nagFindings(flow)).toEqual([]);
  });
});
