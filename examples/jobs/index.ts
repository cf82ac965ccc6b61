/**
 * The handlers this deployment's workers can run. Add your own `defineJob`
 * handlers here (or build your own worker entry that passes a registry).
 */
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { EXAMPLE_HANDLERS } from './examples.ts';

export const registry = new HandlerRegistry(EXAMPLE_HANDLERS);
