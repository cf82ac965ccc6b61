/** Structured Lambda logs (Powertools), one logger per function. */
import { Logger } from '@aws-lambda-powertools/logger';

export function functionLogger(serviceName: string): Logger {
  return new Logger({ serviceName });
}
