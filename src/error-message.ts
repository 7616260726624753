/**
 * The text of anything thrown, for a log line, a status detail or a message wrapping it. A
 * leaf that imports nothing, so every layer that may reach the base one can use it.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
