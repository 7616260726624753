import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** GET/POST /admin/v1/plans and PATCH /admin/v1/plans/{plan}; on SQLite and on PostgreSQL, since money and accounts go through them. */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: engine });
  });
  afterAll(async () => {
    await server?.close();
  });

  const valid = { name: "team", requests_per_minute: 120, allowance_questions: 5000, price_per_million: "0.25" };
  const createPlan = (body: unknown) => adminCall(server, "POST", "/admin/v1/plans", { body });
  const updatePlan = (plan: string, body: unknown) => adminCall(server, "PATCH", `/admin/v1/plans/${encodeURIComponent(plan)}`, { body });

  describe("GET /admin/v1/plans", () => {
    it("lists every plan, prices in micro-euros and as exact euro strings", async () => {
      const response = await adminCall(server, "GET", "/admin/v1/plans");
      expect(response.status, show(response)).toBe(200);
      const byName = Object.fromEntries(response.json.plans.map((plan: any) => [plan.name, plan]));
      expect(byName.default, show(response)).toMatchObject({
        id: "plan_default",
        requests_per_minute: 60,
        allowance_questions: 1000,
        price_per_million_micro: 50_000,
        price_per_million: "0.05",
      });
      expect(byName["test unlimited"], show(response)).toBeTruthy();
    });
  });

  describe("POST /admin/v1/plans", () => {
    it("creates a plan (201) that the list then shows", async () => {
      const response = await createPlan({ ...valid, name: "starter", price_per_million: "0.000001" });
      expect(response.status, show(response)).toBe(201);
      expect(response.json, show(response)).toMatchObject({
        name: "starter",
        requests_per_minute: 120,
        allowance_questions: 5000,
        price_per_million_micro: 1,
        price_per_million: "0.000001",
      });
      expect(response.json.id, show(response)).toMatch(/^plan_/);
      const list = await adminCall(server, "GET", "/admin/v1/plans");
      expect(
        list.json.plans.map((plan: any) => plan.id),
        show(list),
      ).toContain(response.json.id);
    });

    it("accepts a free plan: no allowance, price 0", async () => {
      const response = await createPlan({ ...valid, name: "free", allowance_questions: 0, price_per_million: "0" });
      expect(response.status, show(response)).toBe(201);
      expect(response.json.price_per_million, show(response)).toBe("0.00");
    });

    it("answers 409 plan_exists for a name already taken", async () => {
      expect((await createPlan({ ...valid, name: "twice" })).status).toBe(201);
      expectErrorResponse(await createPlan({ ...valid, name: "twice" }), 409, "plan_exists");
      expectErrorResponse(await createPlan({ ...valid, name: "  twice " }), 409, "plan_exists");
    });

    const refused: [what: string, body: unknown][] = [
      ["a missing name", { ...valid, name: undefined }],
      ["a blank name", { ...valid, name: "   " }],
      ["a name over 200 characters", { ...valid, name: "n".repeat(201) }],
      ["a price as a JSON number", { ...valid, price_per_million: 0.25 }],
      ["a negative price", { ...valid, price_per_million: "-0.25" }],
      ["a price with 7 decimals", { ...valid, price_per_million: "0.0000001" }],
      ["a price in exponent form", { ...valid, price_per_million: "1e3" }],
      ["zero requests per minute", { ...valid, requests_per_minute: 0 }],
      ["a fractional allowance", { ...valid, allowance_questions: 1.5 }],
      ["a negative allowance", { ...valid, allowance_questions: -1 }],
      ["an allowance as a string", { ...valid, allowance_questions: "1000" }],
      ["requests per minute over the limit", { ...valid, requests_per_minute: 1_000_001 }],
      ["an unknown field", { ...valid, price_per_million_micro: 250_000 }],
      ["not an object", [valid]],
      ["malformed JSON", "{"],
    ];
    for (const [what, body] of refused) {
      it(`refuses ${what} with 400`, async () => {
        const before = (await server.store.plans.list()).length;
        const response = await createPlan(body);
        expectErrorResponse(response, 400);
        expect((await server.store.plans.list()).length, `a plan was created\n${show(response)}`).toBe(before);
      });
    }
  });

  describe("PATCH /admin/v1/plans/{plan}", () => {
    it("changes only the fields sent, by plan name or id", async () => {
      const created = await createPlan({ ...valid, name: "to edit" });
      const byName = await updatePlan("to edit", { requests_per_minute: 7 });
      expect(byName.status, show(byName)).toBe(200);
      expect(byName.json, show(byName)).toMatchObject({ ...valid, name: "to edit", requests_per_minute: 7 });
      const byId = await updatePlan(created.json.id, { name: "edited", price_per_million: "1.5" });
      expect(byId.json, show(byId)).toMatchObject({
        id: created.json.id,
        name: "edited",
        requests_per_minute: 7,
        price_per_million_micro: 1_500_000,
        price_per_million: "1.50",
      });
      expect(await server.store.plans.get(created.json.id), "the stored plan").toMatchObject({
        name: "edited",
        requestsPerMinute: 7,
        pricePerMillion: 1_500_000,
      });
    });

    it("answers 404 plan_not_found for an unknown plan", async () => {
      expectErrorResponse(await updatePlan("no such plan", { requests_per_minute: 1 }), 404, "plan_not_found");
    });

    it("answers 409 plan_exists when renaming to another plan's name", async () => {
      await createPlan({ ...valid, name: "rename me" });
      expectErrorResponse(await updatePlan("rename me", { name: "default" }), 409, "plan_exists");
    });

    it("refuses invalid changes with 400 and keeps the plan as it was", async () => {
      await createPlan({ ...valid, name: "keep me" });
      for (const body of [{ price_per_million: 1 }, { requests_per_minute: -5 }, { name: "" }, { allowance: 5 }, "nope"]) {
        const response = await updatePlan("keep me", body);
        expectErrorResponse(response, 400);
        expect(await server.store.plans.get("keep me"), show(response)).toMatchObject({ requestsPerMinute: 120, pricePerMillion: 250_000 });
      }
    });
  });
});
