import type { OpenAPIHono } from "@hono/zod-openapi";

/** What middleware leaves on the request context for the handlers. */
export interface Caller {
  keyId: string;
  accountId: string;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
  };
}

export type App = OpenAPIHono<AppEnv>;
