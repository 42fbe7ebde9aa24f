// One attachment of a message: an image shown inline, and a download button for any file (fetched with the
// bearer token, then saved under its own name).
import type { Message } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";

type Attachment = NonNullable<Message["attachments"]>[number];

export function AttachmentView({ a }: { a: Attachment }) {
  const { client, fail } = useApp();
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const image = a.content_type.startsWith("image/");

  async function blobUrl(): Promise<string> {
    const res = await client.download(a.id);
    return URL.createObjectURL(await res.blob());
  }
  useEffect(() => {
    if (!image) return;
    let made: string | null = null;
    blobUrl().then(
      (u) => setUrl((made = u)),
      (err: unknown) => setError(fail(err)),
    );
    return () => {
      if (made) URL.revokeObjectURL(made);
    };
  }, [a.id]);

  async function download() {
    try {
      const u = await blobUrl();
      const link = document.createElement("a");
      link.href = u;
      link.download = a.name;
      link.click();
      setTimeout(() => URL.revokeObjectURL(u), 10_000);
    } catch (err) {
      setError(fail(err));
    }
  }

  return (
    <div class="attachment">
      {image && url && <img src={url} alt={a.name} loading="lazy" />}
      <button type="button" class="link" onClick={() => void download()}>
        Download {a.name} ({Math.ceil(a.size / 1024)} KB)
      </button>
      {error && <span role="alert">{error}</span>}
    </div>
  );
}
