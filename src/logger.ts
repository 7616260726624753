/**
 * One JSON object per line on stderr. Callers pass only what is safe to keep: never keys,
 * authorization headers or request bodies.
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const at = (name: Exclude<LogLevel, "silent">) => (message: string, fields?: LogFields) => {
    if (RANK[name] < RANK[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: name, message, ...fields }) + "\n");
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
