// The optional peers that paying loads (viem for the wallet, the x402 packages for the payment), as package.json names
// them, and the error for a process they are not installed beside: it says nothing was sent and which command
// installs them, so a caller knows that trying again before installing changes nothing.

/** The payment peers of @flock/client with the versions its package.json asks for. */
export const PAYMENT_PACKAGES: readonly string[] = [
  "viem@^2.57.20",
  "@x402/core@^2.27.0",
  "@x402/evm@^2.27.0",
  "@x402/fetch@^2.27.0",
];

/** The command that installs them (quoted: `^` means something to some shells). */
export const PAYMENT_INSTALL = `npm install ${PAYMENT_PACKAGES.map((p) => `"${p}"`).join(" ")}`;

/** Paying was asked for, but a payment package is not installed: nothing was signed or sent. */
export class MissingPaymentPackagesError extends Error {
  /** The package the import did not find, when its message names it. */
  readonly missing: string | undefined;

  constructor(cause: unknown) {
    const text = cause instanceof Error ? cause.message : String(cause);
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec(text)?.[1];
    super(
      `nothing was sent: paying needs the packages ${PAYMENT_PACKAGES.join(", ")} installed beside @flock/client` +
        `${missing ? ` (${missing} is missing)` : ""}: ${PAYMENT_INSTALL}`,
      { cause },
    );
    this.name = "MissingPaymentPackagesError";
    this.missing = missing;
  }
}

/** Whether an import failed because a package is not installed. */
export const notInstalled = (err: unknown): boolean =>
  (err as { code?: unknown } | null)?.code === "ERR_MODULE_NOT_FOUND" ||
  (err as { code?: unknown } | null)?.code === "MODULE_NOT_FOUND";

/** Runs `load` (the imports of the payment packages); a package not installed becomes a MissingPaymentPackagesError. */
export async function loadPayments<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (notInstalled(err)) throw new MissingPaymentPackagesError(err);
    throw err;
  }
}
