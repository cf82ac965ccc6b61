/**
 * The Lambda functions: Node.js 22 on arm64, bundled locally with esbuild
 * (no Docker) into one ESM file with the AWS SDK inside, so a deployment runs
 * the SDK version the tests ran, not whatever the runtime ships.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { BUILD, PACKAGE_ROOT, packageFile } from '../package/package-files.ts';

export { PACKAGE_ROOT };

/** Lambda bundles start from ESM files: the sources, or the ESM build (also when this is the CommonJS build). */
export const LAMBDA_BUILD = BUILD === 'cjs' ? 'esm' : BUILD;

/** Entry files of cronfence's own functions. */
export const ENTRIES = {
  tick: packageFile('functions/tick.ts', LAMBDA_BUILD),
  scanner: packageFile('functions/scanner.ts', LAMBDA_BUILD),
  jobsResource: packageFile('functions/jobs-resource.ts', LAMBDA_BUILD),
  outbox: packageFile('functions/outbox.ts', LAMBDA_BUILD),
} as const;

/** ESM bundles need `require` for the CommonJS corners of their dependencies. */
const ESM_REQUIRE_SHIM =
  "import { createRequire as __cronfenceCreateRequire } from 'node:module'; const require = __cronfenceCreateRequire(import.meta.url);";

export interface CronfenceFunctionProps {
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize?: number;
  /** Concurrency reserved for this function alone. @default none */
  readonly reservedConcurrency?: number;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
  /** The project whose lock file and node_modules esbuild bundles from. @default the package's own in this repository, else NodejsFunction's (the lock file found from the current directory) */
  readonly project?: { readonly root: string; readonly lockFile: string };
}

/** One cronfence Lambda with its own log group (metric filters and retention hang off it). */
export function cronfenceFunction(scope: Construct, id: string, props: CronfenceFunctionProps): nodejs.NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: retentionDays(props.logRetentionDays),
    removalPolicy: props.removalPolicy,
  });
  const lockFile = path.join(PACKAGE_ROOT, 'package-lock.json');
  const insidePackage = props.entry.startsWith(PACKAGE_ROOT + path.sep);
  const project = props.project ?? (insidePackage && existsSync(lockFile) ? { root: PACKAGE_ROOT, lockFile } : undefined);
  return new nodejs.NodejsFunction(scope, id, {
    entry: props.entry,
    handler: 'handler',
    description: props.description,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    timeout: props.timeout,
    memorySize: props.memorySize ?? 512,
    ...(props.reservedConcurrency !== undefined && { reservedConcurrentExecutions: props.reservedConcurrency }),
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    logGroup,
    ...(project && { depsLockFilePath: project.lockFile, projectRoot: project.root }),
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
