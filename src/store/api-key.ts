import { createHash } from "node:crypto";
import { randomBase62 } from "./random.js";

/**
 * API key format: `tjs_` followed by 40 base62 characters (~238 bits of entropy).
 * The fixed `tjs_` marker lets secret scanners and humans recognise a leaked key.
 */
export const API_KEY_MARKER = "tjs_";
export const API_KEY_RANDOM_LENGTH = 40;
/** Characters of the key shown in listings (`tjs_` + 8): enough to tell keys apart, useless to an attacker. */
export const DISPLAY_PREFIX_LENGTH = 12;

const API_KEY_PATTERN = /^tjs_[0-9A-Za-z]{40}$/;

export function generateApiKey(): string {
  return API_KEY_MARKER + randomBase62(API_KEY_RANDOM_LENGTH);
}

/** Cheap syntactic check so malformed input is rejected without touching the database. */
export function isWellFormedApiKey(value: unknown): value is string {
  return typeof value === "string" && API_KEY_PATTERN.test(value);
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

/**
 * The only form in which a key is stored: SHA-256, hex.
 *
 * A fast unsalted hash is the right tool here, unlike for passwords. Keys are 238 random bits,
 * so neither brute force nor precomputed tables can invert the hash, and a salt or a slow KDF
 * (bcrypt, scrypt, argon2) would add no security — only latency on every authenticated request.
 * Being deterministic also lets us look a key up by its hash through a unique index; timing of
 * that lookup reveals at most something about the hash, which an attacker cannot turn into a key.
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}
