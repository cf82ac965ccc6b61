/**
 * What SQS refuses and the emulator accepts, put back in a test's SQS client:
 * a SendMessage or SendMessageBatch whose body holds a character outside
 * SQS's ranges, or is over 256 KiB, fails whole with InvalidMessageContents
 * (lib/core/sqs-body.ts has the rule). For tests only: the product checks
 * bodies itself before it sends.
 */
import { SQSServiceException, type SQSClient } from '@aws-sdk/client-sqs';
import { sqsBodyProblem } from '../../lib/core/sqs-body.ts';

export function refuseWhatSqsRefuses(sqs: SQSClient): void {
  sqs.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
      const bodies = [input.MessageBody, ...(input.Entries ?? []).map((entry) => entry.MessageBody)];
      for (const body of bodies) {
        const problem = body === undefined ? undefined : sqsBodyProblem(body);
        if (problem !== undefined) {
          throw new SQSServiceException({
            name: 'InvalidMessageContents',
            $fault: 'client',
            $metadata: { httpStatusCode: 400 },
            message: `the message body ${problem}`,
          });
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'refuseWhatSqsRefuses' },
  );
}
