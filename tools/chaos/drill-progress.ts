/** Where a drill is, as it reports itself to its caller (the progress bar) and names the phase an abort stopped it in. */
export interface DrillProgress {
  readonly phase: 'starting' | 'running' | 'draining' | 'checking';
  readonly elapsedSeconds: number;
  readonly committed: number;
  readonly faults: number;
}
