import { el, money, numberCell } from "./dom.js";

/**
 * The period's judgments by the model that answered (docs/engines/many-models.md): a small table under
 * the usage chart, shown once the period saw more than one model (a single-model server's page
 * is unchanged). `questions` are allowance units: questions × the model's price multiplier.
 */
export function modelUsageTable(byModel) {
  if (!byModel || byModel.length < 2) return [];
  const head = el("tr", {}, ...["Model", "Requests", "Allowance units", "Input tokens", "Charged"].map((t) => el("th", {}, t)));
  const rows = byModel.map((m) =>
    el(
      "tr",
      {},
      el("td", {}, m.model ?? "(before models were recorded)"),
      numberCell(m.requests),
      numberCell(m.questions),
      numberCell(m.input_tokens),
      numberCell(money(m.charged)),
    ),
  );
  return [
    el(
      "table",
      { className: "model-usage", attrs: { "data-testid": "usage-by-model" } },
      el("caption", {}, "This period by model"),
      el("thead", {}, head),
      el("tbody", {}, ...rows),
    ),
  ];
}
