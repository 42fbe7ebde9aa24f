// One attachment of a message: an image shown inline, and a download button for any file (fetched with the
// bearer token, then saved under its own name); and the files picked for the next message, each with its size and a
// preview of a picture.
import type { Message } from "@flock/client";
import { useEffect, useMemo, useState } from "preact/hooks";
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
        Download {a.name} ({fileSize(a.size)})
      </button>
      {error && <span role="alert">{error}</span>}
    </div>
  );
}

/** A file's size for people: bytes below 1 KB ("26 B"), then KB and MB (one decimal below 10). */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [n, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KB"] : [bytes / (1024 * 1024), "MB"];
  return `${n < 10 ? n.toFixed(1).replace(/\.0$/, "") : Math.round(n)} ${unit}`;
}

/** The files picked for the next message: name and size, and a small preview of each picture. */
export function Picked({ files }: { files: readonly File[] }) {
  const urls = useMemo(() => files.map((f) => (f.type.startsWith("image/") ? URL.createObjectURL(f) : null)), [files]);
  useEffect(() => () => urls.forEach((u) => u && URL.revokeObjectURL(u)), [urls]);
  if (files.length === 0) return null;
  return (
    <ul class="picked" aria-label="Files to send">
      {files.map((f, i) => (
        <li key={`${f.name}-${i}`}>
          {urls[i] && <img src={urls[i]} alt={f.name} />}
          <span>
            {f.name} ({fileSize(f.size)})
          </span>
        </li>
      ))}
    </ul>
  );
}
