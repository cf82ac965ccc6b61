/**
 * The findings of the template linters that cronfence accepts, each with its reason: the one place they are listed
 * (docs/cdk.md, "Linters"). test/cdk/template-lint.test.ts fails on any finding not here, and on any entry here that
 * no longer matches a finding, so the list cannot grow stale.
 */
import type { NagPackSuppression } from 'cdk-nag';

/** cdk-nag, AwsSolutions pack. */
export const NAG_SUPPRESSIONS: readonly NagPackSuppression[] = [
  {
    id: 'AwsSolutions-L1',
    reason:
      "nodejs22.x is the runtime cronfence's bundles are built (esbuild target node22) and tested for; moving to a newer runtime is a deliberate upgrade with its own test run, not a lint fix.",
  },
  {
    id: 'AwsSolutions-IAM4',
    appliesTo: ['Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
    reason:
      "CDK's default execution role policy: CloudWatch Logs CreateLogGroup, CreateLogStream and PutLogEvents, nothing else. Every AWS call the functions' code makes is granted by their own inline statements (lib/cdk/permissions.ts).",
  },
  {
    id: 'AwsSolutions-IAM5',
    appliesTo: [{ regex: '/^Resource::<CronJobsResource[0-9A-F]{8}\\.Arn>:\\*$/' }],
    reason:
      "The CDK provider framework's onEvent function may invoke the jobs-resource function and its versions (`<arn>:*`): aws-cdk-lib/custom-resources writes this grant, on that one function.",
  },
];

/** cfn-lint rules ignored, with the reason (passed as --ignore-checks). */
export const CFN_LINT_IGNORED: readonly { readonly rule: string; readonly reason: string }[] = [
  {
    rule: 'W3005',
    reason:
      'CDK writes a DependsOn from each Lambda function to its role and default policy beside the GetAtt of the role: a redundant dependency, never a missing one.',
  },
];
