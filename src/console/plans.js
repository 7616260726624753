import { adminApi, path } from "./api.js";
import { byId, count, el, money, numberCell, wholeNumber } from "./dom.js";

/** The plans table and one form that creates a plan, or edits the one picked with "Edit". */

let editing = null;

export async function drawPlans() {
  const { plans } = await adminApi("GET", "plans");
  byId("plan-rows").replaceChildren(...plans.map(planRow));
}

function planRow(plan) {
  const edit = el("button", { attrs: { type: "button", "aria-label": `Edit plan ${plan.name}` }, on: { click: () => startEditing(plan) } }, "Edit");
  return el(
    "tr",
    {},
    el("td", { className: "text" }, plan.name),
    numberCell(plan.requests_per_minute),
    numberCell(plan.allowance_questions === 0 ? "none (pay per token)" : count(plan.allowance_questions)),
    numberCell(money(plan.price_per_million)),
    el("td", {}, edit),
  );
}

function startEditing(plan) {
  editing = plan;
  byId("plan-form-heading").textContent = `Edit plan ${plan.name}`;
  byId("plan-name").value = plan.name;
  byId("plan-rpm").value = String(plan.requests_per_minute);
  byId("plan-allowance").value = String(plan.allowance_questions);
  byId("plan-price").value = plan.price_per_million;
  byId("plan-submit").textContent = "Save plan";
  byId("plan-cancel").hidden = false;
  byId("plan-name").focus();
}

function stopEditing() {
  editing = null;
  byId("plan-form").reset();
  byId("plan-form-heading").textContent = "New plan";
  byId("plan-submit").textContent = "Create plan";
  byId("plan-cancel").hidden = true;
}

function planFields() {
  return {
    name: byId("plan-name").value,
    requests_per_minute: wholeNumber(byId("plan-rpm"), "Requests per minute"),
    allowance_questions: wholeNumber(byId("plan-allowance"), "Questions per period"),
    // A euro string, checked exactly by the server: the console does no arithmetic on money.
    price_per_million: byId("plan-price").value.trim(),
  };
}

export function wirePlans(run) {
  byId("plan-cancel").addEventListener("click", stopEditing);
  const form = byId("plan-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const fields = planFields();
      const plan = editing ? await adminApi("PATCH", path`plans/${editing.id}`, fields) : await adminApi("POST", "plans", fields);
      const verb = editing ? "Saved" : "Created";
      stopEditing();
      return `${verb} plan ${plan.name}.`;
    }, form);
  });
}
