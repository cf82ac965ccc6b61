/**
 * What SQS accepts as a message body, so that a definition SQS would refuse
 * is refused when it is stored (job-spec.ts) and a stored row that slipped
 * through is set aside by the scan (engine/scanner.ts) instead of failing
 * every send of its shard. moto accepts what SQS refuses, so the rule is ours.
 *
 * SQS's documented characters: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD
 * | #x10000-#x10FFFF; a body (and its attributes: we send none) of at most 256 KiB.
 */

export const SQS_MAX_BODY_BYTES = 256 * 1024;

/** The first code point SQS refuses in `text`, or undefined. */
export function refusedCharacter(text: string): number | undefined {
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (!isAllowed(code)) return code;
  }
  return undefined;
}

/** Why SQS would refuse `body`, or undefined when it accepts it. */
export function sqsBodyProblem(body: string): string | undefined {
  const refused = refusedCharacter(body);
  if (refused !== undefined) return `holds ${codePointName(refused)}, a character SQS refuses in a message`;
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > SQS_MAX_BODY_BYTES) return `is ${bytes} bytes as a work message, over SQS's ${SQS_MAX_BODY_BYTES}`;
  return undefined;
}

/** `U+FFFF`. */
export function codePointName(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

function isAllowed(code: number): boolean {
  if (code === 0x9 || code === 0xa || code === 0xd) return true;
  // A lone surrogate is not a character (a well-formed string never yields one here).
  return (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}
