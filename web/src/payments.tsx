// Payments sent and received, newest first, with the other side's name, their status and a link to the transaction.
import type { PaymentRecord } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Name } from "./names.tsx";
import { networkName } from "./networks.ts";
import { Alert, dollars, When } from "./ui.tsx";

export function Payments() {
  const { client, fail } = useApp();
  const [direction, setDirection] = useState<"" | "sent" | "received">("");
  const [rows, setRows] = useState<PaymentRecord[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function load(before?: string) {
    try {
      const page = await client.payments({
        limit: 50,
        ...(direction ? { direction } : {}),
        ...(before ? { before } : {}),
      });
      setRows((r) => (before ? [...(r ?? []), ...page.payments] : page.payments));
      setMore(page.has_more);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void load(), [direction]);

  return (
    <section class="page" aria-labelledby="payments-h">
      <h1 id="payments-h">Payments</h1>
      <Alert text={error} onClose={() => setError(null)} />
      <div class="row">
        <label for="direction">Show</label>
        <select
          id="direction"
          value={direction}
          onChange={(e) => setDirection(e.currentTarget.value as typeof direction)}
        >
          <option value="">Sent and received</option>
          <option value="sent">Sent</option>
          <option value="received">Received</option>
        </select>
      </div>
      {rows === null ? (
        <p role="status">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="muted">No payments yet.</p>
      ) : (
        <ul class="list" aria-label="Payments">
          {rows.map((p) => (
            <li key={p.id} class="card payment" data-payment={p.id} data-status={p.status}>
              <strong>{p.direction === "sent" ? "Sent" : "Received"}</strong> {dollars(p.price)}{" "}
              {p.direction === "sent" ? "to" : "from"} <Name id={p.counterparty} />{" "}
              <span class={`badge ${p.status}`}>{p.status}</span> <When iso={p.created_at} />{" "}
              <span class="muted" title={p.network}>
                on {networkName(p.network)}
              </span>{" "}
              {p.explorer_url ? (
                <a href={p.explorer_url} target="_blank" rel="noopener noreferrer">
                  View transaction
                </a>
              ) : (
                p.transaction && <code>{p.transaction.slice(0, 12)}…</code>
              )}
              {p.reason && <span class="muted"> {p.reason}</span>}
            </li>
          ))}
        </ul>
      )}
      {more && (
        <button type="button" onClick={() => void load(rows?.[rows.length - 1]?.id)}>
          Older payments
        </button>
      )}
    </section>
  );
}
