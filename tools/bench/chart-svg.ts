/**
 * The bench's picture, hand-written SVG (no plotting dependency): the burst
 * (slices enqueued, started and committed against seconds after the due
 * second), density (items touched per due slice and scanner peak memory at
 * each number of schedules) and dollars per million executions beside
 * EventBridge Scheduler.
 */
import type { BenchReport } from './report.ts';

const PANEL_W = 420;
const PANEL_H = 300;
const PAD = { left: 55, right: 15, top: 40, bottom: 45 };
const COLORS = { enqueued: '#9467bd', started: '#1f77b4', committed: '#2e9e44' } as const;
/** The enqueued curve steps when a scan reports; its slices went out in batches of 10 while it ran, so it is an upper bound. */
const LEGEND = { enqueued: 'scans done (all sent by then)', started: 'started', committed: 'committed' } as const;
const COST_COLORS: Record<string, string> = {
  dynamoWrites: '#1f77b4',
  dynamoReads: '#aec7e8',
  sqs: '#ff7f0e',
  lambdaRequests: '#98df8a',
  lambdaCompute: '#2ca02c',
  events: '#d62728',
  scheduler: '#9467bd',
};

export function renderBenchSvg(report: Omit<BenchReport, 'chart'>): string {
  const width = PANEL_W * 3 + 20;
  const height = PANEL_H + 60;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    '<rect width="100%" height="100%" fill="white"/>',
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXml(`cronfence bench (${report.mode}), ${report.generatedAt.slice(0, 16)}Z`)}</text>`,
    ...burstPanel(report, 10, 30),
    ...densityPanel(report, 10 + PANEL_W, 30),
    ...costPanel(report, 10 + 2 * PANEL_W, 30),
    '</svg>',
  ];
  return parts.join('\n');
}

function frame(x0: number, y0: number, title: string): { parts: string[]; plot: { x: number; y: number; w: number; h: number } } {
  const plot = { x: x0 + PAD.left, y: y0 + PAD.top, w: PANEL_W - PAD.left - PAD.right, h: PANEL_H - PAD.top - PAD.bottom };
  return {
    plot,
    parts: [
      `<text x="${x0 + PAD.left}" y="${y0 + 22}" font-size="12" font-weight="bold">${escapeXml(title)}</text>`,
      `<line x1="${plot.x}" y1="${plot.y + plot.h}" x2="${plot.x + plot.w}" y2="${plot.y + plot.h}" stroke="#333"/>`,
      `<line x1="${plot.x}" y1="${plot.y}" x2="${plot.x}" y2="${plot.y + plot.h}" stroke="#333"/>`,
    ],
  };
}

function burstPanel(report: Omit<BenchReport, 'chart'>, x0: number, y0: number): string[] {
  const { parts, plot } = frame(x0, y0, `Burst: ${report.burst.slices} slices due in one second`);
  const curve = report.burst.curve;
  if (curve.length === 0) return parts;
  const minS = curve[0]?.second ?? 0;
  const maxS = Math.max(minS + 1, curve.at(-1)?.second ?? 1);
  const maxY = Math.max(1, report.burst.slices);
  const x = (s: number): number => plot.x + ((s - minS) / (maxS - minS)) * plot.w;
  const y = (n: number): number => plot.y + plot.h - (n / maxY) * plot.h;
  for (const series of ['enqueued', 'started', 'committed'] as const) {
    const points = curve.map((p) => `${x(p.second).toFixed(1)},${y(p[series]).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${points}" fill="none" stroke="${COLORS[series]}" stroke-width="2"/>`);
  }
  parts.push(`<line x1="${x(0)}" y1="${plot.y}" x2="${x(0)}" y2="${plot.y + plot.h}" stroke="#999" stroke-dasharray="4 3"/>`);
  parts.push(`<text x="${x(0) + 3}" y="${plot.y + 10}" fill="#666">due second</text>`);
  for (const s of ticks(minS, maxS))
    parts.push(`<text x="${x(s)}" y="${plot.y + plot.h + 14}" text-anchor="middle" fill="#666">${s}</text>`);
  parts.push(`<text x="${plot.x + plot.w / 2}" y="${plot.y + plot.h + 30}" text-anchor="middle">seconds after the due second</text>`);
  parts.push(
    `<text x="${plot.x - 6}" y="${plot.y + 4}" text-anchor="end" fill="#666">${maxY}</text><text x="${plot.x - 6}" y="${plot.y + plot.h}" text-anchor="end" fill="#666">0</text>`,
  );
  (['enqueued', 'started', 'committed'] as const).forEach((series, i) =>
    parts.push(
      `<rect x="${plot.x + 10}" y="${plot.y + 20 + i * 14}" width="10" height="10" fill="${COLORS[series]}"/><text x="${plot.x + 24}" y="${plot.y + 29 + i * 14}">${LEGEND[series]}</text>`,
    ),
  );
  return parts;
}

function densityPanel(report: Omit<BenchReport, 'chart'>, x0: number, y0: number): string[] {
  const { parts, plot } = frame(x0, y0, 'Density: per scan window, by schedules registered');
  const levels = report.density.levels;
  const maxItems = Math.max(1, ...levels.map((l) => l.itemsTouchedPerDueSlice)) * 1.3;
  const maxRss = Math.max(1, ...levels.map((l) => l.scannerPeakRssMb)) * 1.3;
  const group = plot.w / Math.max(1, levels.length);
  levels.forEach((level, i) => {
    const gx = plot.x + i * group + group * 0.15;
    const bw = group * 0.33;
    const h1 = (level.itemsTouchedPerDueSlice / maxItems) * plot.h;
    const h2 = (level.scannerPeakRssMb / maxRss) * plot.h;
    parts.push(
      `<rect x="${gx}" y="${plot.y + plot.h - h1}" width="${bw}" height="${h1}" fill="#1f77b4"><title>items touched per due slice</title></rect>`,
    );
    parts.push(`<text x="${gx + bw / 2}" y="${plot.y + plot.h - h1 - 3}" text-anchor="middle">${level.itemsTouchedPerDueSlice}</text>`);
    parts.push(
      `<rect x="${gx + bw + 4}" y="${plot.y + plot.h - h2}" width="${bw}" height="${h2}" fill="#ff7f0e"><title>scanner peak RSS (MB)</title></rect>`,
    );
    parts.push(`<text x="${gx + bw * 1.5 + 4}" y="${plot.y + plot.h - h2 - 3}" text-anchor="middle">${level.scannerPeakRssMb}</text>`);
    parts.push(
      `<text x="${gx + bw + 2}" y="${plot.y + plot.h + 14}" text-anchor="middle">${level.schedules.toLocaleString('en-US')}</text>`,
    );
    parts.push(
      `<text x="${gx + bw + 2}" y="${plot.y + plot.h + 28}" text-anchor="middle" fill="#666">${level.msPerShardMean} ms/shard</text>`,
    );
  });
  parts.push(
    `<rect x="${plot.x + 10}" y="${plot.y + 4}" width="10" height="10" fill="#1f77b4"/><text x="${plot.x + 24}" y="${plot.y + 13}">items touched per due slice</text>`,
  );
  parts.push(
    `<rect x="${plot.x + 10}" y="${plot.y + 18}" width="10" height="10" fill="#ff7f0e"/><text x="${plot.x + 24}" y="${plot.y + 27}">scanner peak RSS, MB</text>`,
  );
  return parts;
}

function costPanel(report: Omit<BenchReport, 'chart'>, x0: number, y0: number): string[] {
  const { parts, plot } = frame(x0, y0, `$ per million executions (us-east-1, ${report.prices.asOf})`);
  const bars = [
    ['cronfence 1 s', report.costs.cronfence1s],
    ['Scheduler 1 s', report.costs.eventBridgeScheduler1s],
    ['cronfence 45 s', report.costs.cronfence45s],
    ['Scheduler 45 s', report.costs.eventBridgeScheduler45s],
  ] as const;
  const maxTotal = Math.max(0.01, ...bars.map(([, cost]) => cost.total)) * 1.15;
  const group = plot.w / bars.length;
  bars.forEach(([label, cost], i) => {
    const bx = plot.x + i * group + group * 0.2;
    const bw = group * 0.6;
    let top = plot.y + plot.h;
    for (const [component, color] of Object.entries(COST_COLORS)) {
      const value = cost[component as keyof typeof cost];
      const h = (value / maxTotal) * plot.h;
      if (h <= 0) continue;
      top -= h;
      parts.push(`<rect x="${bx}" y="${top}" width="${bw}" height="${h}" fill="${color}"><title>${component}: $${value}</title></rect>`);
    }
    parts.push(`<text x="${bx + bw / 2}" y="${top - 3}" text-anchor="middle">$${cost.total.toFixed(2)}</text>`);
    parts.push(`<text x="${bx + bw / 2}" y="${plot.y + plot.h + 14}" text-anchor="middle">${escapeXml(label)}</text>`);
  });
  Object.entries(COST_COLORS).forEach(([component, color], i) =>
    parts.push(
      `<rect x="${plot.x + 10 + (i % 4) * 85}" y="${plot.y + plot.h + 22 + Math.floor(i / 4) * 12}" width="8" height="8" fill="${color}"/><text x="${plot.x + 21 + (i % 4) * 85}" y="${plot.y + plot.h + 30 + Math.floor(i / 4) * 12}" font-size="9">${component}</text>`,
    ),
  );
  return parts;
}

function ticks(min: number, max: number): number[] {
  const span = max - min;
  const step = [1, 2, 5, 10, 20, 30, 60, 120, 300].find((s) => span / s <= 8) ?? 600;
  const out: number[] = [];
  for (let s = Math.ceil(min / step) * step; s <= max; s += step) out.push(s);
  return out;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] as string);
}
