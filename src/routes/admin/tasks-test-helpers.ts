import { expect } from "vitest";
import { show, type Caller } from "../../testing/http-client.js";
import { settledFit, taskCall } from "../tasks/test-helpers.js";

/** A tenant's task for the admin API's and the console's tests, made and fitted through the tenant API with the account's key. */

/** Two questions (noul, choice), so a report has more than one; six examples, each class seen. */
export function supportTask(name: string, n = 6) {
  return {
    name,
    questions: {
      angry: { type: "noul", instructions: "The customer is angry." },
      team: { type: "choice", instructions: "Which team should answer?", criteria: { billing: "money matters", tech: "bugs and outages" } },
    },
    examples: Array.from({ length: n }, (_, i) => ({
      state: i % 2 === 0 ? `I was charged twice (${i}), this is outrageous!` : `The app crashes when I log in (${i}).`,
      gold: { angry: i % 2 === 0, team: i % 2 === 0 ? "billing" : "tech" },
    })),
  };
}

/** Creates the task (201); returns its id. */
export async function createTask(server: Caller, name: string, n?: number): Promise<string> {
  const created = await taskCall(server, "POST", "/v1/tasks", supportTask(name, n));
  expect(created.status, show(created)).toBe(201);
  return created.json.id as string;
}

/** Starts a fit of the task (202); returns the fit's URL. */
export async function startFit(server: Caller, task: string): Promise<string> {
  const started = await taskCall(server, "POST", `/v1/tasks/${task}/fits`, { seed: 3 });
  expect(started.status, show(started)).toBe(202);
  return started.headers.get("location")!;
}

/** A task created and fitted to the end: its id, once its first version exists. */
export async function fittedTask(server: Caller, name: string): Promise<string> {
  const task = await createTask(server, name);
  const fit = await settledFit(server, await startFit(server, task));
  expect(fit.json.state, show(fit)).toBe("succeeded");
  return task;
}
