import { AdminApiError, adminApi, adminToken, path } from "./api.js";
import { byId, count, el, numberCell, plural, setFacts, showError, when, whenParts } from "./dom.js";
import { accountLink, currentRoute, taskLink } from "./route.js";
import { versionReport } from "./task-report.js";

/**
 * A tenant's tasks (docs/concepts/tasks.md): the list on the account's page, and a task's own
 * view with its fits and each version's report. While a fit runs, what shows it is fetched
 * again every POLL_MS (that part only, without the page's messages being cleared), until no fit
 * runs or the address shows something else.
 */

export const POLL_MS = 1000;

const running = (fit) => fit?.state === "running";

/** "running: 2 of 6 read" with a <progress>, "succeeded", "failed: fit_interrupted". */
export function fitState(fit) {
  if (!fit) return "not fitted";
  if (fit.state === "running") {
    const label = `${count(fit.examples_read)} of ${plural(fit.examples, "example")} read`;
    return [
      el("span", { className: "badge warn" }, "running"),
      " ",
      el("progress", { attrs: { max: fit.examples, value: fit.examples_read, "aria-label": label, title: label } }),
      " ",
      el("span", { className: "nowrap" }, label),
    ];
  }
  if (fit.state === "succeeded")
    return [
      el("span", { className: "badge ok" }, "succeeded"),
      " ",
      el("span", { className: "nowrap" }, `${count(fit.examples_read)} of ${count(fit.examples)}`),
    ];
  return [el("span", { className: "badge bad" }, "failed"), " ", el("span", { className: "sub" }, fit.error ? `${fit.error.code}: ${fit.error.message}` : "")];
}

const problem = (error) => (error instanceof AdminApiError ? `${error.message} (${error.code})` : (error.message ?? String(error)));

/** Polls `load` while `stillShown()`; each answer is drawn by `draw`, which says whether to go on. */
function poller() {
  let timer;
  return (stillShown, load, draw, place) => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (!adminToken.get() || !stillShown()) return;
      let data;
      try {
        data = await load();
      } catch (error) {
        showError(problem(error), place());
        return;
      }
      if (stillShown()) draw(data);
    }, POLL_MS);
  };
}

const pollAccount = poller();
const pollTask = poller();

/** The account page's Tasks table. */
export function drawAccountTasks(accountId, tasks) {
  const rows = tasks.map((task) => taskRow(accountId, task));
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { attrs: { colspan: 6 }, className: "empty" }, "No tasks.")));
  byId("task-rows").replaceChildren(...rows);
  if (!tasks.some((task) => running(task.latest_fit))) return;
  pollAccount(
    () => {
      const route = currentRoute();
      return route.view === "account" && route.id === accountId;
    },
    () => adminApi("GET", path`accounts/${accountId}/tasks`),
    (page) => drawAccountTasks(accountId, page.tasks),
    () => byId("account-tasks"),
  );
}

function taskRow(accountId, task) {
  return el(
    "tr",
    { attrs: { "data-testid": `task-row-${task.name}` } },
    el("td", { className: "text" }, el("a", { attrs: { href: taskLink(accountId, task.id) } }, task.name), el("span", { className: "sub" }, task.id)),
    el("td", { className: "text" }, task.questions.join(", ")),
    numberCell(task.examples),
    el("td", { attrs: { "data-testid": `task-fit-${task.name}` } }, fitState(task.latest_fit)),
    numberCell(task.latest_version === null ? "—" : `v${task.latest_version}`),
    el("td", { className: "when" }, whenParts(task.created_at)),
  );
}

/** The task view: #/accounts/<id>/tasks/<task>. */
export async function drawTask(route) {
  const detail = await adminApi("GET", path`accounts/${route.id}/tasks/${route.task}`);
  drawTaskDetail(route, detail);
}

function drawTaskDetail(route, detail) {
  const { task, fits, versions } = detail;
  byId("task-back").setAttribute("href", accountLink(task.account_id));
  byId("task-heading").textContent = task.name;
  setFacts(byId("task-facts"), [
    ["Id", task.id, "task-id"],
    [
      "Questions",
      Object.entries(task.questions)
        .map(([id, q]) => `${id} (${q.type})`)
        .join(", "),
    ],
    ["Examples", count(task.examples)],
    ["Created", when(task.created_at)],
    ["Latest fit", fitState(fits[0]), "task-latest-fit"],
  ]);
  const rows = fits.map(fitRow);
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { attrs: { colspan: 7 }, className: "empty" }, "Not fitted yet.")));
  byId("task-fit-rows").replaceChildren(...rows);
  // A redraw keeps each version as the operator left it, open or closed; the newest opens first.
  const shown = new Map([...byId("task-versions").querySelectorAll("details[data-version]")].map((d) => [Number(d.dataset.version), d.open]));
  const sameTask = byId("task-versions").dataset.task === task.id;
  byId("task-versions").dataset.task = task.id;
  byId("task-versions").replaceChildren(
    ...(versions.length === 0
      ? [el("p", { className: "hint" }, "No version yet: a version is written when a fit succeeds.")]
      : versions.map((version, i) => versionReport(version, task, sameTask && shown.has(version.version) ? shown.get(version.version) : i === 0))),
  );
  if (!fits.some(running)) return;
  const stillShown = () => {
    const now = currentRoute();
    return now.view === "task" && now.id === route.id && now.task === route.task;
  };
  pollTask(
    stillShown,
    () => adminApi("GET", path`accounts/${route.id}/tasks/${route.task}`),
    (next) => drawTaskDetail(route, next),
    () => byId("task-notes"),
  );
}

function fitRow(fit) {
  return el(
    "tr",
    {},
    el("td", { className: "when" }, whenParts(fit.created_at)),
    el("td", {}, fitState(fit)),
    el("td", { className: "text" }, fit.model),
    numberCell(fit.input_tokens),
    numberCell(fit.charged),
    numberCell(fit.version === null ? "—" : `v${fit.version}`),
    el("td", { className: "when" }, fit.finished_at ? whenParts(fit.finished_at) : "—"),
  );
}

export function wireTasks(run) {
  byId("refresh-task").addEventListener("click", () => run(async () => "Refreshed.", byId("task-notes")));
}
