import { count, el, money, numberCell, plural, shortDate, svg } from "./dom.js";

/**
 * An account's current period as two bar charts (questions and euros charged per UTC day),
 * drawn as inline SVG by DOM calls, and the same figures as a table. Each chart's width is the
 * whole period, so the days still to come show as room left; labels are HTML beside the SVG,
 * which stretches to any width without stretching text.
 */

const SLOT = 10;
const HEIGHT = 100;

export function usageChart(usage) {
  const { totals, days } = usage;
  const slots = Math.max(usage.days_in_period, days.length, 1);
  const busiestCharge = days.reduce((best, day) => (day.charged_micro > (best?.charged_micro ?? 0) ? day : best), null);
  const busiestQuestions = Math.max(0, ...days.map((day) => day.questions));
  return [
    el(
      "p",
      { className: "chart-totals", attrs: { "data-testid": "usage-totals" } },
      `So far this period: ${plural(totals.questions, "question")} in ${plural(totals.requests, "request")}, ${money(totals.charged)} charged to the balance.`,
    ),
    el(
      "div",
      { className: "charts" },
      barChart({
        title: "Questions per day",
        kind: "questions",
        usage,
        slots,
        value: (day) => day.questions,
        describe: (day) => plural(day.questions, "question"),
        top: count(busiestQuestions),
      }),
      barChart({
        title: "Euros charged per day",
        kind: "euros",
        usage,
        slots,
        value: (day) => day.charged_micro,
        describe: (day) => money(day.charged),
        top: money(busiestCharge?.charged ?? "0.00"),
      }),
    ),
    dayTable(days),
  ];
}

/**
 * One bar chart over `usage.days` (each with a `date`), `slots` wide: slots past the last day are
 * shaded as days to come. `usage` also names the axis's ends (period_start, period_end).
 */
export function barChart({ title, kind, usage, slots, value, describe, top, testId = `chart-${kind}` }) {
  const { days } = usage;
  const max = Math.max(0, ...days.map(value));
  const bars = days.map((day, i) => {
    const height = max === 0 ? 0 : Math.max((value(day) / max) * (HEIGHT - 4), value(day) > 0 ? 1.5 : 0);
    return svg(
      "rect",
      { className: `bar bar-${kind}`, attrs: { x: i * SLOT + 1.5, y: HEIGHT - height, width: SLOT - 3, height, "data-value": value(day) } },
      svg("title", {}, `${shortDate(day.date)}: ${describe(day)}`),
    );
  });
  const future = svg("rect", {
    className: "chart-future",
    attrs: { x: days.length * SLOT, y: 0, width: Math.max(0, (slots - days.length) * SLOT), height: HEIGHT },
  });
  const baseline = svg("line", { className: "chart-baseline", attrs: { x1: 0, y1: HEIGHT, x2: slots * SLOT, y2: HEIGHT } });
  const summary = max === 0 ? "none yet" : `at most ${top} a day`;
  const chart = svg(
    "svg",
    {
      attrs: {
        viewBox: `0 0 ${slots * SLOT} ${HEIGHT}`,
        preserveAspectRatio: "none",
        role: "img",
        "aria-label": `${title}, ${shortDate(usage.period_start)} to ${shortDate(usage.period_end)}: ${summary}`,
        "data-testid": testId,
      },
    },
    future,
    ...bars,
    baseline,
  );
  return el(
    "figure",
    { className: `chart chart-${kind}` },
    el("figcaption", {}, title),
    el("div", { className: "chart-plot" }, el("span", { className: "chart-top" }, max === 0 ? "" : top), chart),
    el(
      "div",
      { className: "chart-axis" },
      el("span", {}, shortDate(usage.period_start)),
      el("span", {}, slots > days.length ? `${shortDate(usage.period_end)} (shaded: days to come)` : shortDate(usage.period_end)),
    ),
  );
}

function dayTable(days) {
  const rows = days.map((day) =>
    el("tr", {}, el("td", {}, shortDate(day.date)), numberCell(day.requests), numberCell(day.questions), numberCell(day.input_tokens), numberCell(day.charged)),
  );
  return el(
    "details",
    { className: "day-table" },
    el("summary", {}, "Day by day as a table"),
    el(
      "div",
      { className: "table-scroll" },
      el(
        "table",
        {},
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ...["Day", "Requests", "Questions", "Input tokens", "Charged (€)"].map((text, i) =>
              el("th", { attrs: { scope: "col" }, className: i ? "number" : "" }, text),
            ),
          ),
        ),
        el("tbody", {}, ...rows),
      ),
    ),
  );
}
