/**
 * Runs tasks one at a time, in arrival order. The model's sequence holds the state of one
 * request at a time, so access to it must be serialised; waiting here costs no CPU, so
 * health checks and error responses are never blocked by it.
 */
export interface SerialQueue {
  run<T>(task: () => Promise<T>): Promise<T>;
  readonly pending: number;
}

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  return {
    run<T>(task: () => Promise<T>): Promise<T> {
      pending++;
      const result = tail.then(task).finally(() => pending--);
      tail = result.catch(() => undefined);
      return result;
    },
    get pending() {
      return pending;
    },
  };
}
