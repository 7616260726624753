import { startTestServer } from "./src/testing/server.ts";
const s = await startTestServer();
const post = (body: unknown, headers: Record<string, string> = {}) => fetch(s.url + "/v1/systemone", { method: "POST", headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
let r = await post({ state: "hi", questions: { q: { type: "noul", instructions: "x" } }, model: "jev-latest", extra: 1 });
console.log(r.status, [...r.headers.entries()].filter(([k]) => k.startsWith("x-")), await r.text());
for (const bad of ["not json", {}, { questions: {} }, { questions: { q: { type: "nope", instructions: "x" } } }, { questions: { q: { type: "choice", instructions: "x", criteria: { a: "1" } } } }, { questions: { q: { type: "score", instructions: "x", criteria: { a: "1" } } } }, { questions: { q: { type: "noul" } } }, { questions: { q: { type: "noul", instructions: 5 } } }, { model: "gpt-4", questions: { q: { type: "noul", instructions: "x" } } }, { questions: { "": { type: "noul", instructions: "x" } } }, { questions: { q: { type: "noul", instructions: "x", criteria: { maybe: "x" } } } }, [1], { questions: { q: { type: "choice", instructions: "x", criteria: { "": "1", b: null } } } }]) {
  r = await post(bad);
  console.log(r.status, await r.text());
}
r = await post({ questions: { q: { type: "noul", instructions: "x" } } }, { authorization: "Bearer nope" });
console.log(r.status, await r.text());
r = await fetch(s.url + "/v1/systemone", { method: "POST", body: "{}" });
console.log(r.status, await r.text());
r = await fetch(s.url + "/health"); console.log(r.status, await r.text());
r = await fetch(s.url + "/v1/models"); console.log(r.status, await r.text());
r = await fetch(s.url + "/openapi.json"); console.log(r.status, (await r.text()).slice(0, 300));
r = await fetch(s.url + "/nope"); console.log(r.status, await r.text());
r = await post("x".repeat(300 * 1024)); console.log("big", r.status, await r.text());
await s.close();
console.log(s.logLines.slice(0, 2));
