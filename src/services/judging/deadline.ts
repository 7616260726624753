/**
 * A signal for a request (JUDGE_REQUEST_TIMEOUT_MS: one deadline over preparing, the hold and
 * answering, every model tried) or a step of it: aborted when the client leaves or it outlives `timeoutMs`.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Whether it was the time that ran out (not the client that left). */
  readonly timedOut: boolean;
  /** Stops the timer and stops listening to the client; call it once the step is over. */
  dispose(): void;
}

/**
 * One AbortController and one timer. `AbortSignal.any([client, AbortSignal.timeout(ms)])` does
 * the same but costs several times more per request (weak references and finalisers for both).
 */
export function deadline(clientSignal: AbortSignal, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onClientGone = () => controller.abort(clientSignal.reason);
  const timer = setTimeout(() => {
    // A client that left first stays the reason, however long the step then takes to notice.
    if (controller.signal.aborted) return;
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  if (clientSignal.aborted) onClientGone();
  else clientSignal.addEventListener("abort", onClientGone, { once: true });
  return {
    signal: controller.signal,
    timeoutMs,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      clientSignal.removeEventListener("abort", onClientGone);
    },
  };
}

/**
 * One step of a request (a preparation, a model call): a signal of its own, so what the engine
 * hangs on it goes with the step, aborted with the request's; no timer of its own.
 */
export function stepOf(request: Deadline): Deadline {
  const controller = new AbortController();
  const onRequestOver = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) onRequestOver();
  else request.signal.addEventListener("abort", onRequestOver, { once: true });
  return {
    signal: controller.signal,
    timeoutMs: request.timeoutMs,
    get timedOut() {
      return request.timedOut;
    },
    dispose() {
      request.signal.removeEventListener("abort", onRequestOver);
    },
  };
}
