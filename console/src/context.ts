import { PetstoreError, type Category, type CurrentAccount, type Event as PetstoreEvent, type PageIterator, type Petstore, type StreamEventsQuery } from "@acme-pets/petstore";
import { h, put } from "./dom.js";
import type { AccountNames } from "./lookup.js";
import type { Rules } from "./rules.js";
import type { ScopeCatalogue } from "./scopes.js";

/** What every view of the signed-in console shares. */
export interface Console {
  client: Petstore;
  /** The signed-in account, with the key the console calls with (its scopes). */
  account: CurrentAccount;
  /** The key the console is signed in with (to mark it among the account's keys). */
  apiKey: string;
  /** The store's rules and the fields' limits, as the service's document states them. */
  rules: Rules;
  /** Says that something worked, in the page's status line. */
  done(message: string): void;
  /** Shows what went wrong: the API's message, or back to sign-in when the key is refused. */
  fail(error: unknown): void;
  /** Runs an action started by `button`: the button is disabled meanwhile, errors go to `fail`. */
  run(button: HTMLButtonElement | null, action: () => Promise<void>): Promise<void>;
  /** Every category by id, loaded once and again after a change to categories. */
  categories(): Promise<Map<number, Category>>;
  /** Forgets the loaded categories (after adding, renaming or removing one). */
  categoriesChanged(): void;
  /** The emails of the accounts behind orders, looked up a page at a time and kept for the session. */
  accounts: AccountNames;
  /**
   * Whether the console's key may call the document's operation `operationId` (it holds
   * the scopes of the operation's `x-scopes`): a control or a screen is offered only then.
   */
  may(operationId: string): boolean;
  /** The scopes of the service's document (refused when it lists none). */
  scopes(): Promise<ScopeCatalogue>;
  /**
   * For a call the service refused because the key lacks a scope: that scope ("" when the
   * answer did not name it); for any other error, undefined.
   */
  lacks(error: unknown): string | undefined;
  /**
   * Calls `onEvent` with each event of the live stream (`events.stream`, fetch streaming:
   * EventSource cannot send the key) while the screen that asked is shown; nothing when the
   * key may not read the stream. The stream resumes after a dropped connection by itself;
   * `onOpen` is called when it is open (events from then on are not missed), first and
   * after each reconnection.
   */
  live(onEvent: (event: PetstoreEvent) => void, onOpen?: () => void, query?: StreamEventsQuery): void;
}

/**
 * How an error reads on the page: the API's message, with what is wrong with which field.
 * `lacked` is the scope a refused call lacked (see `Console.lacks`): the message names it
 * and says what to do.
 */
export function describe(error: unknown, lacked?: string): string {
  if (lacked !== undefined) {
    return lacked
      ? `Not allowed with this key: it lacks the scope ${lacked}. Sign in with a key that has ${lacked} to do this.`
      : `${error instanceof Error ? error.message : String(error)} Sign in with a key that has that scope to do this.`;
  }
  if (error instanceof PetstoreError) {
    const details = error.details.map((d) => `${d.field}: ${d.problem}`).join("; ");
    return details ? `${error.message} (${details})` : error.message;
  }
  if (error instanceof TypeError && /fetch|network/i.test(error.message)) {
    // What fetch throws when the service cannot be reached ("Failed to fetch",
    // "NetworkError when attempting to fetch resource", "Load failed" aside).
    return `The service could not be reached (${error.message}). Check the connection and try again.`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * A list shown a page at a time through the API's cursors: the first page on `reload`, the
 * next one (the `rel="next"` link) when the reader asks for more. It knows the items on
 * the page by id, so that one the reader added here is not shown again when the page of
 * the list that holds it arrives, and the count is of the rows shown.
 */
export class Pages<T> {
  readonly footer: HTMLElement;
  private readonly more: HTMLButtonElement;
  private readonly count: HTMLElement;
  private iterator: PageIterator<T> | undefined;
  private readonly shown = new Set<number | string>(); // the ids of the items on the page
  private generation = 0; // a reload while a page is on its way makes that page stale

  /**
   * `add` shows a page's items; when it awaits something first (the pets' stock, say), it
   * must add nothing once `stale()` is true: the list was reloaded meanwhile.
   */
  constructor(
    private readonly ctx: Console,
    private readonly noun: [one: string, many: string],
    private readonly id: (item: T) => number | string,
    private readonly open: () => PageIterator<T>,
    private readonly clear: () => void,
    private readonly add: (items: T[], stale: () => boolean) => Promise<void> | void,
  ) {
    this.more = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => void this.next() }, "Load more");
    // Focus goes to the count when "Load more" goes away under it (the last page came).
    this.count = h("span", { class: "count", role: "status", tabindex: "-1" });
    this.footer = h("div", { class: "pager" }, this.count, this.more);
  }

  /** Starts again from the first page (after a filter changed, or to see what others did). */
  async reload(): Promise<void> {
    this.generation++;
    void this.iterator?.return(undefined).catch(() => {});
    this.iterator = this.open();
    this.shown.clear();
    this.more.hidden = true;
    this.clear();
    await this.next();
  }

  /** An item more on the page (the reader added it here). */
  added(item: T): void {
    this.shown.add(this.id(item));
    this.showCount(!this.more.hidden);
  }

  /** An item fewer on the page (it was removed or no longer matches). */
  removed(item: T): void {
    this.shown.delete(this.id(item));
    this.showCount(!this.more.hidden);
  }

  private async next(): Promise<void> {
    const generation = this.generation;
    const stale = () => generation !== this.generation;
    const iterator = this.iterator;
    if (iterator === undefined) return;
    const hadFocus = document.activeElement === this.more;
    this.more.disabled = true;
    put(this.count, "Loading…");
    try {
      const step = await iterator.next();
      if (stale()) return;
      const page = step.done ? { items: [], hasNext: false } : step.value;
      const items = page.items.filter((item) => !this.shown.has(this.id(item)));
      await this.add(items, stale);
      if (stale()) return;
      for (const item of items) this.shown.add(this.id(item));
      this.showCount(page.hasNext);
    } catch (error) {
      if (stale()) return;
      // A key without the list's scope: the screen says so where the list would be.
      const lacked = this.ctx.lacks(error);
      put(this.count, lacked === undefined ? "" : `Not shown: this console's key lacks the scope ${lacked || "this list needs"}.`);
      this.ctx.fail(error);
    } finally {
      if (!stale()) {
        this.more.disabled = false;
        if (hadFocus && (document.activeElement === null || document.activeElement === document.body)) (this.more.hidden ? this.count : this.more).focus();
      }
    }
  }

  private showCount(hasNext: boolean): void {
    const [one, many] = this.noun;
    const n = this.shown.size;
    this.more.hidden = !hasNext;
    put(this.count, n === 0 ? `No ${many}.` : `${n} ${n === 1 ? one : many}${hasNext ? ", more to load" : ""}.`);
  }
}
