import type { OpenAPIHono } from "@hono/zod-openapi";
import type { JudgingOutcome } from "../services/judging/judge.js";
import type { AdminActor, AuthenticatedKey } from "../services/types.js";

/** What middleware leaves on the request context for the handlers: the key, its account and the account's terms. */
export type Caller = AuthenticatedKey;

export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
    /** On admin routes: which admin credential made the request (adminOnly sets it), for the audit log. */
    admin?: AdminActor;
    /** Set by a route whose clients read errors in another shape (POST /v1/decisions: OpenAI's); ours otherwise. */
    errorFormat?: "openai";
    /** With JUDGE_MODELS: the model asked for, then the one that answered (billing metrics and the access log). */
    model?: string;
    /** Set by a judging route once answered: what the access log counts billing metrics from. */
    judging?: JudgingOutcome;
  };
}

export type App = OpenAPIHono<AppEnv>;
