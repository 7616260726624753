/**
 * Progress of a long run on stderr (stdout stays for the result, so `--json | jq` works): one
 * line redrawn in place on a terminal, and a line per 10% otherwise (CI logs, files).
 */

export interface Progress {
  advance(count?: number): void;
  /** A message that must not be overwritten, e.g. a retry. */
  note(message: string): void;
  finish(): void;
}

export interface ProgressOptions {
  label: string;
  total: number;
  write: (text: string) => void;
  tty: boolean;
  now?: () => number;
}

const REDRAW_MS = 100;

export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const started = now();
  let done = 0;
  let lastDraw = -Infinity;
  let lastTenth = 0;
  let drawn = false;

  const line = () => {
    const seconds = (now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const percent = options.total === 0 ? 100 : Math.floor((100 * done) / options.total);
    const eta = rate > 0 && done < options.total ? `, ${Math.ceil((options.total - done) / rate)} s left` : "";
    return `${options.label}: ${done}/${options.total} requests (${percent}%), ${rate.toFixed(1)}/s${eta}`;
  };
  const draw = (force: boolean) => {
    if (options.tty) {
      if (!force && now() - lastDraw < REDRAW_MS) return;
      lastDraw = now();
      options.write(`\r${line()}\x1b[K`);
      drawn = true;
      return;
    }
    const tenth = options.total === 0 ? 10 : Math.floor((10 * done) / options.total);
    if (force || tenth > lastTenth) {
      lastTenth = tenth;
      options.write(`${line()}\n`);
    }
  };

  return {
    advance(count = 1) {
      done += count;
      draw(false);
    },
    note(message) {
      options.write(options.tty && drawn ? `\r\x1b[K${message}\n` : `${message}\n`);
      if (options.tty) draw(true);
    },
    finish() {
      if (options.tty) {
        draw(true);
        options.write("\n");
      } else if (lastTenth < 10) draw(true);
    },
  };
}

/**
 * Runs `fn` over `items` with at most `limit` in flight, results in input order. After a
 * failure no new item starts; the first error is thrown once the running ones have settled,
 * so nothing is left talking to the server behind the caller's back.
 */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index], index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
}
