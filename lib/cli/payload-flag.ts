/**
 * `--payload`: a JSON object given inline, or `@path` to read it from a file
 * (a payload too long or too quoted for a shell line). Errors name the file
 * and what is wrong with it; commander adds the flag.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';

/** @throws {InvalidArgumentError} */
export function parsePayloadFlag(
  value: string,
  readFile: (file: string) => string = (file) => readFileSync(file, 'utf8'),
): Record<string, unknown> {
  if (!value.startsWith('@')) return jsonObject(value, `${JSON.stringify(value)}`);
  const file = value.slice(1);
  if (file.length === 0) throw new InvalidArgumentError('"@" names no file: give @path/to/payload.json');
  let text: string;
  try {
    text = readFile(file);
  } catch (error) {
    throw new InvalidArgumentError(`cannot read payload file ${JSON.stringify(file)}: ${(error as Error).message}`);
  }
  return jsonObject(text, `payload file ${JSON.stringify(file)}`);
}

/** The payload text of `value` for a command that validates the text itself (`jobs trigger`): `@path` is read. */
export function payloadText(value: string, readFile?: (file: string) => string): string {
  return value.startsWith('@') ? JSON.stringify(parsePayloadFlag(value, readFile)) : value;
}

function jsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidArgumentError(
      `${what} holds ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`}, not a JSON object`,
    );
  }
  return parsed as Record<string, unknown>;
}
