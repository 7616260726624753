import {
  EngineFailedError,
  EngineUnavailableError,
  type EngineResult,
  type EngineStatus,
  type JudgmentEngine,
  type PreparedJudgment,
} from "../engine/types.js";

/**
 * Engines for fault injection only: one that is loading, has failed, throws while evaluating or
 * is unavailable. Everything else in the route tests runs the real engine.
 */
export interface FaultEngineOptions {
  modelId?: string;
  status?: EngineStatus;
  prepare?: () => PreparedJudgment;
  evaluate?: () => Promise<EngineResult>;
}

export function faultEngine(options: FaultEngineOptions): JudgmentEngine {
  return {
    modelId: options.modelId ?? "fault-model",
    description: { kind: "llama", backend: "test" },
    status: () => options.status ?? { state: "ready" },
    prepare: async () => (options.prepare ? options.prepare() : { inputTokens: 1, inputTokensExact: true }),
    evaluate: options.evaluate ?? (() => Promise.reject(new Error("fault engine: evaluate not configured"))),
    close: async () => undefined,
  };
}

/** Ready, prepares fine, then fails while evaluating. */
export const evaluateFailsEngine = (message = "the model failed while evaluating: injected fault") =>
  faultEngine({ evaluate: () => Promise.reject(new EngineFailedError(message)) });

/** Reports ready but the model is not there when a request arrives. */
export const unavailableEngine = (message = "the model is not available (injected)") =>
  faultEngine({
    prepare: () => {
      throw new EngineUnavailableError(message);
    },
  });

export const loadingEngine = (detail = "loading the model") => faultEngine({ status: { state: "loading", detail } });

export const failedEngine = (detail = "model failed to load: injected fault") => faultEngine({ status: { state: "failed", detail } });
