/**
 * The CDK app of cdk.json: `npx cdk synth`, `npx cdk deploy` (docs/cdk.md).
 * Environment-agnostic unless CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION are
 * set, so `cdk synth` works offline with no credentials.
 */
import { App } from 'aws-cdk-lib';
import { SettlementStack } from './settlement-stack.ts';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
new SettlementStack(app, process.env.CRONFENCE_STACK_NAME ?? 'CronfenceSettlement', {
  ...(account && region && { env: { account, region } }),
  description: 'cronfence: serverless distributed cron (merchant settlement example)',
});
app.synth();
