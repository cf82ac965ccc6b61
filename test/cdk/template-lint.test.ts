/**
 * The linters a CDK team runs, on the repository's app (app/settlement-stack.ts): cdk-nag's AwsSolutions pack on the
 * construct tree, and cfn-lint (pinned, in the project's .venv-cfn-lint, built by scripts/setup-cfn-lint.sh) on the
 * synthesized template. Any finding not in lint-suppressions.ts fails, and so does a suppression that matches
 * nothing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Aspects } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, NagSuppressions, type INagLogger } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettlementStack } from '../../app/settlement-stack.ts';
import { CFN_LINT_IGNORED, NAG_SUPPRESSIONS } from './lint-suppressions.ts';
import { testApp } from './synth.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CFN_LINT = path.join(ROOT, '.venv-cfn-lint', 'bin', 'cfn-lint');

interface NagFinding {
  readonly rule: string;
  readonly finding: string;
  readonly path: string;
}

function nagRun(): { unsuppressed: NagFinding[]; suppressed: NagFinding[]; errors: string[]; template: Template } {
  const unsuppressed: NagFinding[] = [];
  const suppressed: NagFinding[] = [];
  const errors: string[] = [];
  const record = (into: NagFinding[]) => (data: { ruleId: string; findingId: string; resource: { node: { path: string } } }) =>
    into.push({ rule: data.ruleId, finding: data.findingId, path: data.resource.node.path });
  const logger: INagLogger = {
    onCompliance: () => {},
    onNotApplicable: () => {},
    onNonCompliance: record(unsuppressed),
    onSuppressed: record(suppressed),
    onError: (data) => errors.push(`${data.ruleId} on ${data.resource.node.path}: ${data.errorMessage}`),
    onSuppressedError: (data) => errors.push(`${data.ruleId} on ${data.resource.node.path}: ${data.errorMessage} (suppressed)`),
  };
  const app = testApp();
  const stack = new SettlementStack(app, 'CronfenceSettlement');
  NagSuppressions.addStackSuppressions(stack, [...NAG_SUPPRESSIONS]);
  Aspects.of(app).add(new AwsSolutionsChecks({ reports: false, additionalLoggers: [logger] }));
  // Aspects run at synthesis.
  const template = Template.fromStack(stack);
  return { unsuppressed, suppressed, errors, template };
}

const nag = nagRun();

describe('cdk-nag (AwsSolutions) on the repository app', () => {
  it('finds nothing outside the suppression list', () => {
    expect(nag.unsuppressed).toEqual([]);
    expect(nag.errors).toEqual([]);
  });

  it('uses every suppression, each with a reason', () => {
    for (const suppression of NAG_SUPPRESSIONS) {
      expect(suppression.reason.length).toBeGreaterThan(40);
      expect(nag.suppressed.map((finding) => finding.rule)).toContain(suppression.id);
    }
  });

  it('the wildcard it accepts is the provider framework invoking the jobs-resource function, nothing else', () => {
    const wildcards = nag.suppressed.filter((finding) => finding.rule === 'AwsSolutions-IAM5');
    expect(wildcards.map((finding) => [finding.path, finding.finding])).toEqual([
      [
        expect.stringMatching(/\/Cron\/JobsProvider\/framework-onEvent\/ServiceRole\/DefaultPolicy\/Resource$/),
        expect.stringMatching(/^Resource::<CronJobsResource[0-9A-F]{8}\.Arn>:\*$/),
      ],
    ]);
  });
});

describe('cfn-lint on the synthesized template of the repository app', () => {
  let dir: string;
  beforeAll(() => {
    // Idempotent: returns at once when the pinned venv is there (about 15 s to build it).
    execFileSync('bash', [path.join(ROOT, 'scripts', 'setup-cfn-lint.sh')], { stdio: 'inherit' });
    dir = mkdtempSync(path.join(tmpdir(), 'cronfence-cfn-lint-'));
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Every finding, as `line:column:line:column:rule:message`, with nothing ignored: the ignore list is applied below. */
  const lint = (name: string, template: unknown) => {
    const file = path.join(dir, `${name}.template.json`);
    writeFileSync(file, JSON.stringify(template, null, 1));
    const run = spawnSync(CFN_LINT, ['--format', 'parseable', '--', file], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    return run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(file.length + 1));
  };
  const ruleOf = (finding: string) => finding.split(':')[4];

  it('finds nothing outside the ignored rules, and every ignored rule still fires (no stale entry)', { timeout: 60_000 }, () => {
    const findings = lint('app', nag.template.toJSON());
    const ignored = new Set(CFN_LINT_IGNORED.map((entry) => entry.rule));
    expect(findings.filter((finding) => !ignored.has(ruleOf(finding) ?? ''))).toEqual([]);
    for (const entry of CFN_LINT_IGNORED) {
      expect(entry.reason.length).toBeGreaterThan(40);
      expect(findings.map(ruleOf)).toContain(entry.rule);
    }
  });

  it('does find what it should (a property CloudFormation does not know), so a pass means something', { timeout: 60_000 }, () => {
    const template = nag.template.toJSON() as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
    const queue = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::SQS::Queue')!;
    queue.Properties.VisibilityTimeoutSeconds = 30;
    const ignored = new Set(CFN_LINT_IGNORED.map((entry) => entry.rule));
    const findings = lint('broken', template).filter((finding) => !ignored.has(ruleOf(finding) ?? ''));
    expect(findings).toEqual([expect.stringMatching(/:E3002:.*'VisibilityTimeoutSeconds' was unexpected/)]);
  });
});
