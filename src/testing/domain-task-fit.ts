import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { settledFit, taskCall } from "../routes/tasks/test-helpers.js";
import { postJudgment, show } from "./http-client.js";
import { startTestServer } from "./server.js";

/**
 * For the real-engine tests of level 2 on a remote engine: a server configured from a models file
 * naming the one model (`entry`, as an operator writes it, its features server included) fits a
 * task of 15 dev examples of each domain with level 2 only, and a request naming the task is
 * answered through it. Asserts the fit read every example, that level 2 was fitted (not left
 * out), beats the prior's held-out accuracy by 20 points and was chosen, and that a plain phone
 * sentence is answered "phone" through the level 2 head. Prints the held-out figures.
 */
export async function expectDomainTaskOnLevel2(label: string, entry: Record<string, unknown>): Promise<void> {
  const models = path.join(mkdtempSync(path.join(tmpdir(), "judge-level2-")), "models.json");
  writeFileSync(models, JSON.stringify({ models: [{ ...entry, default: true }] }));
  const server = await startTestServer({ env: { JUDGE_MODELS: models } });
  try {
    // A remote engine's start-up probe reads its server for a while (tens of seconds on 2 cores).
    for (const until = Date.now() + 300_000; (await server.engine.status()).state === "loading" && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(await server.engine.status()).toEqual({ state: "ready" });
    const lines = readFileSync(new URL("../../datasets/dev.jsonl", import.meta.url), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const byDomain = (domain: string) => lines.filter((l) => l.gold.domain === domain).slice(0, 15);
    const picked = [...byDomain("phone"), ...byDomain("movie"), ...byDomain("restaurant")];
    const question = picked[0].questions.domain;
    const body = { name: "domain", questions: { domain: question }, examples: picked.map((l) => ({ state: l.state, gold: { domain: l.gold.domain } })) };
    expect((await taskCall(server, "POST", "/v1/tasks", body)).status).toBe(201);
    const started = await taskCall(server, "POST", "/v1/tasks/domain/fits", { seed: 1, heads: ["level2"] });
    expect(started.status, show(started)).toBe(202);
    const done = await settledFit(server, started.headers.get("location")!, 900_000);
    expect(done.json, show(done)).toMatchObject({ state: "succeeded", version: 1, examples_read: 45 });
    const report = (await taskCall(server, "GET", "/v1/tasks/domain/versions/1")).json.report.questions.domain;
    console.log(
      `level 2 through ${label}, 45 examples, held out: accuracy ${report.level2?.accuracy} (prior ${report.prior.accuracy}), NLL ${report.level2?.nll} (prior ${report.prior.nll})`,
    );
    expect(report.level2Omitted, JSON.stringify(report)).toBeUndefined();
    expect(report.level2.accuracy, JSON.stringify(report)).toBeGreaterThanOrEqual(report.prior.accuracy + 0.2);
    expect(report.chosen).toBe("level2");
    const asked = await postJudgment(server, { state: "The battery died after a week.", questions: { domain: question }, x_task: "domain" });
    expect(asked.status, show(asked)).toBe(200);
    console.log(`"The battery died after a week." through level 2 on ${label}: ${JSON.stringify(asked.json.answers.domain)}`);
    expect(asked.json.answers.domain, show(asked)).toMatchObject({ choice: "phone", x_task: { version: 1, head: "level2" } });
  } finally {
    await server.close();
  }
}
