import type { RemoteEngineOptions } from "../remote/options.js";

/** Engine options for tests: the server at `url`, budgets that stay out of the way. */
export function remoteOptions(url: string, overrides: Partial<RemoteEngineOptions> = {}): RemoteEngineOptions {
  return {
    server: { url, timeoutMs: 10_000 },
    upstreamLimits: { options: 255, levels: 10, questions: 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
    ...overrides,
  };
}
