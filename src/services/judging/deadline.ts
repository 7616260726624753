/** A signal for one step of a request: aborted when the client leaves or the step outlives `timeoutMs`. */
export interface Deadline {
  readonly signal: AbortSignal;
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
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      clientSignal.removeEventListener("abort", onClientGone);
    },
  };
}
