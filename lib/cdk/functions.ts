/**
 * The Lambda functions: Node.js 22 on arm64, bundled locally with esbuild
 * (no Docker) into one ESM file with the AWS SDK inside, so a deployment runs
 * the SDK version the tests ran, not whatever the runtime ships.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The package root: where lib/ and functions/ live. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Entry files of cronfence's own functions. */
export const ENTRIES = {
  tick: fileURLToPath(new URL('../../functions/tick.ts', import.meta.url)),
  scanner: fileURLToPath(new URL('../../functions/scanner.ts', import.meta.url)),
  worker: fileURLToPath(new URL('../../functions/worker.ts', import.meta.url)),
  jobsResource: fileURLToPath(new URL('../../functions/jobs-resource.ts', import.meta.url)),
} as const;

/** ESM bundles need `require` for the CommonJS corners of their dependencies. */
const ESM_REQUIRE_SHIM = "import { createRequire as __cronfenceCreateRequire } from 'node:module'; const require = __cronfenceCreateRequire(import.meta.url);";

export interface CronfenceFunctionProps {
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize?: number;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

/** One cronfence Lambda with its own log group (metric filters and retention hang off it). */
export function cronfenceFunction(scope: Construct, id: string, props: CronfenceFunctionProps): nodejs.NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: retentionDays(props.logRetentionDays),
    removalPolicy: props.removalPolicy,
  });
  const lockFile = `${PACKAGE_ROOT}package-lock.json`;
  const insidePackage = props.entry.startsWith(PACKAGE_ROOT);
  return new nodejs.NodejsFunction(scope, id, {
    entry: props.entry,
    handler: 'handler',
    description: props.description,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    timeout: props.timeout,
    memorySize: props.memorySize ?? 512,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    logGroup,
    ...(insidePackage && existsSync(lockFile) && { depsLockFilePath: lockFile, projectRoot: PACKAGE_ROOT }),
    bundling: {
      forceDockerBundling: false,
      format: nodejs.OutputFormat.ESM,
      target: 'node22',
      mainFields: ['module', 'main'],
      bundleAwsSDK: true,
      minify: true,
      sourceMap: true,
      keepNames: true,
      banner: ESM_REQUIRE_SHIM,
    },
  });
}

const RETENTION: Record<number, logs.RetentionDays> = {
  1: logs.RetentionDays.ONE_DAY,
  3: logs.RetentionDays.THREE_DAYS,
  5: logs.RetentionDays.FIVE_DAYS,
  7: logs.RetentionDays.ONE_WEEK,
  14: logs.RetentionDays.TWO_WEEKS,
  30: logs.RetentionDays.ONE_MONTH,
  60: logs.RetentionDays.TWO_MONTHS,
  90: logs.RetentionDays.THREE_MONTHS,
  180: logs.RetentionDays.SIX_MONTHS,
  365: logs.RetentionDays.ONE_YEAR,
};

/** @throws {RangeError} for a day count CloudWatch Logs does not offer here. */
export function retentionDays(days: number): logs.RetentionDays {
  const retention = RETENTION[days];
  if (retention === undefined) throw new RangeError(`logRetentionDays ${days}: use one of ${Object.keys(RETENTION).join(', ')}`);
  return retention;
}
