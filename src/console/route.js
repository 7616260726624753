/**
 * Where the console is: the part of the address after #, so every view has an address that
 * survives a reload and the browser's Back button. Nothing secret ever goes in it.
 *   #/overview   #/accounts?q=acme&offset=25   #/accounts/<id>   #/accounts/<id>/tasks/<task id>   #/plans
 *   #/audit?account=<id>&before=<entry id>
 */

export function currentRoute() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query);
  if (parts[0] === "accounts" && parts[1] && parts[2] === "tasks" && parts[3]) return { view: "task", id: parts[1], task: parts[3] };
  if (parts[0] === "accounts" && parts[1]) return { view: "account", id: parts[1] };
  if (parts[0] === "accounts") {
    const offset = Number(params.get("offset"));
    return { view: "accounts", search: params.get("q") ?? "", offset: Number.isSafeInteger(offset) && offset > 0 ? offset : 0 };
  }
  if (parts[0] === "plans") return { view: "plans" };
  if (parts[0] === "audit") {
    const before = Number(params.get("before"));
    return { view: "audit", account: params.get("account") ?? "", before: Number.isSafeInteger(before) && before > 0 ? before : undefined };
  }
  return { view: "overview" };
}

export const accountLink = (id) => `#/accounts/${encodeURIComponent(id)}`;

export const taskLink = (accountId, taskId) => `${accountLink(accountId)}/tasks/${encodeURIComponent(taskId)}`;

export function accountsLink({ search = "", offset = 0 } = {}) {
  const params = new URLSearchParams();
  if (search) params.set("q", search);
  if (offset > 0) params.set("offset", String(offset));
  const query = params.toString();
  return query ? `#/accounts?${query}` : "#/accounts";
}

export function auditLink({ account = "", before } = {}) {
  const params = new URLSearchParams();
  if (account) params.set("account", account);
  if (before) params.set("before", String(before));
  const query = params.toString();
  return query ? `#/audit?${query}` : "#/audit";
}
