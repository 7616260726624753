/**
 * The admin API client. The token lives in this tab's sessionStorage only: never in the URL
 * (it would reach logs and history) and never in localStorage (it would outlive the session).
 */

const TOKEN_KEY = "judge.adminToken";

export const adminToken = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class AdminApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls admin/v1/<path> (relative, so the console also works behind a path prefix). */
export async function adminApi(method, path, body) {
  const headers = { authorization: `Bearer ${adminToken.get() ?? ""}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`admin/v1/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
  });
  const text = await response.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (!response.ok) {
    throw new AdminApiError(response.status, data?.code ?? "http_error", data?.error ?? `HTTP ${response.status}`);
  }
  return data;
}

/**
 * Downloads admin/v1/<path> (a CSV) as a file: fetched with the token (a plain link could not
 * send it), then saved under the name the server gives. Resolves to that name.
 */
export async function adminDownload(path) {
  const response = await fetch(`admin/v1/${path}`, {
    headers: { authorization: `Bearer ${adminToken.get() ?? ""}` },
    cache: "no-store",
    credentials: "omit",
  });
  if (!response.ok) {
    let data;
    try {
      data = await response.json();
    } catch {
      data = undefined;
    }
    throw new AdminApiError(response.status, data?.code ?? "http_error", data?.error ?? `HTTP ${response.status}`);
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? "export.csv";
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement("a"), { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has handed the blob to the download.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

/**
 * GET /health (public, no token): the model, the engine and the database as the load balancer
 * sees them. A 503 is an answer here, not an error: its body says what is down.
 */
export async function serviceHealth() {
  const response = await fetch("health", { cache: "no-store", credentials: "omit" });
  let body;
  try {
    body = await response.json();
  } catch {
    body = { status: "unavailable", error: `GET /health answered ${response.status} without JSON` };
  }
  return body;
}

/** A path with each interpolated value URL-encoded: ids and plan names go in as data. */
export function path(strings, ...values) {
  return strings.reduce((out, part, i) => out + part + (i < values.length ? encodeURIComponent(values[i]) : ""), "");
}
