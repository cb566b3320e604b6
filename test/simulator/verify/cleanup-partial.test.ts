/**
 * Review r12b, R12B-7: a `--cleanup` that failed part way stopped at the first table or queue it could not clean and
 * said nothing of what it had removed. It goes on with the others, says what it removed, and names each failure.
 * Against DynamoDB Local.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { CleanupPartlyFailedError, cleanUpRun } from '../../../simulator/verify/cleanup';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { formatVerifyReport } from '../../../simulator/verify/verify-report';
import { cleanUpIfOk } from '../../../simulator/verify/verify-run';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { verifyResult } from './verify-result-kit';
import { VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();
const RUN = 'v0-0a0b0c0d';

describe('a cleanup that fails part way (R12B-7)', () => {
  test('goes on past a table it cannot clean, and says what it removed and what failed', async () => {
    const missing = uniqueTableName('r12b7-gone');
    const orders = uniqueTableName('r12b7-orders');
    await createTable(bed.dynamoDb, orders, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
    await bed.documents.send(new PutCommand({ TableName: orders, Item: { [TABLE_SCHEMA.PARTITION_KEY]: `ORDER#${RUN}-order-1` } }));
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [],
      subscribers: [],
      // the missing table first: before, the cleanup stopped there and removed nothing
      resources: [missing, orders].map((physicalId, index) => ({ stackName: 'App', logicalId: `Table${index}`, type: 'AWS::DynamoDB::Table', physicalId })),
    };

    const error = await cleanUpRun(bed.clients(), flow, RUN, new Set([`order-placed-${RUN}-order-1`]), new Set([`${RUN}-order-1`])).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(CleanupPartlyFailedError);
    const { lines, failures } = error as CleanupPartlyFailedError;
    expect(lines).toEqual([`1 item(s) of the run from table ${orders}`]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(new RegExp(`^table ${missing}: ResourceNotFoundException`));
    expect((await bed.documents.send(new GetCommand({ TableName: orders, Key: { [TABLE_SCHEMA.PARTITION_KEY]: `ORDER#${RUN}-order-1` } }))).Item).toBeUndefined();

    // and the verify result keeps both: what was removed, and the failure, after the OK verdict
    const result = await cleanUpIfOk(verifyResult({}), async () => {
      throw error;
    });
    expect(verifyVerdict(result).status).toBe('OK');
    expect(result.cleanedUp).toEqual(lines);
    expect(result.cleanupFailed).toContain(`table ${missing}`);
    const report = formatVerifyReport(result);
    expect(report).toContain(`cleanup removed:\n  1 item(s) of the run from table ${orders}`);
    expect(report.indexOf('cleanup failed:')).toBeGreaterThan(report.indexOf('OK: '));
  });
});
