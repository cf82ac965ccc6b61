/** A user's own table for commit tests, created from the same definition helper as cronfence's tables. */
import { CreateTableCommand, GetItemCommand, ResourceInUseException, ScanCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createTableInput } from '../../lib/aws/bootstrap.ts';
import type { TestInstallation } from './harness.ts';

export async function createBusinessTable(installation: TestInstallation, logicalName = 'payouts'): Promise<string> {
  const tableName = `${installation.prefix}-${logicalName}`;
  const dynamo = installation.runtime.clients.dynamo;
  try {
    await dynamo.send(
      new CreateTableCommand(
        createTableInput(tableName, { logicalName, partitionKey: { name: 'id', type: 'S' }, globalSecondaryIndexes: [] }),
      ),
    );
  } catch (error) {
    // A try that timed out on a busy emulator may have created it; the SDK's retry then finds it there.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 60 }, { TableName: tableName });
  return tableName;
}

export async function businessRow(
  installation: TestInstallation,
  tableName: string,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  const result = await installation.runtime.clients.dynamo.send(
    new GetItemCommand({ TableName: tableName, Key: { id: { S: id } }, ConsistentRead: true }),
  );
  return result.Item ? unmarshall(result.Item) : undefined;
}

export async function businessRows(installation: TestInstallation, tableName: string): Promise<Record<string, unknown>[]> {
  const result = await installation.runtime.clients.dynamo.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return (result.Items ?? []).map((item) => unmarshall(item));
}
