/**
 * The dashboard: its widgets, and that every engine metric it graphs is named
 * exactly as the Lambdas' metrics sink writes it (lib/lambda/metric-names.ts),
 * in the namespace and with the `service` dimension the functions are given.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DEFAULT_METRICS_NAMESPACE, ENGINE_METRICS, SERVICE_DIMENSION } from '../../lib/lambda/metric-names.ts';
import { logicalIdOf, resourcesOf, synthScheduler } from './synth.ts';

interface Widget {
  readonly type: string;
  readonly properties: { readonly title: string; readonly view?: string; readonly metrics?: unknown[][]; readonly stacked?: boolean };
}

/** The dashboard body, its tokens (a queue name, the region) as placeholder strings naming them. */
function dashboardBody(template: Template): { widgets: Widget[] } {
  const dashboards = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  const body = dashboards[0]?.Properties?.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  const text = body['Fn::Join'][1]
    .map((part) => (typeof part === 'string' ? part : `<${JSON.stringify(part).replace(/"/g, "'")}>`))
    .join('');
  return JSON.parse(text) as { widgets: Widget[] };
}

/** [namespace, name, ...dimension pairs, options] rows of a widget; math expressions and their hidden terms included. */
function rows(widget: Widget | undefined): { namespace?: string; name?: string; dimensions: string[]; options: Record<string, unknown> }[] {
  return (widget?.properties.metrics ?? []).map((row) => {
    const options = (typeof row[row.length - 1] === 'object' ? row[row.length - 1] : {}) as Record<string, unknown>;
    const plain = row.filter((cell): cell is string => typeof cell === 'string');
    return { namespace: plain[0], name: plain[1], dimensions: plain.slice(2), options };
  });
}

const { scheduler, template } = synthScheduler();
const widgets = dashboardBody(template).widgets;
const byTitle = (title: string): Widget | undefined => widgets.find((widget) => widget.properties.title === title);
const ENGINE_NAMES = new Set<string>(Object.values(ENGINE_METRICS).map((metric) => metric.name));

describe('dashboard', () => {
  it('has the widgets an operator looks for', () => {
    expect(widgets.map((widget) => widget.properties.title)).toEqual([
      'Slices per outcome',
      'Start lag (ms)',
      'Failover takeovers and fenced-out writes',
      'Missed occurrences',
      "Stale jobs (dead-man's switch)",
      'Dead-letter queue depth',
      'Throttles',
      'Commit latency (ms)',
      'Lambda errors',
      'Lambda duration p99 (ms)',
      'Lambda throttles',
    ]);
    expect(byTitle('Dead-letter queue depth')?.properties.view).toBe('singleValue');
  });

  it("graphs every metric the sink writes, by the sink's names, namespace and service dimension, and nothing else in that namespace", () => {
    const engineRows = widgets.flatMap((widget) => rows(widget)).filter((row) => row.namespace === DEFAULT_METRICS_NAMESPACE);
    expect(new Set(engineRows.map((row) => row.name))).toEqual(ENGINE_NAMES);
    for (const row of engineRows) expect(row.dimensions).toEqual([SERVICE_DIMENSION, 'Test/Cron']);
    // No other namespace claims an engine metric name (a typo would land in a namespace of its own).
    const namespaces = new Set(
      widgets.flatMap((widget) => rows(widget)).flatMap((row) => (row.namespace === undefined ? [] : [row.namespace])),
    );
    expect([...namespaces].sort()).toEqual(['AWS/DynamoDB', 'AWS/Lambda', 'AWS/SQS', DEFAULT_METRICS_NAMESPACE]);
  });

  it('slices per outcome: the five outcomes summed, stacked; start lag and commit latency as p50 and p99', () => {
    const outcomes = byTitle('Slices per outcome');
    expect(outcomes?.properties.stacked).toBe(true);
    expect(rows(outcomes).map((row) => [row.name, row.options.stat])).toEqual(
      [ENGINE_METRICS.succeeded, ENGINE_METRICS.failed, ENGINE_METRICS.dead, ENGINE_METRICS.skipped, ENGINE_METRICS.missed].map(
        (metric) => [metric.name, 'Sum'],
      ),
    );
    for (const [title, metric] of [
      ['Start lag (ms)', ENGINE_METRICS.startLag],
      ['Commit latency (ms)', ENGINE_METRICS.commitLatency],
    ] as const) {
      expect(rows(byTitle(title)).map((row) => [row.name, row.options.stat])).toEqual([
        [metric.name, 'p50'],
        [metric.name, 'p99'],
      ]);
    }
    expect(rows(byTitle('Failover takeovers and fenced-out writes')).map((row) => row.name)).toEqual([
      ENGINE_METRICS.takeovers.name,
      ENGINE_METRICS.fencedOut.name,
    ]);
    expect(rows(byTitle('Missed occurrences')).map((row) => row.name)).toEqual([ENGINE_METRICS.missed.name]);
  });

  it("the DLQ's depth, DynamoDB's throttled requests of each table beside ours, each function's errors, duration and throttles", () => {
    const dlq = rows(byTitle('Dead-letter queue depth'));
    expect(dlq).toHaveLength(1);
    expect(dlq[0]).toMatchObject({ namespace: 'AWS/SQS', name: 'ApproximateNumberOfMessagesVisible', options: { stat: 'Maximum' } });
    expect(dlq[0]?.dimensions.join(' ')).toContain(logicalIdOf(scheduler.deadLetterQueue));

    const throttles = rows(byTitle('Throttles'));
    expect(throttles.filter((row) => row.name === ENGINE_METRICS.throttles.name)).toHaveLength(1);
    const tableTerms = throttles.filter((row) => row.namespace === 'AWS/DynamoDB');
    expect(tableTerms.every((row) => row.name === 'ThrottledRequests')).toBe(true);
    for (const table of [scheduler.jobsTable, scheduler.wheelTable, scheduler.slicesTable]) {
      const terms = tableTerms.filter((row) => row.dimensions.join(' ').includes(logicalIdOf(table)));
      expect(terms.map((row) => row.dimensions[row.dimensions.indexOf('Operation') + 1]).sort()).toEqual([
        'BatchGetItem',
        'BatchWriteItem',
        'DeleteItem',
        'GetItem',
        'PutItem',
        'Query',
        'TransactWriteItems',
        'UpdateItem',
      ]);
    }
    expect(throttles.filter((row) => typeof row.options.expression === 'string')).toHaveLength(3);

    for (const [title, metricName, stat] of [
      ['Lambda errors', 'Errors', 'Sum'],
      ['Lambda duration p99 (ms)', 'Duration', 'p99'],
      ['Lambda throttles', 'Throttles', 'Sum'],
    ] as const) {
      const lambdaRows = rows(byTitle(title));
      expect(lambdaRows.map((row) => [row.namespace, row.name, row.options.stat, row.options.label])).toEqual(
        ['tick', 'scanner', 'worker'].map((label) => ['AWS/Lambda', metricName, stat, label]),
      );
      const functions = [scheduler.tickFunction, scheduler.scannerFunction, scheduler.workerFunction];
      lambdaRows.forEach((row, i) => expect(row.dimensions.join(' ')).toContain(logicalIdOf(functions[i]!)));
    }
  });

  it('follows the metrics namespace and service given, and the functions are told the same', () => {
    const { template: custom } = synthScheduler({
      metrics: { namespace: 'Shop/Cron', service: 'payments' },
      dashboard: { dashboardName: 'shop-cron' },
    });
    custom.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'shop-cron' });
    const engineRows = dashboardBody(custom)
      .widgets.flatMap((widget) => rows(widget))
      .filter((row) => row.namespace === 'Shop/Cron');
    expect(new Set(engineRows.map((row) => row.name))).toEqual(ENGINE_NAMES);
    for (const row of engineRows) expect(row.dimensions).toEqual([SERVICE_DIMENSION, 'payments']);
    const variables = Object.values(resourcesOf(custom, 'AWS::Lambda::Function'))
      .filter((fn) => /^cronfence (tick|scanner|worker)/.test(String(fn.Properties?.Description)))
      .map((fn) => (fn.Properties?.Environment as { Variables: Record<string, string> }).Variables);
    expect(variables).toHaveLength(3);
    for (const env of variables)
      expect(env).toMatchObject({ POWERTOOLS_METRICS_NAMESPACE: 'Shop/Cron', POWERTOOLS_SERVICE_NAME: 'payments' });
  });

  it('dashboard: false creates none (the alarms stay)', () => {
    const { template: none } = synthScheduler({ dashboard: false });
    none.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(Object.keys(resourcesOf(none, 'AWS::CloudWatch::Alarm'))).toHaveLength(15);
  });
});
