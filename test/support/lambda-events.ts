/**
 * How AWS invokes the functions, played against the emulator:
 *
 * - the EventBridge scheduled event of a `rate(...)` rule;
 * - the SQS event source mapping: ReceiveMessage with the function's role
 *   (batch size from the template), records shaped as Lambda delivers them,
 *   and ReportBatchItemFailures as AWS documents it: an error fails the
 *   whole batch; listed items stay (a listed id that is empty or not in the
 *   batch fails the whole batch); the rest are deleted;
 * - the custom resource provider framework (aws-cdk-lib
 *   custom-resources/lib/provider-framework/runtime, framework.js and
 *   cfn-response.js): the physical id defaults to the request id on Create
 *   and to the current one on Update and Delete, a Delete that changes it
 *   fails, a failed Create answers with the CREATE_FAILED marker whose
 *   rollback Delete is not passed on; an Update that changes the id makes
 *   CloudFormation delete the old one afterwards.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { ACCOUNT, REGION } from './cfn-template.ts';

export function scheduledEvent(ruleArn: string, at = new Date()): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT,
    time: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [ruleArn],
    detail: {},
  };
}

function sqsRecord(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? ACCOUNT,
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: REGION,
  };
}

export interface BatchOutcome {
  readonly received: number;
  readonly deleted: number;
  readonly kept: number;
  readonly error?: string;
}

export class SqsEventSourceMapping {
  readonly outcomes: BatchOutcome[] = [];

  constructor(
    /** A client whose requests go through the function's recording proxy: the mapping polls with the function's role. */
    private readonly sqs: SQSClient,
    private readonly queue: { readonly url: string; readonly arn: string },
    private readonly batchSize: number,
    private readonly invoke: (event: SQSEvent) => Promise<unknown>,
  ) {}

  /** One poll and, when it received anything, one invocation. @returns how many messages it received. */
  async pollOnce(waitSeconds = 1): Promise<number> {
    const received = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queue.url,
        MaxNumberOfMessages: Math.min(10, this.batchSize),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return 0;
    const records = messages.map((message) => sqsRecord(message, this.queue.arn));
    let keep: Set<string>;
    let error: string | undefined;
    try {
      keep = failedItems(records, await this.invoke({ Records: records }));
    } catch (invocationError) {
      keep = new Set(records.map((record) => record.messageId));
      error = String(invocationError);
    }
    const done = records.filter((record) => !keep.has(record.messageId));
    if (done.length > 0) {
      const result = await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.queue.url,
          Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
      if (result.Failed?.length) throw new Error(`event source mapping: delete failed: ${JSON.stringify(result.Failed)}`);
    }
    this.outcomes.push({ received: records.length, deleted: done.length, kept: keep.size, ...(error && { error }) });
    return records.length;
  }
}

/** The records a ReportBatchItemFailures response keeps on the queue. */
export function failedItems(records: readonly SQSRecord[], response: unknown): Set<string> {
  const all = new Set(records.map((record) => record.messageId));
  if (response === null || response === undefined || typeof response !== 'object') return new Set();
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === null || failures === undefined) return new Set();
  if (!Array.isArray(failures)) return all;
  const keep = new Set<string>();
  for (const failure of failures as { itemIdentifier?: unknown }[]) {
    const id = failure?.itemIdentifier;
    // An empty, null or unknown identifier: Lambda treats the whole batch as failed.
    if (typeof id !== 'string' || id === '' || !all.has(id)) return all;
    keep.add(id);
  }
  return keep;
}

export const CREATE_FAILED_PHYSICAL_ID_MARKER = 'AWSCDK::CustomResourceProviderFramework::CREATE_FAILED';

export interface CustomResourceResponse {
  readonly Status: 'SUCCESS' | 'FAILED';
  readonly PhysicalResourceId: string;
  readonly Reason?: string;
  readonly Data?: Record<string, unknown>;
  /** Whether the user's onEvent function was invoked. */
  readonly invoked: boolean;
}

type RequestType = 'Create' | 'Update' | 'Delete';

export interface CustomResourceRequest {
  readonly requestType: RequestType;
  readonly logicalId: string;
  readonly resourceType: string;
  readonly properties: Record<string, unknown>;
  readonly oldProperties?: Record<string, unknown>;
  readonly physicalId?: string;
}

/** The provider framework's onEvent, with CloudFormation's request around it. */
export class ProviderFramework {
  readonly requests: CustomResourceRequest[] = [];

  constructor(
    private readonly serviceToken: string,
    private readonly stackId: string,
    private readonly invokeOnEvent: (event: Record<string, unknown>) => Promise<unknown>,
  ) {}

  async send(request: CustomResourceRequest): Promise<CustomResourceResponse> {
    this.requests.push(request);
    const requestId = randomUUID();
    const event = {
      RequestType: request.requestType,
      ServiceToken: this.serviceToken,
      ResponseURL: `https://cloudformation-custom-resource-response-${REGION}.s3.amazonaws.com/${randomUUID()}`,
      StackId: this.stackId,
      RequestId: requestId,
      LogicalResourceId: request.logicalId,
      ResourceType: request.resourceType,
      ResourceProperties: { ServiceToken: this.serviceToken, ...request.properties },
      ...(request.oldProperties && { OldResourceProperties: { ServiceToken: this.serviceToken, ...request.oldProperties } }),
      ...(request.physicalId !== undefined && { PhysicalResourceId: request.physicalId }),
    };
    if (request.requestType === 'Delete' && request.physicalId === CREATE_FAILED_PHYSICAL_ID_MARKER) {
      return { Status: 'SUCCESS', PhysicalResourceId: request.physicalId, invoked: false };
    }
    try {
      const result = ((await this.invokeOnEvent(event)) ?? {}) as { PhysicalResourceId?: string; Data?: Record<string, unknown> };
      const physicalId = result.PhysicalResourceId || (request.requestType === 'Create' ? requestId : request.physicalId!);
      if (request.requestType === 'Delete' && physicalId !== request.physicalId) {
        throw new Error(
          `DELETE: cannot change the physical resource ID from "${request.physicalId}" to "${result.PhysicalResourceId}" during deletion`,
        );
      }
      return { Status: 'SUCCESS', PhysicalResourceId: physicalId, ...(result.Data && { Data: result.Data }), invoked: true };
    } catch (error) {
      const physicalId = request.physicalId ?? (request.requestType === 'Create' ? CREATE_FAILED_PHYSICAL_ID_MARKER : '');
      return { Status: 'FAILED', PhysicalResourceId: physicalId, Reason: String(error), invoked: true };
    }
  }
}
