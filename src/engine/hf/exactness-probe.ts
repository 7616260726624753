import type { Token } from "../label-trie.js";
import type { ExactnessReport } from "../types.js";
import { callJson, type RemoteServer } from "../remote/http.js";
import { readDifference } from "../remote/read-difference.js";
import type { ProbeRead } from "./probe.js";

/** The largest max |Δp| each mode accepts at start-up (docs/concepts/exactness.md). */
export const STRICT_BOUND = 1e-9;
export const TOLERANT_BOUND = 1e-3;

/**
 * vLLM and SGLang batch requests continuously; only their batch-invariant modes (vLLM
 * `VLLM_BATCH_INVARIANT=1`, SGLang `--enable-deterministic-inference`) promise answers
 * independent of the other traffic. This measures what the server does: the same read fresh,
 * again (its prefix cached), and beside other reads in flight; strict accepts rounding noise
 * only, tolerant its bound. What the server says of its own mode is reported beside it.
 */
export async function probeExactness(
  read: ProbeRead,
  tokens: Token[],
  candidates: Token[],
  mode: "strict" | "tolerant",
  bound: number,
  backend: { server: RemoteServer; kind: "vllm" | "sglang" },
  signal?: AbortSignal,
): Promise<ExactnessReport> {
  const base = await read(tokens, candidates, 0);
  const again = await read(tokens, candidates, 0);
  const others = [1, 2, 3].map((k) => [...tokens.slice(0, tokens.length - k * 3), ...tokens.slice(tokens.length - k * 3).reverse()]);
  const [beside] = await Promise.all([read(tokens, candidates, 0), ...others.map((other) => read(other, candidates, 0))]);
  const measured = Math.max(readDifference(base, again), readDifference(base, beside));
  const backendMode = await backendDeterminism(backend.server, backend.kind, signal);
  if (!(measured <= bound)) {
    throw new Error(
      `it answers the same read differently when cached or beside other requests (max |Δp| ${measured.toExponential(2)} > ${bound.toExponential(0)} allowed in ${mode} mode` +
        `${backendMode ? `; it reports ${backendMode}` : ""}): ` +
        (backend.kind === "vllm" ? "start vLLM with VLLM_BATCH_INVARIANT=1" : "start SGLang with --enable-deterministic-inference") +
        ", or serve with JUDGE_EXACTNESS=tolerant and a JUDGE_EXACTNESS_BOUND you accept",
    );
  }
  return { mode, bound, measured, backendMode };
}

/** What the server says of its batch invariance, where it says (best effort: older builds have no such route). */
async function backendDeterminism(server: RemoteServer, kind: "vllm" | "sglang", signal?: AbortSignal): Promise<string | undefined> {
  try {
    if (kind === "sglang") {
      const reply = await callJson(server, "/get_server_info", undefined, signal, "GET");
      const value = (reply.body as Record<string, unknown> | undefined)?.enable_deterministic_inference;
      return reply.status === 200 && typeof value === "boolean" ? `enable_deterministic_inference=${value}` : undefined;
    }
    const reply = await callJson(server, "/server_info", undefined, signal, "GET");
    if (reply.status !== 200) return undefined;
    const value = /"VLLM_BATCH_INVARIANT"\s*:\s*"?([^",}]*)/.exec(JSON.stringify(reply.body))?.[1];
    return `VLLM_BATCH_INVARIANT=${value ?? "0"}`;
  } catch {
    return undefined;
  }
}
