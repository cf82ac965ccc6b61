/**
 * `cronfence verify` on a chaos drill's installation, business writes
 * included: what test/chaos/drill.test.ts calls after a drill (the drill
 * leaves its tables on the shared emulator). The same function the CLI runs,
 * so the drill proves the product command catches a broken engine.
 */
import { verifyInstallation } from '../../lib/aws/verify-installation.ts';
import { effectsTableName } from '../../tools/chaos/chaos-jobs.ts';
import type { AuditReport } from '../../lib/core/audit.ts';
import { createRuntime } from '../../lib/lambda/wiring.ts';

export interface DrillInstallation {
  /** The drill's CRONFENCE_PREFIX. */
  readonly prefix: string;
  /** The drill's fault window (report.json `window`): its occurrences are drained before the check. */
  readonly window: { readonly startedAt: string; readonly endedAt: string };
}

export async function verifyDrillInstallation(drill: DrillInstallation): Promise<AuditReport> {
  const runtime = createRuntime({ env: { ...process.env, CRONFENCE_PREFIX: drill.prefix } });
  try {
    return await verifyInstallation(
      { dynamo: runtime.clients.dynamo, config: runtime.config },
      {
        since: Date.parse(drill.window.startedAt),
        until: Date.parse(drill.window.endedAt),
        // The drill drained every live slice of its window: none may be left waiting.
        graceMs: 0,
        effects: [{ table: effectsTableName(drill.prefix) }],
      },
    );
  } finally {
    runtime.clients.dynamo.destroy();
    runtime.clients.sqs.destroy();
    runtime.clients.events.destroy();
  }
}
