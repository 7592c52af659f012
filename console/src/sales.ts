import type { SalesFigures, SalesGroup, SalesReport, SalesReportQuery } from "@acme-pets/petstore";
import type { Console } from "./context.js";
import { field, h, put } from "./dom.js";
import { formatMoney, noteCurrency } from "./money.js";

type GroupBy = NonNullable<SalesReportQuery["groupBy"]>;
const groupings: readonly [GroupBy, string][] = [
  ["day", "Day"],
  ["pet", "Pet"],
  ["category", "Category"],
];

/** A UTC day as the API names it, `YYYY-MM-DD`. */
function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The day `days` after `day` (UTC). */
function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return isoDay(date);
}

/** A UTC day as the reader's locale writes it. */
function formatDay(day: string, style: "medium" | "short" = "medium"): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return style === "short"
    ? date.toLocaleDateString(undefined, { timeZone: "UTC", month: "short", day: "numeric" })
    : date.toLocaleDateString(undefined, { timeZone: "UTC", dateStyle: "medium" });
}

/**
 * What the shop sold: a range of days (UTC, as the API counts them), grouped by day, pet
 * or category; the totals, a chart of revenue per day (drawn here from the report, with
 * 0 for the days without orders) and a table of the groups.
 */
export function salesView(ctx: Console): HTMLElement {
  const today = isoDay(new Date());
  const from = h("input", { type: "date", name: "from", required: true, value: addDays(today, -29) });
  const to = h("input", { type: "date", name: "to", required: true, value: today });
  const groupBy = h("select", { name: "groupBy" }, ...groupings.map(([value, label]) => h("option", { value }, label)));
  const show = h("button", { type: "submit" }, "Show");
  const form = h(
    "form",
    { class: "filters", "aria-label": "Sales report" },
    field("From (UTC day)", from),
    field("To (UTC day, included)", to),
    field("Group by", groupBy),
    show,
  );
  const state = h("p", { class: "count", role: "status" });
  const result = h("div", { class: "sales" });

  let generation = 0; // a newer request makes an answer still on its way stale
  async function load(): Promise<void> {
    const mine = ++generation;
    put(state, "Loading…");
    const query: SalesReportQuery = { from: from.value, to: to.value, groupBy: groupBy.value as GroupBy };
    try {
      const report = await ctx.client.sales.report(query);
      if (mine !== generation) return;
      noteCurrency(report.currency);
      put(state, summary(report));
      put(result, ...reportView(report));
    } catch (error) {
      if (mine !== generation) return;
      // A key without sales:read: the screen says so where the report would be.
      const lacked = ctx.lacks(error);
      put(state, lacked === undefined ? "" : `Not shown: this console's key lacks the scope ${lacked || "the report needs"}.`);
      put(result);
      ctx.fail(error);
    }
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (from.value > to.value) {
      ctx.fail(new Error("The first day comes after the last: choose a From on or before To."));
      from.focus();
      return;
    }
    void ctx.run(show, load);
  });
  void load();

  return h(
    "section",
    { "aria-labelledby": "sales-title" },
    h("h1", { id: "sales-title" }, "Sales"),
    h("p", { class: "lead" }, "Orders placed in the range, at the price each was placed at: placed and completed count, cancelled ones are shown apart. Days are UTC."),
    form,
    state,
    result,
  );
}

function summary(report: SalesReport): string {
  const t = report.totals;
  return `${formatDay(report.from)} to ${formatDay(report.to)}: ${t.orders} ${t.orders === 1 ? "order" : "orders"}, ${formatMoney(t.revenue, report.currency)}.`;
}

function reportView(report: SalesReport): HTMLElement[] {
  const parts: HTMLElement[] = [totalsView(report)];
  if (report.groupBy === "day") parts.push(chart(report));
  parts.push(groupsTable(report));
  return parts;
}

function totalsView(report: SalesReport): HTMLElement {
  const t = report.totals;
  const money = (minor: number) => formatMoney(minor, report.currency);
  const item = (term: string, value: string) => h("div", {}, h("dt", {}, term), h("dd", {}, value));
  return h(
    "dl",
    { class: "totals", "aria-label": "Totals" },
    item("Revenue", money(t.revenue)),
    item("Orders", String(t.orders)),
    item("Units", String(t.units)),
    item("Cancelled", `${t.cancelledOrders} (${money(t.cancelledRevenue)})`),
  );
}

/** Every day of the report with its revenue, 0 for a day without orders (the API leaves those out). */
export function revenuePerDay(report: Pick<SalesReport, "from" | "to" | "groups">): [day: string, revenue: number][] {
  const byDay = new Map(report.groups.filter((g) => g.day !== undefined).map((g) => [g.day as string, g.revenue]));
  const days: [string, number][] = [];
  // At most 366 days; the bound keeps a malformed range from looping.
  for (let day = report.from; day <= report.to && days.length < 400; day = addDays(day, 1)) days.push([day, byDay.get(day) ?? 0]);
  return days;
}

const svgNS = "http://www.w3.org/2000/svg";

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number>, ...children: (Node | string)[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(svgNS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

/**
 * Revenue per day as bars, drawn from the report: an SVG in the page (no script or
 * image from elsewhere), scaled to its box. The table below holds the same figures for
 * a screen reader, so the chart is one image with a summary for its name.
 */
function chart(report: SalesReport): HTMLElement {
  const days = revenuePerDay(report);
  const max = Math.max(0, ...days.map(([, revenue]) => revenue));
  const best = days.find(([, revenue]) => revenue === max);
  const width = 720;
  const height = 200;
  const slot = width / Math.max(days.length, 1);
  const bar = Math.max(1, slot * 0.8);
  const label =
    max === 0
      ? `Revenue per day, ${formatDay(report.from)} to ${formatDay(report.to)}: no revenue.`
      : `Revenue per day, ${formatDay(report.from)} to ${formatDay(report.to)}; the highest, ${formatMoney(max, report.currency)}, on ${formatDay(best?.[0] ?? report.from)}.`;
  const graphic = svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, class: "chart", preserveAspectRatio: "none" },
    svg("line", { x1: 0, x2: width, y1: height, y2: height, class: "axis" }),
    ...days.map(([day, revenue], i) => {
      const tall = max === 0 ? 0 : Math.max(revenue > 0 ? 1 : 0, (revenue / max) * height);
      return svg("rect", { x: i * slot + (slot - bar) / 2, y: height - tall, width: bar, height: tall, class: "bar" }, svg("title", {}, `${formatDay(day)}: ${formatMoney(revenue, report.currency)}`));
    }),
  );
  // The labels are text of the page, not of the drawing, so they keep their size when
  // the drawing is squeezed to a phone's width.
  const middle = days.length > 2 ? days[Math.floor((days.length - 1) / 2)] : undefined;
  const axis = h(
    "div",
    { class: "chart-axis", "aria-hidden": "true" },
    h("span", {}, formatDay(days[0]?.[0] ?? report.from, "short")),
    h("span", {}, middle ? formatDay(middle[0], "short") : ""),
    h("span", {}, formatDay(days.at(-1)?.[0] ?? report.to, "short")),
  );
  const peak = h("p", { class: "chart-label", "aria-hidden": "true" }, max === 0 ? "No revenue" : `Highest day: ${formatMoney(max, report.currency)}`);
  return h("figure", { class: "chart-box" }, peak, graphic, axis, h("figcaption", {}, "Revenue per day (days without orders at 0). The table below lists each day that had orders."));
}

function groupName(report: SalesReport, group: SalesGroup): HTMLElement {
  switch (report.groupBy) {
    case "day":
      return h("span", { class: "name" }, formatDay(group.day ?? ""));
    case "pet":
      return h("span", {}, h("span", { class: "name" }, group.petName ?? `Pet #${group.petId ?? "?"}`), " ", h("span", { class: "id" }, group.petId === undefined ? "" : `#${group.petId}`));
    default:
      if (group.categoryId === undefined) return h("span", { class: "name" }, "No category");
      return h("span", {}, h("span", { class: "name" }, group.categoryName ?? "Removed category"), " ", h("span", { class: "id" }, `#${group.categoryId}`));
  }
}

function groupsTable(report: SalesReport): HTMLElement {
  const heading = groupings.find(([value]) => value === report.groupBy)?.[1] ?? "Group";
  const money = (minor: number) => formatMoney(minor, report.currency);
  const cells = (f: SalesFigures) => [
    h("td", { "data-label": "Orders" }, f.orders),
    h("td", { "data-label": "Units" }, f.units),
    h("td", { "data-label": "Revenue", class: "money" }, money(f.revenue)),
    h("td", { "data-label": "Cancelled" }, `${f.cancelledOrders} (${money(f.cancelledRevenue)})`),
  ];
  const caption =
    report.groupBy === "day"
      ? "Each day that had orders, oldest first; days without orders are left out."
      : `The ${heading.toLowerCase() === "pet" ? "pets" : "categories"} with the most revenue first.`;
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "sales-groups" },
      h("caption", {}, caption),
      h(
        "thead",
        {},
        h("tr", {}, h("th", { scope: "col" }, heading), h("th", { scope: "col" }, "Orders"), h("th", { scope: "col" }, "Units"), h("th", { scope: "col" }, "Revenue"), h("th", { scope: "col" }, "Cancelled")),
      ),
      h(
        "tbody",
        {},
        ...(report.groups.length === 0
          ? [h("tr", {}, h("td", { colspan: 5 }, "No orders in this range."))]
          : report.groups.map((group) => h("tr", {}, h("td", { "data-label": heading }, groupName(report, group)), ...cells(group)))),
      ),
    ),
  );
}
