// Amounts as the API carries them: integers in the minor unit of the shop's currency
// (1999 is 19.99 EUR; a currency without a minor unit, such as JPY, counts whole units).
// The digits of a currency are Intl's (ISO 4217), so no table here can drift from it.

/** The shop's currency, as the last answer that carried one said it (one per shop). */
let shop: string | undefined;

/** Notes the shop's currency from an answer (a pet with a price, an order, a report). */
export function noteCurrency(currency: string | undefined): void {
  if (currency) shop = currency;
}

/** The shop's currency, once an answer told it. */
export function shopCurrency(): string | undefined {
  return shop;
}

/** The digits of the currency's minor unit: 2 for EUR, 0 for JPY (2 when not known). */
export function minorDigits(currency: string | undefined): number {
  if (!currency) return 2;
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2; // not a code Intl knows
  }
}

/** An amount in minor units as the reader's locale writes money: "€19.99", "19,99 €". */
export function formatMoney(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  const value = minor / 10 ** digits;
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
  } catch {
    return `${value.toFixed(digits)} ${currency}`;
  }
}

/** An amount for an input: "19.99" for 1999 EUR (a dot, as the field reads it back). */
export function moneyInput(minor: number | undefined, currency: string | undefined): string {
  if (minor === undefined) return "";
  const digits = minorDigits(currency);
  return (minor / 10 ** digits).toFixed(digits);
}

/**
 * Reads an amount typed in major units ("19.99", "19,99", "20") into minor units.
 * Empty is `null` (no price); anything else that is not an amount with at most the
 * currency's digits is an Error saying what to type.
 */
export function parseMoney(text: string, currency: string | undefined): number | null {
  const value = text.trim().replace(/\s/g, "");
  if (value === "") return null;
  const digits = minorDigits(currency);
  const match = /^(\d+)(?:[.,](\d*))?$/.exec(value);
  const fraction = match?.[2] ?? "";
  if (match === null || fraction.length > digits) {
    const example = digits === 0 ? "20" : `19.${"9".repeat(digits)}`;
    throw new Error(`"${text.trim()}" is not a price: type an amount such as ${example}${currency ? ` ${currency}` : ""}, or leave it empty for no price.`);
  }
  return Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0");
}
