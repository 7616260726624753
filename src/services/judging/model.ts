import type { EngineResult, JudgmentEngine, PreparedJudgment } from "../../engine/types.js";
import { RequestAbortedError } from "../../engine/types.js";
import { stepOf, type Deadline } from "./deadline.js";
import { JudgingRefusal } from "./errors.js";

/** A model that outlived the request's time. */
export const modelTimeout = (timeoutMs: number) => new JudgingRefusal("model_timeout", `the model did not answer within ${timeoutMs} ms; nothing was charged`);

/**
 * Runs the model until the request's deadline, and no longer than the client waits. Either way
 * the caller gets an error at once, even if the engine is stuck, so its reservation is released.
 */
export async function evaluateWithin(engine: JudgmentEngine, prepared: PreparedJudgment, request: Deadline): Promise<EngineResult> {
  const step = stepOf(request);
  const { signal } = step;
  const explain = () => (request.timedOut ? modelTimeout(request.timeoutMs) : new RequestAbortedError("the client closed the request before it was answered"));
  if (signal.aborted) {
    step.dispose();
    throw explain();
  }
  const evaluation = engine.evaluate(prepared, signal);
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(explain());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  // Whichever loses the race must not become an unhandled rejection.
  evaluation.catch(() => undefined);
  aborted.catch(() => undefined);
  try {
    return await Promise.race([evaluation, aborted]);
  } catch (error) {
    throw error instanceof RequestAbortedError && request.timedOut ? explain() : error;
  } finally {
    step.dispose();
    signal.removeEventListener("abort", onAbort);
  }
}
