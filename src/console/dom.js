/**
 * DOM helpers. Everything on the page that came from the server (account names, notes, plan
 * names) goes in through text nodes, textContent and setAttribute only: nothing is ever parsed as HTML.
 */

export const byId = (id) => document.getElementById(id);
export const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);

/** An element with optional class, attributes and listeners; string children become text nodes. */
export function el(tag, options = {}, ...children) {
  return fill(document.createElement(tag), options, children);
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** The same for SVG elements (built in the SVG namespace, so the browser draws them). */
export function svg(tag, options = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), options, children);
}

function fill(node, options, children) {
  if (options.className) node.setAttribute("class", options.className);
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, String(value));
  for (const [event, listener] of Object.entries(options.on ?? {})) node.addEventListener(event, listener);
  node.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}

export const numberCell = (text) => el("td", { className: "number" }, typeof text === "number" ? count(text) : String(text));

/** Whole numbers with thousands separators: 12,345. */
export const count = (n) => n.toLocaleString("en-US");

/** The API sends exact euro strings; they are shown as they come, never turned into numbers. */
export const money = (euros) => `€${euros}`;

export const when = (iso) => (iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "—");

/**
 * The same time for a table cell: the day and the time each kept whole, so that a narrow column
 * breaks the line between them and nowhere else. The text is when()'s.
 */
export function whenParts(iso) {
  if (!iso) return "—";
  const text = when(iso);
  return [el("span", { className: "nowrap" }, text.slice(0, 10)), " ", el("span", { className: "nowrap" }, text.slice(11))];
}

/** "1 request", "2 requests", "1 mismatch", "3 mismatches": the count with thousands separators. */
export const plural = (n, noun, ending = "s") => `${count(n)} ${noun}${n === 1 ? "" : ending}`;

/**
 * Micro-euros (an integer, as the audit log records amounts) shown as money() shows the API's
 * euro strings: exact, the digits the server's formatEuros (src/money/money.ts) writes.
 */
export function microEuros(micros) {
  const value = BigInt(micros);
  const magnitude = value < 0n ? -value : value;
  const fraction = (magnitude % 1_000_000n)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return money(`${value < 0n ? "-" : ""}${magnitude / 1_000_000n}.${fraction}`);
}

/** "31 Jan" from an ISO date or time, in UTC like every time the API sends. */
export const shortDate = (iso) => new Date(iso).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });

/** A <dl> filled with [term, value, testid?] rows. */
export function setFacts(dl, rows) {
  dl.replaceChildren(...rows.flatMap(([term, value, testId]) => [el("dt", {}, term), el("dd", testId ? { attrs: { "data-testid": testId } } : {}, value)]));
}

/**
 * A period's usage in words. A plan without allowance bills every question to the balance:
 * "0 of 0 (100%)" would say the opposite of what happens.
 */
export function usageText(usage) {
  if (usage.allowance === 0) return "No allowance: every question is paid from the balance";
  const inFlight = usage.reserved > 0 ? ` + ${count(usage.reserved)} in flight` : "";
  return `${count(usage.used)}${inFlight} of ${count(usage.allowance)} questions (${usage.percent_used}%)`;
}

/** A <meter> of the allowance used, or nothing for a plan without allowance. */
export function usageMeter(usage) {
  if (usage.allowance === 0) return null;
  const label = `${usage.percent_used}% of the allowance used`;
  return el("meter", {
    attrs: {
      min: 0,
      max: usage.allowance,
      value: Math.min(usage.used + usage.reserved, usage.allowance),
      high: usage.allowance * 0.9,
      "aria-label": label,
      title: label,
    },
  });
}

/**
 * Messages appear beside what caused them: `place` is the form or section an action belongs
 * to; its message lines are made on first use, at its end.
 */
function messageLine(place, kind) {
  let line = place.querySelector(`:scope > .message.${kind}`);
  if (!line) {
    line = el("p", { className: `message ${kind}`, attrs: kind === "error" ? { role: "alert" } : { role: "status" } });
    line.id = `${place.id || "place"}-${kind}`;
    place.append(line);
    // Screen readers read the error with the form's fields.
    if (kind === "error") for (const field of place.querySelectorAll("input, select")) field.setAttribute("aria-describedby", line.id);
  }
  return line;
}

export function showError(message, place = byId("error")) {
  const line = place.id === "error" ? place : messageLine(place, "error");
  line.textContent = message;
  line.hidden = false;
}

export function showNote(message, place) {
  const line = messageLine(place, "note");
  line.textContent = message;
  line.hidden = false;
}

export function clearMessages() {
  for (const line of document.querySelectorAll("#error, .message")) {
    line.hidden = true;
    line.textContent = "";
  }
}

/** Fills every plan picker, keeping each one's selection when that plan still exists. */
export function fillPlanSelects(plans) {
  for (const select of document.querySelectorAll("select[data-plan-select]")) {
    const selected = select.value;
    select.replaceChildren(...plans.map((plan) => el("option", { attrs: { value: plan.id } }, plan.name)));
    if (plans.some((plan) => plan.id === selected)) select.value = selected;
    else {
      const fallback = plans.find((plan) => plan.name === "default") ?? plans[0];
      if (fallback) select.value = fallback.id;
    }
  }
}

/** "12" → 12; anything but digits is refused here, with the field's label in the message. */
export function wholeNumber(input, label) {
  const text = input.value.trim();
  if (!/^\d{1,13}$/.test(text)) throw new Error(`${label} must be a whole number.`);
  return Number(text);
}
