import { pino, type DestinationStream, type Logger as Pino } from "pino";

/**
 * Structured JSON logs (pino), one object per line on stderr:
 * `{"level":"info","time":"<ISO>","request_id":…,"message":"request",…}`. Callers pass only
 * what is safe to keep: never keys, tokens, authorization headers, states or request bodies.
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** The same logger with `fields` on every line, such as a request's id. */
  child(fields: LogFields): Logger;
}

/**
 * Fields never written whatever a caller passes, as a second line of defence: the first is that
 * no caller passes them. Removed rather than masked, so not even their presence shows.
 */
const NEVER_LOGGED = ["authorization", "key", "api_key", "token", "admin_token", "password", "state", "body"];

/**
 * `write` receives each line (tests keep them). Without it lines go to stderr synchronously:
 * a buffered destination would hold them back while a model download's progress bar runs, or
 * lose them when the process exits.
 */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const destination: DestinationStream = write ? { write } : pino.destination({ dest: 2, sync: true });
  const root = pino(
    {
      level,
      base: null,
      messageKey: "message",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: NEVER_LOGGED, remove: true },
    },
    destination,
  );
  return wrap(root);
}

function wrap(logger: Pino): Logger {
  return {
    debug: (message, fields) => logger.debug(fields ?? {}, message),
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
    child: (fields) => wrap(logger.child(fields)),
  };
}
