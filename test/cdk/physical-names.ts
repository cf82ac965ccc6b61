/**
 * Finds retained resources whose physical name is the same on every deploy of a stack: after `cdk destroy` such a
 * resource stays, and the next `cdk deploy` of the same stack fails creating it again ("already exists").
 *
 * A name is any property whose key ends in `Name` (TableName, QueueName, LogGroupName, FunctionName, RoleName, Name,
 * DashboardName, ...). It repeats when it is built only from literals and pseudo-parameters that a redeploy keeps
 * (AWS::StackName, AWS::Region, AWS::AccountId, AWS::Partition, AWS::URLSuffix). It is new per deploy when it refers
 * to AWS::StackId (new on every create) or to another resource (a generated name or ARN).
 */
import type { Template } from 'aws-cdk-lib/assertions';

const RETAINING = new Set(['Retain', 'RetainExceptOnCreate']);
const KEPT_PSEUDO_PARAMETERS = new Set([
  'AWS::StackName',
  'AWS::Region',
  'AWS::AccountId',
  'AWS::Partition',
  'AWS::URLSuffix',
  'AWS::NoValue',
]);

export interface RepeatedName {
  readonly logicalId: string;
  readonly type: string;
  readonly property: string;
  readonly value: unknown;
}

type Resource = { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

export function retainedRepeatedNames(template: Template): RepeatedName[] {
  const resources = (template.toJSON() as { Resources?: Record<string, Resource> }).Resources ?? {};
  return Object.entries(resources).flatMap(([logicalId, resource]) => {
    if (!RETAINING.has(resource.DeletionPolicy ?? '') && !RETAINING.has(resource.UpdateReplacePolicy ?? '')) return [];
    return Object.entries(resource.Properties ?? {})
      .filter(([property, value]) => property.endsWith('Name') && repeats(value))
      .map(([property, value]) => ({ logicalId, type: resource.Type, property, value }));
  });
}

/** Whether a value resolves the same on every deploy of the same stack. */
export function repeats(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'number') return true;
  if (Array.isArray(value)) return value.every(repeats);
  if (value === null || typeof value !== 'object') return true;
  const [[intrinsic, argument]] = Object.entries(value) as [[string, unknown]];
  if (intrinsic === 'Ref') return KEPT_PSEUDO_PARAMETERS.has(String(argument));
  if (intrinsic === 'Fn::GetAtt' || intrinsic === 'Fn::ImportValue') return false;
  if (intrinsic === 'Fn::Sub')
    return typeof argument === 'string' ? !/\$\{(?!AWS::(StackName|Region|AccountId|Partition|URLSuffix)\})[^}]+\}/.test(argument) : false;
  // Fn::Join, Fn::Select, Fn::Split, Fn::If ...: repeats when everything it is built from does.
  return repeats(argument);
}
