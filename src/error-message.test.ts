import { describe, expect, it } from "vitest";
import { messageOf } from "./error-message.js";

describe("messageOf", () => {
  it("gives an Error's message (a subclass's too) and the text of anything else thrown", () => {
    expect(messageOf(new TypeError("bad input"))).toBe("bad input");
    expect(messageOf(new Error("outer", { cause: new Error("inner") }))).toBe("outer");
    expect(messageOf("a string thrown")).toBe("a string thrown");
    expect(messageOf(42)).toBe("42");
    expect(messageOf(undefined)).toBe("undefined");
    expect(messageOf(null)).toBe("null");
  });
});
