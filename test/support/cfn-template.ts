/**
 * A synthesized CloudFormation template read as a deployment would see it:
 * intrinsic functions resolved against the emulator's resources (the tables,
 * queues and bus a test bootstrapped stand in for the template's), each
 * Lambda function with its bundle in cdk.out, its environment, its role's
 * policy statements, and the event source mappings and custom resources
 * that invoke it.
 */
import path from 'node:path';

export const REGION = 'us-east-1';
/** moto's account, so the queue ARNs it reports are the ones the template resolves to. */
export const ACCOUNT = '123456789012';

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
}

/** What a resource of the template is on the emulator: its Ref and its attributes. */
export interface PhysicalResource {
  readonly ref: string;
  readonly attributes: Record<string, string>;
}

export const tableResource = (name: string): PhysicalResource => ({
  ref: name,
  attributes: { Arn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}` },
});

export const queueResource = (name: string, url: string): PhysicalResource => ({
  ref: url,
  attributes: { Arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`, QueueName: name, QueueUrl: url },
});

export const busResource = (name: string): PhysicalResource => ({
  ref: name,
  attributes: { Arn: `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${name}`, Name: name },
});

export const functionResource = (name: string): PhysicalResource => ({
  ref: name,
  attributes: { Arn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}` },
});

const PSEUDO: Record<string, string> = {
  'AWS::Region': REGION,
  'AWS::AccountId': ACCOUNT,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
};

/** Resolves intrinsics; a reference to a resource with no stand-in fails, naming it. */
export class TemplateResolver {
  constructor(private readonly physical: ReadonlyMap<string, PhysicalResource>) {}

  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((each) => this.resolve(each));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    const [key, argument] = entries[0] ?? [];
    if (entries.length === 1 && key === 'Ref') return this.ref(String(argument));
    if (entries.length === 1 && key === 'Fn::GetAtt') {
      const [id, attribute] = argument as [string, string];
      return this.attribute(id, attribute);
    }
    if (entries.length === 1 && key === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map((part) => this.string(part)).join(separator);
    }
    if (entries.length === 1 && key === 'Fn::Sub' && typeof argument === 'string') {
      return argument.replace(/\$\{([^}]+)\}/g, (_, name: string) =>
        name.includes('.') ? this.attribute(...(name.split('.') as [string, string])) : this.ref(name),
      );
    }
    if (entries.length === 1 && key?.startsWith('Fn::')) throw new Error(`template: ${key} is not resolved here`);
    return Object.fromEntries(entries.map(([name, each]) => [name, this.resolve(each)]));
  }

  string(value: unknown): string {
    const resolved = this.resolve(value);
    if (typeof resolved !== 'string' && typeof resolved !== 'number')
      throw new Error(`template: ${JSON.stringify(value)} does not resolve to a string`);
    return String(resolved);
  }

  private ref(id: string): string {
    const pseudo = PSEUDO[id];
    if (pseudo !== undefined) return pseudo;
    const resource = this.physical.get(id);
    if (!resource) throw new Error(`template: Ref ${id} has no resource on the emulator`);
    return resource.ref;
  }

  private attribute(id: string, attribute: string): string {
    const value = this.physical.get(id)?.attributes[attribute];
    if (value === undefined) throw new Error(`template: Fn::GetAtt ${id}.${attribute} has no value on the emulator`);
    return value;
  }
}

export interface PolicyStatement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly string[];
  /** Resolved ARNs or patterns. */
  readonly resources: readonly string[];
  /** Where it comes from: the policy's logical id, or the managed policy. */
  readonly source: string;
  /** The statement as the template writes it (for messages). */
  readonly written: string;
}

/**
 * AWS managed policies the template attaches, as AWS publishes them. Only
 * AWSLambdaBasicExecutionRole is expected: it allows writing the function's
 * logs, which the runtime does, not the bundle's code.
 */
const MANAGED_POLICIES: Record<string, PolicyStatement[]> = {
  'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole': [
    {
      effect: 'Allow',
      actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: ['*'],
      source: 'AWSLambdaBasicExecutionRole',
      written: 'AWSLambdaBasicExecutionRole',
    },
  ],
};

export interface LambdaFunctionSpec {
  readonly logicalId: string;
  readonly name: string;
  readonly bundle: string;
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly memorySize: number;
  readonly environment: Record<string, string>;
  readonly roleId: string;
  readonly statements: readonly PolicyStatement[];
}

const list = <T>(value: T | readonly T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? [...(value as T[])] : [value as T];

/** The function's bundle: NodejsFunction's asset in cdk.out, named by its S3 key's hash. */
export function lambdaFunction(template: CfnTemplate, resolver: TemplateResolver, cdkOut: string, logicalId: string): LambdaFunctionSpec {
  const resource = template.Resources[logicalId];
  if (resource?.Type !== 'AWS::Lambda::Function') throw new Error(`template: ${logicalId} is not a Lambda function`);
  const properties = resource.Properties as {
    Code: { S3Key: string };
    Handler: string;
    Timeout?: number;
    MemorySize?: number;
    Environment?: { Variables: Record<string, unknown> };
    Role: { 'Fn::GetAtt': [string, string] };
  };
  const hash = properties.Code.S3Key.replace(/\.zip$/, '');
  const [file, exported] = properties.Handler.split('.') as [string, string];
  const environment = Object.fromEntries(
    Object.entries(properties.Environment?.Variables ?? {}).map(([name, value]) => [name, resolver.string(value)]),
  );
  const roleId = properties.Role['Fn::GetAtt'][0];
  return {
    logicalId,
    name: resolver.string({ Ref: logicalId }),
    bundle: path.join(cdkOut, `asset.${hash}`, `${file}.mjs`),
    handler: exported,
    timeoutSeconds: properties.Timeout ?? 3,
    memorySize: properties.MemorySize ?? 128,
    environment,
    roleId,
    statements: roleStatements(template, resolver, roleId),
  };
}

/** Every statement of a role: its inline policies, the IAM::Policy resources attached to it, its managed policies. */
export function roleStatements(template: CfnTemplate, resolver: TemplateResolver, roleId: string): PolicyStatement[] {
  const role = template.Resources[roleId]?.Properties as { ManagedPolicyArns?: unknown[]; Policies?: unknown[] } | undefined;
  if (!role) throw new Error(`template: no role ${roleId}`);
  if (role.Policies?.length) throw new Error(`template: role ${roleId} has inline policies; read them here too`);
  const statements: PolicyStatement[] = [];
  for (const managed of role.ManagedPolicyArns ?? []) {
    const arn = resolver.string(managed);
    const known = MANAGED_POLICIES[arn];
    if (!known) throw new Error(`template: role ${roleId} has managed policy ${arn}, whose statements this test does not know`);
    statements.push(...known);
  }
  for (const [policyId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const properties = resource.Properties as { Roles?: unknown[]; PolicyDocument: { Statement: Record<string, unknown>[] } };
    if (!(properties.Roles ?? []).some((each) => JSON.stringify(each) === JSON.stringify({ Ref: roleId }))) continue;
    for (const statement of properties.PolicyDocument.Statement) {
      for (const key of Object.keys(statement)) {
        if (!['Effect', 'Action', 'Resource', 'Sid'].includes(key))
          throw new Error(`template: ${policyId} has a statement with ${key}, which this test does not evaluate`);
      }
      statements.push({
        effect: statement.Effect as 'Allow' | 'Deny',
        actions: list(statement.Action as string | string[]),
        resources: list(statement.Resource).map((each) => resolver.string(each)),
        source: policyId,
        written: JSON.stringify({ Action: statement.Action, Resource: statement.Resource }),
      });
    }
  }
  return statements;
}

export function resourcesOfType(template: CfnTemplate, type: string): Array<[string, CfnResource]> {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}
