import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context, Handler } from "hono";
import { ApiError } from "../../errors.js";
import { authenticate } from "../../http/authenticate.js";
import type { App, AppEnv } from "../../http/context.js";
import { rateLimit } from "../../http/rate-limit.js";
import { parseJson, readBodyBytes } from "../../http/read-body.js";
import { parseTaskJson, parseTaskJsonl, TASK_LIMITS } from "../../services/tasks/definition.js";
import type { Task } from "../../services/tasks/service.js";
import type { JudgingRouteDeps } from "../judging/request-response.js";
import { modelChoice, pickModel } from "../../services/served-models/pick.js";
import { MODEL_ALIASES } from "../systemone/route.js";
import { errorResponses, rateLimitHeaders, requestIdHeader, retryAfterHeader } from "../shared.schema.js";
import { CreateTaskBody, FitBody, FitView, fitView, TaskView, taskView, VersionView, versionView } from "./schema.js";

/**
 * /v1/tasks…: a tenant's tasks with its own API key (docs/interface/tasks.md). Create (JSON, or
 * JSONL in `judge eval`'s dataset format with `?name=`), list, show, delete; start a fit (202,
 * or 402 when its first example cannot be paid) and follow it; read each version and its report.
 * Another account's task is a 404, as if it did not exist.
 */

const security = [{ bearerAuth: [] }];
const TaskParams = z.object({ task: z.string().openapi({ description: "The task's id (task_…) or name." }) });
// Every authenticated answer carries the rate-limit headers (a 401 comes before the rate limit).
const headers = { ...requestIdHeader, ...rateLimitHeaders };
const json = <S extends z.ZodType>(schema: S, description: string) => ({ description, headers, content: { "application/json": { schema } } });
type Status = 400 | 401 | 402 | 404 | 409 | 413 | 415 | 429 | 502 | 503;
const NOT_FOUND = { 404: "No task of that id or name in the key's account, or no such fit or version of it (task_not_found)." };
/** The errors every route has, and `extra`; the routes under /v1/tasks/{task} pass NOT_FOUND. */
const errors = (extra: Partial<Record<Status, string>> = {}) => {
  const descriptions = {
    401: "Missing, invalid or revoked API key, a key past its expiry, or a disabled account.",
    429: "The key's or plan's requests per minute are used up; retry after Retry-After seconds.",
    502: "The database or the model is unavailable; nothing was charged.",
    ...extra,
  } as Record<Status, string>;
  const byStatus = Object.fromEntries(
    Object.keys(descriptions).map((status) => [
      status,
      status === "401" ? {} : status === "429" ? { ...rateLimitHeaders, ...retryAfterHeader } : rateLimitHeaders,
    ]),
  );
  return errorResponses(descriptions, byStatus);
};
const MB = TASK_LIMITS.maxUploadBytes / 1_048_576;

const routes = {
  create: createRoute({
    method: "post",
    path: "/v1/tasks",
    summary: "Create a task from its questions and labelled examples",
    security,
    request: {
      query: z.object({ name: z.string().optional().openapi({ description: "JSONL bodies only: the task's name (a JSON body names it in `name`)." }) }),
      body: {
        required: true,
        content: {
          "application/json": { schema: CreateTaskBody },
          "application/jsonl": {
            schema: z.string().openapi({
              description:
                "One example a line, `{ id?, state, questions, gold }` as `judge eval` reads them (also sent as application/x-ndjson); needs ?name=.",
            }),
          },
        },
      },
    },
    responses: {
      201: json(TaskView, "The task, not yet fitted."),
      ...errors({
        400: "A bad task or example (invalid_request: the message names the example, or line, and the field), or a body that is not JSON (invalid_json).",
        409: "The account has a task of that name (task_exists), or JUDGE_TASKS_PER_ACCOUNT tasks already (task_quota_exceeded).",
        413: `The body is over ${MB} MB (body_too_large).`,
        415: "The body has a Content-Encoding other than identity (unsupported_content_encoding).",
      }),
    },
  }),
  list: createRoute({
    method: "get",
    path: "/v1/tasks",
    summary: "The account's tasks",
    security,
    responses: { 200: json(z.object({ tasks: z.array(TaskView) }), "Oldest first."), ...errors() },
  }),
  get: createRoute({
    method: "get",
    path: "/v1/tasks/{task}",
    summary: "One task",
    security,
    request: { params: TaskParams },
    responses: { 200: json(TaskView, "The task."), ...errors(NOT_FOUND) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/v1/tasks/{task}",
    summary: "Delete a task with its examples, fits and versions",
    security,
    request: { params: TaskParams },
    responses: { 204: { description: "Deleted.", headers }, ...errors({ ...NOT_FOUND, 409: "A fit of the task is running (fit_in_progress)." }) },
  }),
  fit: createRoute({
    method: "post",
    path: "/v1/tasks/{task}/fits",
    summary: "Fit the task on a model: every example read and billed like a request, then a head per question",
    security,
    request: { params: TaskParams, body: { required: false, content: { "application/json": { schema: FitBody } } } },
    responses: {
      202: {
        ...json(FitView, "Started: the first example was read and paid; the rest are read in the background. Follow the fit at its Location."),
        headers: { ...headers, location: { description: "The fit's URL: /v1/tasks/{task id}/fits/{fit id}.", schema: { type: "string" as const } } },
      },
      ...errors({
        ...NOT_FOUND,
        400: "A bad body, an unknown model or one the plan may not use (invalid_request), or a task with no examples.",
        402: "The first example cannot be paid (insufficient_funds, key_budget_exhausted): nothing was charged and no fit was started.",
        409: "A fit of this task is running (fit_in_progress).",
        413: "The body is over 16 KB (body_too_large).",
        415: "The body has a Content-Encoding other than identity (unsupported_content_encoding).",
        503: "This instance is stopping (service_unavailable): ask again, another instance will take the fit.",
      }),
    },
  }),
  getFit: createRoute({
    method: "get",
    path: "/v1/tasks/{task}/fits/{fit}",
    summary: "A fit's progress",
    security,
    request: { params: TaskParams.extend({ fit: z.string() }) },
    responses: { 200: json(FitView, "The fit."), ...errors(NOT_FOUND) },
  }),
  version: createRoute({
    method: "get",
    path: "/v1/tasks/{task}/versions/{version}",
    summary: "One version: its binding and its held-out report",
    security,
    request: { params: TaskParams.extend({ version: z.string() }) },
    responses: { 200: json(VersionView, "The version."), ...errors(NOT_FOUND) },
  }),
};

export function registerTasks(app: App, deps: JudgingRouteDeps): void {
  const { tasks } = deps;
  const add = (route: RouteConfig & { getRoutingPath(): string }, handler: Handler<AppEnv>) => {
    app.openAPIRegistry.registerPath(route);
    app.on(route.method.toUpperCase(), route.getRoutingPath(), authenticate(deps.keys), rateLimit(deps.limits), handler);
  };
  const account = (c: Context<AppEnv>) => c.get("caller").accountId;
  const taskOr404 = async (c: Context<AppEnv>): Promise<Task> => {
    const task = await tasks.get(account(c), c.req.param("task")!);
    if (!task) throw new ApiError("task_not_found", `no task ${JSON.stringify(c.req.param("task"))} in this account`);
    return task;
  };
  const shown = async (task: Task) => {
    const [versions, fits] = await Promise.all([tasks.versions(task), tasks.fits(task)]);
    return taskView(task, versions, fits[0]);
  };

  add(routes.create, async (c) => {
    const bytes = await readBodyBytes(c, TASK_LIMITS.maxUploadBytes);
    const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
    const input = /^application\/(jsonl|x-ndjson|x-jsonlines)$/.test(type)
      ? parseTaskJsonl(c.req.query("name"), jsonlText(bytes), {}, deps.maxQuestions)
      : parseTaskJson(parseJson(bytes).value, deps.maxQuestions);
    const task = await tasks.create(account(c), input);
    return c.json(await shown(task), 201);
  });
  add(routes.list, async (c) => {
    const records = await tasks.list(account(c));
    // A task deleted meanwhile is left out (it was listed, then gone).
    const found = await Promise.all(records.map((record) => tasks.get(account(c), record.id)));
    const all = await Promise.all(found.filter((task): task is Task => task !== undefined).map(shown));
    return c.json({ tasks: all }, 200);
  });
  add(routes.get, async (c) => c.json(await shown(await taskOr404(c)), 200));
  add(routes.remove, async (c) => {
    const task = await taskOr404(c);
    await tasks.remove(account(c), task.record.id);
    return c.body(null, 204);
  });
  add(routes.fit, async (c) => {
    const task = await taskOr404(c);
    const bytes = await readBodyBytes(c, 16 * 1024);
    const parsed = FitBody.safeParse(bytes.length === 0 ? {} : parseJson(bytes).value);
    if (!parsed.success) throw new ApiError("invalid_request", parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
    const picked = pickModel(deps.models, parsed.data.model, MODEL_ALIASES, c.get("caller").terms.allowedModels);
    if (!("model" in picked)) throw new ApiError(picked.code, picked.message);
    const fit = await tasks.fit(task, modelChoice(picked.model, deps.temperaturesOf), c.get("caller"), { seed: parsed.data.seed, heads: parsed.data.heads });
    return c.json(fitView(fit), 202, { location: `/v1/tasks/${task.record.id}/fits/${fit.id}` });
  });
  add(routes.getFit, async (c) => {
    const fit = await tasks.getFit(await taskOr404(c), c.req.param("fit")!);
    if (!fit) throw new ApiError("task_not_found", `no fit ${JSON.stringify(c.req.param("fit"))} of this task`);
    return c.json(fitView(fit), 200);
  });
  add(routes.version, async (c) => {
    const task = await taskOr404(c);
    const number = Number(c.req.param("version"));
    const version = Number.isSafeInteger(number) && number > 0 ? await tasks.version(task, number) : undefined;
    if (!version) throw new ApiError("task_not_found", `no version ${JSON.stringify(c.req.param("version"))} of this task`);
    return c.json(versionView(version), 200);
  });
}

/** UTF-8 text without NUL (refused everywhere, as in JSON bodies). */
function jsonlText(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "the body is not valid UTF-8");
  }
  if (text.includes("\u0000") || /\\u0000/i.test(text)) throw new ApiError("invalid_request", "the body holds a NUL character (U+0000)");
  return text;
}
