// Tables that become cards on a phone: cards(table) gives the table the
// class "stacked" (app.css: below 40rem each row is a card of its cells, each
// labelled by its column) and labels each body cell with its column's
// header (data-label), now and whenever rows are added. It also gives the
// parts their ARIA roles, since a table whose display CSS changed may no
// longer be read as one.

/**
 * Makes table a table of cards on a narrow screen; returns it.
 * @param {HTMLTableElement} table
 * @returns {HTMLTableElement}
 */
export function cards(table) {
  table.classList.add("stacked");
  table.setAttribute("role", "table");
  const label = () => {
    const heads = [...(table.tHead?.rows[0]?.cells ?? [])].map((c) => c.textContent?.trim() ?? "");
    for (const group of [table.tHead, ...table.tBodies]) group?.setAttribute("role", "rowgroup");
    for (const c of table.tHead?.rows[0]?.cells ?? []) c.setAttribute("role", "columnheader");
    for (const body of table.tBodies) {
      for (const row of body.rows) {
        row.setAttribute("role", "row");
        [...row.cells].forEach((cell, i) => {
          if (cell.tagName === "TH") {
            cell.setAttribute("role", "rowheader");
          } else {
            cell.setAttribute("role", "cell");
            if (!cell.dataset.label && heads[i]) cell.dataset.label = heads[i];
          }
        });
      }
    }
  };
  label();
  new MutationObserver(label).observe(table, { childList: true, subtree: true });
  return table;
}
