/**
 * IAM from what the code does: each recorded AWS call becomes the IAM
 * requests AWS authorises for it (action and resource ARN: a transaction
 * item by item, a batch by its single action, a query on an index by the
 * index's ARN), evaluated against the statements of the caller's role as the
 * template writes them (explicit deny wins; else some allow must match).
 */
import type { PolicyStatement } from './cfn-template.ts';
import { ACCOUNT, REGION } from './cfn-template.ts';
import type { RecordedCall } from './recording-proxy.ts';

export interface IamRequest {
  readonly action: string;
  readonly resource: string;
}

const tableArn = (name: string): string => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
const queueArnOfUrl = (url: string): string => `arn:aws:sqs:${REGION}:${ACCOUNT}:${url.split('/').at(-1) ?? ''}`;
const queueArnOfName = (name: string): string => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
const busArn = (name: string): string => (name.startsWith('arn:') ? name : `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${name}`);

/** The SQS batch operations are authorised as their single action (AWS: "SendMessageBatch ... same permissions as SendMessage"). */
const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

export function iamRequests(call: RecordedCall): IamRequest[] {
  const [prefix, operation = ''] = call.target.split('.');
  const body = call.body as Record<string, unknown> & { TableName?: string; IndexName?: string };
  if (prefix?.startsWith('DynamoDB_')) {
    if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
      return (body.TransactItems as Record<string, { TableName: string }>[]).flatMap((item) =>
        Object.entries(item).map(([kind, request]) => ({
          action: `dynamodb:${TRANSACT_ACTIONS[kind] ?? kind}`,
          resource: tableArn(request.TableName),
        })),
      );
    }
    if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
      return Object.keys(body.RequestItems as object).map((table) => ({ action: `dynamodb:${operation}`, resource: tableArn(table) }));
    }
    if (typeof body.TableName !== 'string') throw new Error(`iam: ${call.target} without a TableName`);
    const resource = body.IndexName ? `${tableArn(body.TableName)}/index/${body.IndexName}` : tableArn(body.TableName);
    return [{ action: `dynamodb:${operation}`, resource }];
  }
  if (prefix === 'AmazonSQS') {
    const action = `sqs:${SQS_ACTIONS[operation] ?? operation}`;
    if (operation === 'GetQueueUrl') return [{ action, resource: queueArnOfName(String(body.QueueName)) }];
    return [{ action, resource: queueArnOfUrl(String(body.QueueUrl)) }];
  }
  if (prefix === 'AWSEvents' && operation === 'PutEvents') {
    const buses = new Set((body.Entries as { EventBusName?: string }[]).map((entry) => busArn(entry.EventBusName ?? 'default')));
    return [...buses].map((resource) => ({ action: 'events:PutEvents', resource }));
  }
  // Recorded by the test where it plays the provider framework, which invokes the onEvent function.
  if (prefix === 'AWSLambda' && operation === 'Invoke') return [{ action: 'lambda:InvokeFunction', resource: String(body.FunctionName) }];
  throw new Error(`iam: no mapping for ${call.target}`);
}

/** IAM's wildcards: `*` any run of characters, `?` one; actions case-insensitively. */
function matches(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
}

const allows = (statement: PolicyStatement, request: IamRequest): boolean =>
  statement.actions.some((action) => matches(action, request.action, true)) &&
  statement.resources.some((resource) => matches(resource, request.resource, false));

export function isAllowed(statements: readonly PolicyStatement[], request: IamRequest): boolean {
  if (statements.some((statement) => statement.effect === 'Deny' && allows(statement, request))) return false;
  return statements.some((statement) => statement.effect === 'Allow' && allows(statement, request));
}

export interface Role {
  /** The function's label in messages. */
  readonly fn: string;
  readonly roleId: string;
  readonly statements: readonly PolicyStatement[];
}

/** One line per call its role does not allow: the call, the function, the statement it lacks. */
export function deniedCalls(calls: readonly RecordedCall[], roles: ReadonlyMap<string, Role>, label: (arn: string) => string): string[] {
  const denied = new Set<string>();
  for (const call of calls) {
    const role = roles.get(call.fn);
    if (!role) throw new Error(`iam: a call of ${call.fn}, which has no role here`);
    for (const request of iamRequests(call)) {
      if (isAllowed(role.statements, request)) continue;
      denied.add(
        `${role.fn} (${call.caller}) calls ${call.target.split('.')[1]} on ${label(request.resource)}: role ${role.roleId} has no statement ` +
          `{ "Effect": "Allow", "Action": "${request.action}", "Resource": "${request.resource}" }`,
      );
    }
  }
  return [...denied].sort();
}

/**
 * `<fn> <action> <resource label>`: a grant no recorded call used, unless
 * listed (with its reason) in `notExercised`; and listed grants the roles do
 * not have (a stale list).
 */
export function unusedGrants(
  calls: readonly RecordedCall[],
  roles: ReadonlyMap<string, Role>,
  label: (arn: string) => string,
  notExercised: Readonly<Record<string, string>>,
): { unused: string[]; unknown: string[] } {
  const unused: string[] = [];
  const granted = new Set<string>();
  for (const [fn, role] of roles) {
    const used = calls.filter((call) => call.fn === fn).flatMap(iamRequests);
    for (const statement of role.statements) {
      if (statement.effect !== 'Allow' || statement.source === 'AWSLambdaBasicExecutionRole') continue;
      for (const action of statement.actions) {
        for (const resource of statement.resources) {
          const key = `${role.fn} ${action} ${label(resource)}`;
          granted.add(key);
          const isUsed = used.some((request) => matches(action, request.action, true) && matches(resource, request.resource, false));
          if (!isUsed && !(key in notExercised)) unused.push(`${key} (${statement.source})`);
        }
      }
    }
  }
  return {
    unused: unused.sort(),
    unknown: Object.keys(notExercised)
      .filter((key) => !granted.has(key))
      .sort(),
  };
}
