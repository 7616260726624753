import { StoreError } from "../record-errors.js";
import { MAX_NAME_LENGTH } from "./types.js";

/** Trims a display name and rejects empty or oversized ones with a user-facing error. */
export function normalizeName(raw: unknown, what: string): string {
  const name = typeof raw === "string" ? raw.trim() : "";
  if (name.length === 0) {
    throw new StoreError("invalid_input", `${what} must be a non-empty string`);
  }
  if (name.length > MAX_NAME_LENGTH) {
    throw new StoreError("invalid_input", `${what} must be at most ${MAX_NAME_LENGTH} characters, got ${name.length}`);
  }
  return name;
}
