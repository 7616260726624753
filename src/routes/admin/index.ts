import type { App } from "../../http/context.js";
import type { Store } from "../../store/types.js";

export interface AdminDeps {
  /** The console's and admin API's bearer token; without it neither exists. */
  token: string;
  store: Store;
}

/** The admin API (/admin/v1/…) and the console (/console), invisible without the admin token. */
export function registerAdmin(_app: App, _deps: AdminDeps): void {}
