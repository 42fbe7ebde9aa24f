// Amounts as a person reads them: every Flock network settles in a USD stablecoin with 6 decimals, so the API's
// atomic units (`"50000"`) are shown as dollars (`$0.05`), the way the SDK's `dollars()` of "@flock/client/payments"
// writes them (at least 2 decimals, as many more as it needs, up to 6). Kept here so that a CLI run that never pays
// loads no x402 package. --json output keeps the API's own fields.

/** 1 dollar is 1,000,000 atomic units. */
const UNITS_PER_DOLLAR = 1_000_000n;

/** Atomic units (a decimal string or bigint, as the API gives them) as dollars: "50000" -> "$0.05". */
export function dollars(units: string | bigint): string {
  const n = typeof units === "bigint" ? units : BigInt(units);
  const abs = n < 0n ? -n : n;
  const frac = (abs % UNITS_PER_DOLLAR).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${n < 0n ? "-" : ""}$${abs / UNITS_PER_DOLLAR}.${frac}`;
}

/** A price the API gives in dollars (a number or a decimal string, such as 0.05) as atomic units. */
export function unitsOfPrice(price: number | string): bigint {
  const [whole = "0", frac = ""] = String(price).split(".");
  if (!/^\d+$/.test(whole) || !/^\d*$/.test(frac)) return BigInt(Math.round(Number(price) * 1_000_000));
  return BigInt(whole) * UNITS_PER_DOLLAR + BigInt(frac.slice(0, 6).padEnd(6, "0"));
}

/** A price in dollars (0.05, "1") written as the SDK writes amounts: "$0.05", "$1.00". */
export const price = (p: number | string) => dollars(unitsOfPrice(p));

/** Atomic units as a plain dollar amount for a flag (`--max 0.05`): no sign, no trailing zeros. */
export const plainDollars = (units: bigint) =>
  dollars(units)
    .slice(1)
    .replace(/\.?0+$/, "");
