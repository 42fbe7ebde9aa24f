// The signed-in principal's profile: its picture (choose an image, or remove it; initials stand in without one), a
// person's name, description, who may message them and read receipts, and their passkeys (add one, remove one); an
// agent's name and description. A person's wallets too (profile-wallets.tsx). A saved name is the session's at once
// (the header, the next moment) and the names remembered for ids.
import type { Passkey, User } from "@flock/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Avatar } from "./avatar.tsx";
import { addPasskey, passkeyHostProblem, passkeysSupported } from "./passkey.ts";
import { Wallets } from "./profile-wallets.tsx";
import { PasskeyHostNote } from "./signin.tsx";
import { Alert, When } from "./ui.tsx";

interface Pictured {
  display_name?: string;
  avatar_url?: string | null;
}

/** The picture's address, where the server gives one. */
const pictureOf = (p: object): string | null =>
  "avatar_url" in p && typeof p.avatar_url === "string" ? p.avatar_url : null;

export function Profile() {
  const { client, session, updateSession, fail, people } = useApp();
  const human = session.kind === "human";
  const [name, setName] = useState(session.me.display_name);
  const [description, setDescription] = useState("");
  const [policy, setPolicy] = useState<User["accepts_messages_from"]>("friends");
  const [receipts, setReceipts] = useState(true);
  const [keys, setKeys] = useState<Passkey[] | null>(null);
  const [wallets, setWallets] = useState<User["wallets"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // the form waits for the profile as the API has it: typed or saved before, its fields would be overwritten by the
  // answer, or would save the empty defaults over what the API keeps
  const [loaded, setLoaded] = useState(false);
  const [loadFailed, setLoadFailed] = useState(false);
  const [avatar, setAvatar] = useState<string | null>(null);
  const picker = useRef<HTMLInputElement>(null);

  async function load() {
    setLoadFailed(false);
    let ready = loaded;
    try {
      if (human) {
        const u = await client.user();
        setName(u.display_name);
        setDescription(u.description);
        setPolicy(u.accepts_messages_from);
        setReceipts(u.read_receipts);
        setAvatar(pictureOf(u));
        setWallets(u.wallets);
        setLoaded((ready = true));
        setKeys((await client.passkeys()).passkeys);
      } else {
        const a = await client.me();
        setName(a.display_name);
        setDescription(a.description);
        setAvatar(pictureOf(a));
      }
      setLoaded(true);
    } catch (err) {
      setError(fail(err));
      setLoadFailed(!ready);
    }
  }
  useEffect(() => void load(), []);

  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const me = human
        ? await client.updateUser({
            display_name: name,
            description,
            accepts_messages_from: policy,
            read_receipts: receipts,
          })
        : await client.updateMe({ display_name: name, description });
      updateSession({ me: { id: session.me.id, display_name: me.display_name } });
      people.learn([{ id: session.me.id, display_name: me.display_name, avatar_url: pictureOf(me) }]);
      setSaved("Saved.");
    } catch (err) {
      setError(fail(err));
    } finally {
      setBusy(false);
    }
  }

  /** Sets the picture (an uploaded image's file id) or removes it (null). */
  async function setPicture(file: string | null) {
    const r = await client.http.request<{ user?: Pictured; agent?: Pictured }>(
      "PATCH",
      human ? "/v1/users/me" : "/v1/agents/me",
      { json: { avatar: file } },
    );
    const me = r.user ?? r.agent;
    const url = me ? pictureOf(me) : null;
    setAvatar(url);
    people.learn([{ id: session.me.id, display_name: me?.display_name ?? session.me.display_name, avatar_url: url }]);
  }

  async function choose(f: File | undefined) {
    if (!f) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      if (!f.type.startsWith("image/")) throw new Error("Choose an image (PNG, JPEG, GIF or WebP).");
      if (f.size > 1024 * 1024) throw new Error("That image is over 1 MB: choose a smaller one.");
      const up = await client.upload(f, { name: f.name, contentType: f.type });
      await setPicture(up.id);
      setSaved("Picture saved.");
    } catch (err) {
      setError(fail(err));
    } finally {
      setBusy(false);
      if (picker.current) picker.current.value = "";
    }
  }

  async function removePicture() {
    setBusy(true);
    setError(null);
    try {
      await setPicture(null);
      setSaved("Picture removed.");
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
      <section aria-labelledby="picture-h" class="card picture">
        <h2 id="picture-h">Picture</h2>
        <div class="row">
          <Avatar
            who={{ id: session.me.id, display_name: name || session.me.display_name, avatar_url: avatar }}
            size={72}
            latest={false}
            label={avatar ? "Your picture" : "Your initials (no picture yet)"}
          />
          <input
            id="avatar-file"
            class="sr-only"
            type="file"
            accept="image/png,image/jpeg,image/gif,image/webp"
            ref={picker}
            disabled={busy}
            onChange={(e) => void choose(e.currentTarget.files?.[0])}
          />
          <label for="avatar-file" class="button">
            {avatar ? "Change picture" : "Choose a picture"}
          </label>
          {avatar && (
            <button type="button" onClick={() => void removePicture()} disabled={busy}>
              Remove picture
            </button>
          )}
        </div>
        <p class="muted hint">An image up to 1 MB; everyone who sees your name sees it.</p>
      </section>
      {loadFailed && (
        <p>
          Your profile could not be read, so it cannot be edited yet.{" "}
          <button type="button" onClick={() => void load()}>
            Try again
          </button>
        </p>
      )}
      <form onSubmit={save} class="card stack" aria-busy={!loaded}>
        <label for="profile-name">Display name</label>
        <input
          id="profile-name"
          value={name}
          maxLength={64}
          required
          disabled={!loaded}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label for="profile-description">About</label>
        <textarea
          id="profile-description"
          value={description}
          maxLength={500}
          disabled={!loaded}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        {human && (
          <>
            <label for="profile-policy">Who may start a conversation with you</label>
            <select
              id="profile-policy"
              value={policy}
              disabled={!loaded}
              onChange={(e) => setPolicy(e.currentTarget.value as typeof policy)}
            >
              <option value="friends">Friends</option>
              <option value="anyone">Anyone</option>
            </select>
            <label class="check">
              <input
                type="checkbox"
                checked={receipts}
                disabled={!loaded}
                onChange={(e) => setReceipts(e.currentTarget.checked)}
              />{" "}
              Let others see when I have read their messages
            </label>
          </>
        )}
        <button type="submit" class="primary" disabled={busy || !loaded}>
          Save profile
        </button>
      </form>
      {human && (
        <Wallets wallets={wallets} onLinked={(u) => setWallets(u.wallets)} onError={(text) => setError(text)} />
      )}
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
                  <button
                    type="button"
                    class="link"
                    onClick={() => void dropPasskey(k.id)}
                    aria-label={`Remove passkey ${i + 1}`}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <button
            type="button"
            onClick={() => void newPasskey()}
            disabled={busy || !passkeysSupported() || passkeyHostProblem() !== null}
          >
            Add a passkey
          </button>
          <PasskeyHostNote />
        </section>
      )}
    </section>
  );
}
