import { describe, expect, it } from "vitest";
import type { EngineResult, PreparedJudgment } from "../../engine/types.js";
import { billingState, judgmentBody, useBillingServers } from "../../testing/billing-http.js";
import { faultEngine } from "../../testing/fault-engines.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { STORE_ENGINES } from "../../testing/databases.js";

/**
 * An engine that cannot count before asking (the gateway) holds an upper bound and settles at
 * what its upstream read, never above the hold. 1 µ€ per token makes amounts read as tokens.
 */
const PRICE = { allowanceQuestions: 0, pricePerMillion: 1_000_000 };

function upperBoundEngine(bound: number, read: number) {
  const engine = faultEngine({
    prepare: (): PreparedJudgment => ({ inputTokens: bound, inputTokensExact: false }),
    evaluate: async (): Promise<EngineResult> => ({ labelLogProbs: [[Math.log(0.3), Math.log(0.7)]], inputTokens: read, timingMs: 1 }),
  });
  return { engine };
}

describe.each(STORE_ENGINES)("on %s: a hold for an upper bound", (storeEngine) => {
  const billing = useBillingServers({ lazy: true, store: storeEngine });

  it("is settled at the tokens actually read, and usage reports them", async () => {
    const { engine } = upperBoundEngine(1_000, 300);
    const s = await billing.server({ plan: PRICE, balanceMicro: 5_000, engine });
    const response = await postJudgment(s, judgmentBody(1));
    expect(response.status, show(response)).toBe(200);
    expect((response.json as { usage: { input_tokens: number } }).usage.input_tokens, show(response)).toBe(300);
    const state = await billingState(s, s.accountId);
    expect(state.balanceMicro, JSON.stringify(state)).toBe(4_700);
    expect(state.reservedMicro, JSON.stringify(state)).toBe(0);
    expect(state.entries.at(-1), JSON.stringify(state)).toMatchObject({ kind: "charge", amountMicro: -300, inputTokens: 300 });
    expect(response.headers.get("x-balance-remaining"), show(response)).toBe("0.0047");
  });

  it("never charges more than the hold, whatever the upstream says it read", async () => {
    const { engine } = upperBoundEngine(1_000, 9_999);
    const s = await billing.server({ plan: PRICE, balanceMicro: 5_000, engine });
    const response = await postJudgment(s, judgmentBody(1));
    expect(response.status, show(response)).toBe(200);
    expect((response.json as { usage: { input_tokens: number } }).usage.input_tokens, show(response)).toBe(1_000);
    const state = await billingState(s, s.accountId);
    expect(state.balanceMicro, JSON.stringify(state)).toBe(4_000);
    expect(state.reservedMicro, JSON.stringify(state)).toBe(0);
  });

  it("needs the whole upper bound available: a balance below it gets 402 and nothing is charged", async () => {
    const { engine } = upperBoundEngine(1_000, 10);
    const s = await billing.server({ plan: PRICE, balanceMicro: 999, engine });
    const response = await postJudgment(s, judgmentBody(1));
    expect(response.status, show(response)).toBe(402);
    const state = await billingState(s, s.accountId);
    expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: 999, reservedMicro: 0, entries: [expect.objectContaining({ kind: "top_up" })] });
  });
});
