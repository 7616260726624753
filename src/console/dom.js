/**
 * DOM helpers. Everything on the page that came from the server (account names, notes, plan
 * names) goes in through text nodes and textContent only: nothing is ever parsed as HTML.
 */

export const byId = (id) => document.getElementById(id);

/** An element with optional class, attributes and listeners; string children become text nodes. */
export function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  for (const [event, listener] of Object.entries(options.on ?? {})) node.addEventListener(event, listener);
  node.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}

export const numberCell = (text) => el("td", { className: "number" }, String(text));

/** The API sends exact euro strings; they are shown as they come, never turned into numbers. */
export const money = (euros) => `€${euros}`;

export const when = (iso) => (iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "—");

export function showError(message) {
  const node = byId("error");
  node.textContent = message;
  node.hidden = false;
}

export function showStatus(message) {
  byId("status").textContent = message;
}

export function clearMessages() {
  byId("error").hidden = true;
  byId("error").textContent = "";
  byId("status").textContent = "";
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
