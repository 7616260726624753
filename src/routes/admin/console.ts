import { readdirSync, readFileSync } from "node:fs";
import type { App } from "../../http/context.js";

/** The console's files (all text): src/console/, read once at start; the listing is the allowlist. */
const CONSOLE_DIR = new URL("../../console/", import.meta.url);

const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

/**
 * The page holds no data and no secret, but it asks for the admin token, so it must not run
 * anyone else's script, be framed, leak its address or be cached. Forms are submitted by
 * script only (form-action 'none'), so a form can never put the token in a URL.
 */
export const CONSOLE_HEADERS = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/** GET /console (the page) and GET /console/<file> (its scripts, style sheet and icon). */
export function registerConsole(app: App): void {
  const page = readFileSync(new URL("index.html", CONSOLE_DIR), "utf8");
  const assets = readAssets();
  app.get("/console", (c) => c.body(page, 200, { ...CONSOLE_HEADERS, "content-type": "text/html; charset=utf-8" }));
  app.get("/console/:file", async (c, next) => {
    const asset = assets.get(c.req.param("file"));
    if (!asset) return next(); // on to the app's 404
    return c.body(asset.body, 200, { ...CONSOLE_HEADERS, "content-type": asset.type });
  });
}

function readAssets(): Map<string, { body: string; type: string }> {
  const assets = new Map<string, { body: string; type: string }>();
  for (const name of readdirSync(CONSOLE_DIR)) {
    const type = CONTENT_TYPES[/^[\w-]+\.(\w+)$/.exec(name)?.[1] ?? ""];
    if (type) assets.set(name, { body: readFileSync(new URL(name, CONSOLE_DIR), "utf8"), type });
  }
  return assets;
}
