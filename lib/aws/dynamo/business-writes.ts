/**
 * Translates the handler's plain-JS business writes into transaction items.
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { AttributeMap, BusinessWrite } from '../../core/ports.ts';
import { toItem, type Item } from './items.ts';

export function toTransactItem(write: BusinessWrite): TransactWriteItem {
  if ('put' in write) {
    const { tableName, item, ...expression } = write.put;
    return { Put: { TableName: tableName, Item: toItem(item), ...expressionParts(expression) } };
  }
  if ('update' in write) {
    const { tableName, key, updateExpression, ...expression } = write.update;
    return {
      Update: { TableName: tableName, Key: toItem(key), UpdateExpression: updateExpression, ...expressionParts(expression) },
    };
  }
  if ('delete' in write) {
    const { tableName, key, ...expression } = write.delete;
    return { Delete: { TableName: tableName, Key: toItem(key), ...expressionParts(expression) } };
  }
  const { tableName, key, conditionExpression, ...expression } = write.conditionCheck;
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: toItem(key),
      ConditionExpression: conditionExpression,
      ...expressionParts(expression),
    },
  };
}

function expressionParts(parts: {
  conditionExpression?: string;
  expressionAttributeNames?: Record<string, string>;
  expressionAttributeValues?: AttributeMap;
}): { ConditionExpression?: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Item } {
  return {
    ...(parts.conditionExpression !== undefined && { ConditionExpression: parts.conditionExpression }),
    ...(parts.expressionAttributeNames !== undefined && { ExpressionAttributeNames: parts.expressionAttributeNames }),
    ...(parts.expressionAttributeValues !== undefined && { ExpressionAttributeValues: toItem(parts.expressionAttributeValues) }),
  };
}
