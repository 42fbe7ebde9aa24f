// The signed-in principal's profile: a person's name, description, who may message them and read receipts, and their
// passkeys (add one, remove one); an agent's name and description.
import type { Passkey, User } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { addPasskey, passkeysSupported } from "./passkey.ts";
import { Alert, When } from "./ui.tsx";

export function Profile() {
  const { client, session, fail } = useApp();
  const human = session.kind === "human";
  const [name, setName] = useState(session.me.display_name);
  const [description, setDescription] = useState("");
  const [policy, setPolicy] = useState<User["accepts_messages_from"]>("friends");
  const [receipts, setReceipts] = useState(true);
  const [keys, setKeys] = useState<Passkey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function load() {
    try {
      if (human) {
        const u = await client.user();
        setName(u.display_name);
        setDescription(u.description);
        setPolicy(u.accepts_messages_from);
        setReceipts(u.read_receipts);
        setKeys((await client.passkeys()).passkeys);
      } else {
        const a = await client.me();
        setName(a.display_name);
        setDescription(a.description);
      }
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void load(), []);

  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      if (human) await client.updateUser({ display_name: name, description, accepts_messages_from: policy, read_receipts: receipts });
      else await client.updateMe({ display_name: name, description });
      setSaved("Saved.");
    } catch (err) {
      setError(fail(err));
    } finally {
      setBusy(false);
    }
  }

  async function newPasskey() {
    setBusy(true);
    setError(null);
    try {
      await addPasskey(client);
      setKeys((await client.passkeys()).passkeys);
      setSaved("Passkey added.");
    } catch (err) {
      setError(err instanceof DOMException && err.name === "NotAllowedError" ? "No passkey was added." : fail(err));
    } finally {
      setBusy(false);
    }
  }

  async function dropPasskey(id: string) {
    setError(null);
    try {
      await client.removePasskey(id);
      setKeys((k) => (k ?? []).filter((p) => p.id !== id));
    } catch (err) {
      setError(fail(err));
    }
  }

  return (
    <section class="page" aria-labelledby="profile-h">
      <h1 id="profile-h">Profile</h1>
      <Alert text={error} onClose={() => setError(null)} />
      {saved && (
        <p role="status" class="muted">
          {saved}
        </p>
      )}
      <form onSubmit={save} class="card">
        <label for="profile-name">Display name</label>
        <input id="profile-name" value={name} maxLength={64} required onInput={(e) => setName(e.currentTarget.value)} />
        <label for="profile-description">About</label>
        <textarea id="profile-description" value={description} maxLength={500} onInput={(e) => setDescription(e.currentTarget.value)} />
        {human && (
          <>
            <label for="profile-policy">Who may start a conversation with you</label>
            <select id="profile-policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value as typeof policy)}>
              <option value="friends">Friends</option>
              <option value="anyone">Anyone</option>
            </select>
            <label class="check">
              <input type="checkbox" checked={receipts} onChange={(e) => setReceipts(e.currentTarget.checked)} /> Let others see when I have read their
              messages
            </label>
          </>
        )}
        <button type="submit" class="primary" disabled={busy}>
          Save profile
        </button>
      </form>
      {human && (
        <section aria-labelledby="passkeys-h" class="card">
          <h2 id="passkeys-h">Passkeys</h2>
          {keys === null ? (
            <p role="status">Loading…</p>
          ) : keys.length === 0 ? (
            <p class="muted">No passkeys yet: add one to sign in without your wallet.</p>
          ) : (
            <ul class="list" aria-label="Your passkeys">
              {keys.map((k, i) => (
                <li key={k.id} data-passkey={k.id}>
                  Passkey {i + 1}, added <When iso={k.created_at} />
                  {k.last_used_at && (
                    <>
                      , last used <When iso={k.last_used_at} />
                    </>
                  )}{" "}
                  <button type="button" class="link" onClick={() => void dropPasskey(k.id)} aria-label={`Remove passkey ${i + 1}`}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <button type="button" onClick={() => void newPasskey()} disabled={busy || !passkeysSupported()}>
            Add a passkey
          </button>
        </section>
      )}
    </section>
  );
}
