/**
 * Every table of the console, made readable on a phone: each body cell is labelled with its
 * column's heading (data-label), which the narrow layout of console.css shows beside the value
 * when rows stack as cards. Done here once, for every table and every redraw, so the views that
 * fill the tables need not know about it.
 */

function labelRows(table) {
  const headings = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    let column = 0;
    for (const cell of row.cells) {
      const heading = headings[column] ?? "";
      // The action column's heading is for screen readers only; a button says what it does.
      if (heading && !cell.hasAttribute("colspan") && !table.querySelectorAll("thead th")[column]?.querySelector(".visually-hidden")) {
        cell.dataset.label = heading;
      }
      column += cell.colSpan;
    }
  }
}

export function labelTableCells(root = document) {
  for (const table of root.querySelectorAll("table")) labelRows(table);
  new MutationObserver((changes) => {
    const tables = new Set(changes.map((change) => change.target.closest?.("table")).filter(Boolean));
    // Tables drawn whole (a task's report) arrive inside the nodes added.
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        if (node.matches("table")) tables.add(node);
        for (const table of node.querySelectorAll("table")) tables.add(table);
      }
    }
    for (const table of tables) labelRows(table);
  }).observe(root.body ?? root, { childList: true, subtree: true });
}
