/**
 * The drill's picture: one lane per worker replica with each attempt drawn
 * from claim to outcome (green committed, red fenced out, orange failed),
 * kills (black cross), pauses (grey band), takeovers (blue line from the
 * victim's last heartbeat to the standby's claim), and the settlement's
 * chunks as ticks (purple committed, lilac skipped at a standby's checkpoint,
 * red refused by the fence); below, a histogram of
 * failover latency against the 5 s goal.
 */
import type { HistoryVerdict, InjectedProcessFault, ObservedEvent } from './history.ts';
import type { ObservedChunk } from './observed.ts';

const WIDTH = 1400;
const LANE = 18;
const LEFT = 110;
const COLORS: Record<string, string> = { committed: '#2e9e44', fenced_out: '#d62728', failed: '#ff7f0e', dead: '#7f0000' };
const CHUNK_COLORS: Record<ObservedChunk['outcome'], string> = { committed: '#6a3d9a', 'already-committed': '#cab2d6', refused: '#d62728' };

export interface TimelineInput {
  readonly events: readonly ObservedEvent[];
  readonly processFaults: readonly InjectedProcessFault[];
  /** The settlement drill's chunk reports. @default [] */
  readonly chunks?: readonly ObservedChunk[];
  readonly verdict: HistoryVerdict;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly title: string;
}

export function renderTimelineSvg(input: TimelineInput): string {
  const workers = [...new Set(input.events.filter((o) => o.replica.startsWith('worker')).map((o) => o.replica))].sort(naturalOrder);
  const lane = new Map(workers.map((worker, i) => [worker, i]));
  const span = Math.max(1, input.endedAt - input.startedAt);
  const x = (t: number): number => LEFT + ((t - input.startedAt) / span) * (WIDTH - LEFT - 20);
  const y = (worker: string): number => 40 + (lane.get(worker) ?? 0) * LANE;
  const timelineHeight = 40 + workers.length * LANE + 30;
  const histogramTop = timelineHeight + 30;
  const height = histogramTop + 220;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXml(input.title)}</text>`,
  ];
  workers.forEach((worker) => parts.push(`<text x="10" y="${y(worker) + 12}">${escapeXml(worker)}</text>`));
  for (let s = 0; s <= span / 1000; s += 10)
    parts.push(`<text x="${x(input.startedAt + s * 1000)}" y="${timelineHeight - 12}" fill="#666">${s}s</text>`);

  for (const fault of input.processFaults) {
    if (!lane.has(fault.replica)) continue;
    if (fault.kind === 'pause') {
      parts.push(
        `<rect x="${x(fault.at)}" y="${y(fault.replica) - 2}" width="${Math.max(2, x(fault.until ?? fault.at) - x(fault.at))}" height="${LANE}" fill="#bbb" opacity="0.6"><title>paused</title></rect>`,
      );
    } else {
      const cx = x(fault.at);
      const cy = y(fault.replica) + 7;
      parts.push(
        `<path d="M${cx - 5} ${cy - 5} L${cx + 5} ${cy + 5} M${cx - 5} ${cy + 5} L${cx + 5} ${cy - 5}" stroke="black" stroke-width="2"><title>killed</title></path>`,
      );
    }
  }

  // Attempts at a chunked slice (the settlement) are outlined, so its runs stand out among the drill's jobs.
  const chunked = new Set((input.chunks ?? []).map((chunk) => chunk.executionKey));
  const claims = new Map<string, ObservedEvent>();
  for (const observed of [...input.events].sort((a, b) => Date.parse(a.event.at) - Date.parse(b.event.at))) {
    const id = `${observed.replica}|${observed.event.executionKey}|${observed.event.fence}`;
    if (observed.event.type === 'claimed') claims.set(id, observed);
    const color = COLORS[observed.event.type];
    const claim = claims.get(id);
    if (!color || !claim || !lane.has(observed.replica)) continue;
    const from = x(Date.parse(claim.event.at) - claim.offsetMs);
    const to = x(Date.parse(observed.event.at) - observed.offsetMs);
    parts.push(
      `<rect x="${from}" y="${y(observed.replica)}" width="${Math.max(1.5, to - from)}" height="${LANE - 6}" fill="${color}"${chunked.has(observed.event.executionKey) ? ' stroke="#6a3d9a" stroke-width="2"' : ''}><title>${escapeXml(`${observed.event.executionKey} fence ${observed.event.fence} ${observed.event.type}`)}</title></rect>`,
    );
  }
  for (const failover of input.verdict.failovers) {
    if (!lane.has(failover.victim) || !lane.has(failover.standby)) continue;
    parts.push(
      `<line x1="${x(failover.lastHeartbeatAt)}" y1="${y(failover.victim) + 6}" x2="${x(failover.takeoverAt)}" y2="${y(failover.standby) + 6}" stroke="#1f77b4" stroke-width="1.5"><title>${escapeXml(`takeover of ${failover.executionKey}: ${failover.latencyMs} ms`)}</title></line>`,
    );
  }
  parts.push(...chunkTicks(input.chunks ?? [], lane, x, y));
  parts.push(
    `<text x="${LEFT}" y="${timelineHeight + 4}" fill="#444">green committed · red fenced out · orange failed · grey paused · × killed · blue takeover (last heartbeat → standby claim)${(input.chunks ?? []).length > 0 ? ' · settlement runs outlined purple; chunk ticks: purple committed, lilac skipped (checkpoint), red refused (fence)' : ''}</text>`,
  );
  parts.push(
    ...histogram(
      input.verdict.failovers.map((f) => f.latencyMs),
      histogramTop,
    ),
  );
  parts.push('</svg>');
  return parts.join('\n');
}

/** One tick per settlement chunk report, on its worker's lane, above the attempt bars. */
function chunkTicks(
  chunks: readonly ObservedChunk[],
  lane: ReadonlyMap<string, number>,
  x: (t: number) => number,
  y: (worker: string) => number,
): string[] {
  return chunks
    .filter((chunk) => lane.has(chunk.replica))
    .map((chunk) => {
      const cx = x(chunk.at);
      const top = y(chunk.replica) - 3;
      const tall = chunk.outcome === 'committed' ? 8 : 12;
      return `<line x1="${cx}" y1="${top}" x2="${cx}" y2="${top + tall}" stroke="${CHUNK_COLORS[chunk.outcome]}" stroke-width="${chunk.outcome === 'refused' ? 2 : 1}"><title>${escapeXml(`${chunk.executionKey} chunk ${chunk.chunk} fence ${chunk.fence} ${chunk.outcome}`)}</title></line>`;
    });
}

function histogram(latencies: readonly number[], top: number): string[] {
  const bins = Array.from({ length: 16 }, () => 0); // 500 ms bins, 0–8 s
  for (const latency of latencies) bins[Math.min(bins.length - 1, Math.max(0, Math.floor(latency / 500)))]! += 1;
  const max = Math.max(1, ...bins);
  const barWidth = 50;
  const parts = [
    `<text x="10" y="${top}" font-size="13" font-weight="bold">Failover latency (last heartbeat → standby claim), n=${latencies.length}</text>`,
  ];
  bins.forEach((count, i) => {
    const h = (count / max) * 150;
    const bx = LEFT + i * (barWidth + 4);
    parts.push(
      `<rect x="${bx}" y="${top + 170 - h}" width="${barWidth}" height="${h}" fill="${i * 500 >= 5000 ? '#d62728' : '#1f77b4'}"/>`,
    );
    parts.push(`<text x="${bx}" y="${top + 184}" fill="#666">${(i * 0.5).toFixed(1)}s</text>`);
    if (count > 0) parts.push(`<text x="${bx + 18}" y="${top + 165 - h}">${count}</text>`);
  });
  const goal = LEFT + 10 * (barWidth + 4) - 2;
  parts.push(
    `<line x1="${goal}" y1="${top + 10}" x2="${goal}" y2="${top + 172}" stroke="#d62728" stroke-dasharray="4 3"/><text x="${goal + 4}" y="${top + 20}" fill="#d62728">5 s goal</text>`,
  );
  return parts;
}

function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, undefined, { numeric: true });
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] as string);
}
