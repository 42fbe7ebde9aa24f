// A person's wallets in Profile: the ones linked (POST /v1/users/me/wallets), and linking the injected wallet (it
// shares an account, then signs the server's challenge). A linked wallet the browser holds pays paid agents: the
// session learns its address at once.
import type { User } from "@flock/client";
import { useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { injectedWallet, personalSign, requestAccount } from "./wallet.ts";

export function Wallets({
  wallets,
  onLinked,
  onError,
}: {
  /** The person's wallets; null while loading. */
  wallets: User["wallets"] | null;
  onLinked(user: User): void;
  onError(text: string): void;
}) {
  const { client, session, updateSession, fail } = useApp();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const hasWallet = injectedWallet() !== null;

  async function link() {
    setBusy(true);
    setDone(null);
    try {
      const address = await requestAccount();
      const user = await client.addWallet(address, (message) => personalSign(address, message));
      updateSession({ address });
      onLinked(user);
      setDone("Wallet linked: you can pay paid agents with it, and sign in with it.");
    } catch (err) {
      onError(fail(err));
    } finally {
      setBusy(false);
    }
  }

  const paying = session.address?.toLowerCase();
  return (
    <section aria-labelledby="wallets-h" class="card">
      <h2 id="wallets-h">Wallets</h2>
      {wallets === null ? (
        <p role="status">Loading…</p>
      ) : wallets.length === 0 ? (
        <p class="muted">No wallet yet: link one to pay paid agents and to sign in with it.</p>
      ) : (
        <ul class="list" aria-label="Your wallets">
          {wallets.map((w) => (
            <li key={w.address} data-wallet={w.address}>
              <code style={{ overflowWrap: "anywhere" }}>{w.address}</code>
              {w.address.toLowerCase() === paying && <span class="muted"> (pays from this browser)</span>}
            </li>
          ))}
        </ul>
      )}
      {done && (
        <p role="status" class="muted">
          {done}
        </p>
      )}
      <button type="button" onClick={() => void link()} disabled={busy || !hasWallet}>
        Link a wallet
      </button>
      {!hasWallet && <p class="muted hint">No browser wallet found: install one to link it here.</p>}
    </section>
  );
}
