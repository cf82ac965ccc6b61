/**
 * Queue URLs by name, resolved once per process (Lambda gets them from the
 * environment and makes no call).
 */
import { GetQueueUrlCommand, QueueDoesNotExist, type SQSClient } from '@aws-sdk/client-sqs';
import { MissingResourceError } from '../../core/errors.ts';

const cache = new Map<string, Promise<string>>();

export function queueUrl(sqs: SQSClient, queueName: string, fromEnv?: string): Promise<string> {
  if (fromEnv) return Promise.resolve(fromEnv);
  let url = cache.get(queueName);
  if (!url) {
    url = resolve(sqs, queueName);
    url.catch(() => cache.delete(queueName));
    cache.set(queueName, url);
  }
  return url;
}

async function resolve(sqs: SQSClient, queueName: string): Promise<string> {
  try {
    const result = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
    if (!result.QueueUrl) throw new MissingResourceError('queue', queueName);
    return result.QueueUrl;
  } catch (error) {
    if (error instanceof QueueDoesNotExist) throw new MissingResourceError('queue', queueName, { cause: error });
    throw error;
  }
}
