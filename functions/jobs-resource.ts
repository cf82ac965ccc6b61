/** Lambda: the `Custom::CronfenceJob` provider's onEvent (lib/lambda/jobs-resource.ts). */
export { handler } from '../lib/lambda/jobs-resource.ts';
